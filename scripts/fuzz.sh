#!/usr/bin/env bash
# Builds and runs the libFuzzer targets in fuzz/targets/ (see fuzz/README.md).
#
#   scripts/fuzz.sh --build [TARGET...]        build only
#   scripts/fuzz.sh --ci [TARGET...]           every target for FUZZ_CI_SECONDS (default 20) each,
#                                              FUZZ_JOBS (default 2) at a time; fails on a crash
#   scripts/fuzz.sh --long SECONDS [TARGET...] the long run, same rules, prints the figures table
#   scripts/fuzz.sh --run TARGET [ARGS...]     run one target by hand (libFuzzer arguments, or
#                                              input files to replay, e.g. a saved crash)
#   scripts/fuzz.sh --list                     the targets
#
# Targets are built with swiftc directly, not SwiftPM: each module a target imports (and the
# modules those depend on, read from `swift package dump-package`) is compiled from its sources
# with -sanitize=fuzzer,address into build-fuzz/, C system libraries come in through their
# module maps and pkg-config, and CLinuxShims is compiled with clang. Inputs libFuzzer finds go
# to build-fuzz/corpus/TARGET (the committed seeds in fuzz/corpus/TARGET are only read); a
# crashing input is copied to fuzz/crashes/ and the run fails.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
OUT=$ROOT/build-fuzz
JOBS=${FUZZ_JOBS:-2}
CI_SECONDS=${FUZZ_CI_SECONDS:-20}
# Swift's own crash handler runs inside the sanitizer's report and only adds noise there.
export SWIFT_BACKTRACE=enable=no
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0:symbolize=1}

die() { echo "fuzz: $*" >&2; exit 1; }

all_targets() { for f in fuzz/targets/*.swift; do basename "$f" .swift; done; }

# --- the module graph, from the package manifest -------------------------------------------
declare -A KIND DEPS PKG SRCDIR
load_manifest() {
  local name kind pkg path deps
  while IFS='|' read -r name kind pkg path deps; do
    KIND[$name]=$kind
    PKG[$name]=$pkg
    DEPS[$name]=$deps
    SRCDIR[$name]=${path:-Sources/$name}
  done < <(swift package dump-package 2>/dev/null | jq -r '.targets[] |
      [.name, .type, (.pkgConfig // ""), (.path // ""),
       ([.dependencies[] | (.byName // .target // .product)[0]] | join(" "))] | join("|")')
  [ ${#KIND[@]} -gt 0 ] || die "could not read the package manifest (swift package dump-package)"
}

# Modules a target file needs, dependencies first (a topological order).
declare -A SEEN
ORDER=()
visit() {
  local m=$1
  [ -n "${SEEN[$m]:-}" ] && return
  SEEN[$m]=1
  local d
  for d in ${DEPS[$m]}; do visit "$d"; done
  ORDER+=("$m")
}
modules_for() {
  SEEN=()
  ORDER=()
  local m
  for m in $(sed -n 's/^import \([A-Za-z0-9_]*\).*/\1/p' "fuzz/targets/$1.swift"); do
    [ -n "${KIND[$m]:-}" ] && visit "$m"
  done
  echo "${ORDER[@]}"
}

# --- building ------------------------------------------------------------------------------
SWIFT_FLAGS=(-swift-version 6 -O -g -sanitize=fuzzer,address -parse-as-library)
system_flags() {  # include paths of every system library module (cheap, and order-free)
  local m flags=()
  for m in "${!KIND[@]}"; do
    if [ "${KIND[$m]}" = system ]; then
      flags+=(-I "$ROOT/${SRCDIR[$m]}")
      local f
      for f in $(pkg-config --cflags-only-I "${PKG[$m]}" 2>/dev/null); do flags+=(-Xcc "$f"); done
    fi
  done
  flags+=(-I "$OUT/modules" -I "$OUT/modules/CLinuxShims")
  echo "${flags[@]}"
}

newer_than() {  # whether any file under $2... is newer than $1 (or $1 is missing)
  local stamp=$1
  shift
  [ -e "$stamp" ] || return 0
  [ -n "$(find "$@" -newer "$stamp" -type f -print -quit)" ]
}

