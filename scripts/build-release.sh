#!/usr/bin/env bash
# Release builds as installed: the Swift runtime linked statically (no Swift shared libraries
# on the device), linked with lld using packed relative relocations (DT_RELR, glibc >= 2.36,
# Debian 12) and a function order (link/orientd.order) that puts the code orientd runs next to
# each other. Both cut the pages the daemon keeps resident: see docs/benchmark.md "Memory".
#
#   scripts/build-release.sh [PRODUCT...]
#       (default: orientd orientd-rotate orientcam orientcam-libcamera orientd-face;
#       orientcam-libcamera is orientcam's libcamera plugin, liborientcam-libcamera.so)
set -euo pipefail
cd "$(dirname "$0")/.."
products=("$@")
[ ${#products[@]} -gt 0 ] || products=(orientd orientd-rotate orientcam orientcam-libcamera orientd-face)
for product in "${products[@]}"; do
  # Identical code folding and section garbage collection drop duplicate generic
  # specialisations and unreferenced functions (orientd: 4.9 -> 4.7 MiB of its executable
  # resident, together with -Osize; docs/benchmark.md "Memory").
  flags=(-c release --static-swift-stdlib --product "$product"
    -Xswiftc -use-ld=lld -Xlinker -z -Xlinker pack-relative-relocs
    -Xlinker --icf=all -Xlinker --gc-sections)
  # The daemon has no hot loop worth unrolling (a few readings a second): size over speed.
  # orientcam keeps -O for its image paths. (Different flags rebuild the shared modules.)
  if [ "$product" = orientd ]; then
    flags+=(-Xswiftc -Osize)
    # The C++ runtime the Swift runtime needs, linked statically: the dynamic libstdc++ and
    # libgcc_s cost the daemon about 1 MiB resident (mostly their symbol tables, read by the
    # dynamic linker), their static archives about 70 KiB of code. The toolchain's link line
    # asks for -lstdc++; a folder searched before GCC's, holding only libstdc++.a, makes that
    # the archive (-Xswiftc: SwiftPM puts these -L before the compiler driver's own).
    static_cxx=$PWD/.build/static-cxx
    mkdir -p "$static_cxx"
    ln -sfn "$(c++ -print-file-name=libstdc++.a)" "$static_cxx/libstdc++.a"
    flags+=(-Xswiftc "-L$static_cxx" -Xswiftc -Xclang-linker -Xswiftc -static-libgcc)
    # The toolchain exports every symbol of the executable (-export-dynamic, for Swift
    # libraries loaded at run time; orientd loads none): 380 KiB of dynamic symbol tables
    # that the dynamic linker searches first for every library's symbols, so all resident.
    flags+=(-Xlinker --no-export-dynamic)
    # One section per function (SwiftPM emits one .text per source file): lets --gc-sections
    # drop unused functions and the order file place each function, not each file.
    flags+=(-Xswiftc -Xfrontend -Xswiftc -function-sections)
  fi
  if [ -f "link/$product.order" ]; then
    # Symbols the order names that no longer exist are ignored (the order is a hint).
    flags+=(-Xlinker "--symbol-ordering-file=$PWD/link/$product.order"
      -Xlinker --no-warn-symbol-ordering)
  fi
  swift build "${flags[@]}" 2>&1 | grep -v 'prohibited flag(s): -D_REENTRANT' | tail -n 1
  if [ "$product" = orientcam-libcamera ]; then
    # SwiftPM links every dynamic library product against the Swift runtime (swiftrt.o's image
    # registration and libswiftCore.so), even one without Swift in it. An installed system has
    # no libswiftCore.so (the executables carry the runtime statically), so dlopen would fail:
    # the plugin is C++, linked again here from SwiftPM's object with only what it uses.
    rel=$(swift build -c release --show-bin-path)
    c++ -shared -o "$rel/liborientcam-libcamera.so" "$rel/LibcameraBridge.build/bridge.cpp.o" \
      -Wl,--as-needed -Wl,-z,relro -Wl,-z,now -Wl,--build-id -Wl,--gc-sections \
      $(pkg-config --libs libcamera)
    if readelf -d "$rel/liborientcam-libcamera.so" | grep -q 'NEEDED.*libswift'; then
      echo "build-release: liborientcam-libcamera.so still needs the Swift runtime" >&2
      exit 1
    fi
  fi
  if [ "$product" = orientd ]; then
    # One String.contains("...") or firstRange(of:) anywhere in the daemon's modules links
    # _StringProcessing and _RegexParser back in (200 KiB resident; docs/benchmark.md
    # "Memory"): refuse the build and say where, rather than let the footprint creep back.
    exe="$(swift build -c release --show-bin-path)/orientd"
    if nm "$exe" | grep '_StringProcessing\|_RegexParser' >/dev/null; then
      echo "build-release: orientd links _StringProcessing again: a string search in its" \
        "modules uses the standard library's contains(_:)/firstRange(of:); use TextFormats'" \
        "containsText/firstTextRange (find it with: swift build -c release ... -Xlinker" \
        "--why-extract=why.txt, then grep StringProcessing why.txt)" >&2
      exit 1
    fi
  fi
done