build_module() {
  local m=$1
  local src=$ROOT/${SRCDIR[$m]}
  case "${KIND[$m]}" in
    system) return ;;
  esac
  if [ "$m" = CLinuxShims ]; then
    local dir=$OUT/modules/CLinuxShims
    if newer_than "$dir/.stamp" "$src"; then
      mkdir -p "$dir"
      printf 'module CLinuxShims {\n  umbrella "%s/include"\n  export *\n}\n' "$src" \
        >"$dir/module.modulemap"
      local c
      for c in "$src"/*.c; do
        clang -O1 -g -fsanitize=address,fuzzer-no-link -I "$src/include" -c "$c" \
          -o "$OUT/obj/CLinuxShims-$(basename "$c" .c).o"
      done
      touch "$dir/.stamp"
    fi
    return
  fi
  local obj=$OUT/obj/$m.o
  # Rebuild when its sources or a module it depends on changed.
  local deps=()
  local d
  for d in ${DEPS[$m]}; do [ -e "$OUT/obj/$d.o" ] && deps+=("$OUT/obj/$d.o"); done
  if newer_than "$obj" "$src" "${deps[@]}" "$ROOT/scripts/fuzz.sh"; then
    echo "fuzz: compiling $m"
    mapfile -t files < <(find "$src" -name '*.swift' | sort)
    # shellcheck disable=SC2046
    swiftc "${SWIFT_FLAGS[@]}" $(system_flags) -module-name "$m" -wmo \
      -emit-module -emit-module-path "$OUT/modules/$m.swiftmodule" \
      -c "${files[@]}" -o "$obj"
    touch "$obj"  # swiftc leaves an unchanged object's time alone
  fi
}

build_target() {
  local t=$1
  local mods
  read -r -a mods <<<"$(modules_for "$t")"
  local m objs=() libs=()
  for m in "${mods[@]}"; do
    build_module "$m"
    case "${KIND[$m]}" in
      system) read -r -a more <<<"$(pkg-config --libs "${PKG[$m]}")"; libs+=("${more[@]}") ;;
      *)
        if [ "$m" = CLinuxShims ]; then
          objs+=("$OUT"/obj/CLinuxShims-*.o)
        else
          objs+=("$OUT/obj/$m.o")
        fi
        ;;
    esac
  done
  local bin=$OUT/bin/$t
  if newer_than "$bin" "fuzz/targets/$t.swift" fuzz/support "${objs[@]}"; then
    echo "fuzz: linking $t (${mods[*]})"
    # gold warns about every sanitizer symbol it cannot export; the warnings mean nothing here.
    # shellcheck disable=SC2046
    swiftc "${SWIFT_FLAGS[@]}" $(system_flags) -module-name "fuzz_${t//-/_}" \
      "fuzz/targets/$t.swift" fuzz/support/*.swift "${objs[@]}" "${libs[@]}" -o "$bin" 2>&1 \
      | grep -v "Cannot export local symbol" || true
    [ -x "$bin" ] || die "building $t failed"
  fi
}

build_all() {
  mkdir -p "$OUT/obj" "$OUT/modules" "$OUT/bin" "$OUT/corpus" "$OUT/logs"
  load_manifest
  local t
  for t in "$@"; do
    [ -f "fuzz/targets/$t.swift" ] || die "no target '$t' (see scripts/fuzz.sh --list)"
    build_target "$t"
  done
}

# --- running -------------------------------------------------------------------------------
# Runs one target for $2 seconds; writes build-fuzz/logs/T.log and a result line to T.result.
run_one() {
  local t=$1 seconds=$2
  local work=$OUT/corpus/$t
  local log=$OUT/logs/$t.log
  mkdir -p "$work" "$OUT/artifacts/$t"
  local seeds=()
  [ -d "fuzz/corpus/$t" ] && seeds=("fuzz/corpus/$t")
  local extra=()
  [ -f "fuzz/options/$t" ] && read -r -a extra <"fuzz/options/$t"
  local start=$SECONDS rc=0
  "$OUT/bin/$t" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
    -print_final_stats=1 -artifact_prefix="$OUT/artifacts/$t/" "${extra[@]}" \
    "$work" "${seeds[@]}" >"$log" 2>&1 || rc=$?
  local elapsed=$((SECONDS - start))
  local execs rate cov ft
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
  # The last status line (`#N DONE cov: C ft: F corp: ...`) has the final coverage.
  local status
  status=$(grep -oE 'cov: [0-9]+ ft: [0-9]+' "$log" | tail -1 || true)
  cov=$(echo "$status" | sed -n 's/cov: \([0-9]*\) ft: .*/\1/p')
  ft=$(echo "$status" | sed -n 's/.* ft: \([0-9]*\)/\1/p')
  local crashes=0
  local artifact
  for artifact in "$OUT/artifacts/$t"/*; do
    [ -e "$artifact" ] || continue
    # A slow unit (over 10 s, below -timeout) is worth a look, not a failure.
    if [[ "$(basename "$artifact")" == slow-unit-* ]]; then
      echo "fuzz: $t: slow input kept as $artifact (see 'Slowest unit' in $log)" >&2
      continue
    fi
    crashes=$((crashes + 1))
    mkdir -p fuzz/crashes
    cp "$artifact" "fuzz/crashes/$t-$(basename "$artifact")"
    rm "$artifact"
    echo "fuzz: $t CRASHED; input saved as fuzz/crashes/$t-$(basename "$artifact")" \
      "(replay: scripts/fuzz.sh --run $t fuzz/crashes/$t-$(basename "$artifact"); log: $log)" >&2
  done
  if [ "$rc" -ne 0 ] && [ "$crashes" -eq 0 ]; then
    crashes=1
    echo "fuzz: $t exited with status $rc and saved no input; see $log" >&2
  fi
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$t" "${execs:-0}" "$elapsed" "${rate:-0}" \
    "${cov:-?}" "${ft:-?}" "$crashes" >"$OUT/logs/$t.result"
}

run_all() {
  local seconds=$1
  shift
  local t running=0
  for t in "$@"; do rm -f "$OUT/logs/$t.result"; done
  for t in "$@"; do
    run_one "$t" "$seconds" &
    running=$((running + 1))
    if [ "$running" -ge "$JOBS" ]; then
      wait -n || true
      running=$((running - 1))
    fi
  done
  wait || true
  local failed=0
  printf '\n| target | executions | time (s) | exec/s | cov | ft | crashes |\n'
  printf '|---|---:|---:|---:|---:|---:|---:|\n'
  for t in "$@"; do
    if [ ! -f "$OUT/logs/$t.result" ]; then
      echo "| $t | - | - | - | - | - | no result |"
      failed=1
      continue
    fi
    IFS=$'\t' read -r name execs elapsed rate cov ft crashes <"$OUT/logs/$t.result"
    printf '| %s | %s | %s | %s | %s | %s | %s |\n' "$name" "$execs" "$elapsed" "$rate" "$cov" \
      "$ft" "$crashes"
    [ "$crashes" -eq 0 ] || failed=1
  done
  if [ "$failed" -ne 0 ]; then
    echo "fuzz: FAILED: a target crashed (inputs in fuzz/crashes/, logs in $OUT/logs/)" >&2
    return 1
  fi
  echo "fuzz: no crashes"
}

mode=${1:---ci}
[ $# -gt 0 ] && shift
case "$mode" in
  --list) all_targets ;;
  --build)
    [ $# -gt 0 ] || set -- $(all_targets)
    build_all "$@"
    ;;
  --ci)
    [ $# -gt 0 ] || set -- $(all_targets)
    build_all "$@"
    run_all "$CI_SECONDS" "$@"
    ;;
  --long)
    seconds=${1:?usage: scripts/fuzz.sh --long SECONDS [TARGET...]}
    shift
    [ $# -gt 0 ] || set -- $(all_targets)
    build_all "$@"
    run_all "$seconds" "$@"
    ;;
  --run)
    t=${1:?usage: scripts/fuzz.sh --run TARGET [ARGS...]}
    shift
    build_all "$t"
    exec "$OUT/bin/$t" "$@"
    ;;
  -h | --help) sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//' ;;
  *) die "unknown mode '$mode' (try --help)" ;;
esac
