#!/usr/bin/env bash
# Builds the kernel modules of vm/kmods.table that Debian's kernel does not ship (and the test
# harness's own, vm/kmod/), out of tree, for the test VM's kernel, and installs them into the
# VM's extracted kernel tree (the cache vm/run.sh boots from) as
# lib/modules/<version>/updates/orientd-vm/NAME.ko, then runs depmod:
# the guest loads them with modprobe -d like the kernel's own modules, dependencies first.
#
# usage: vm/kmods.sh KERNEL_ROOT KERNEL_VERSION PACKAGE_VERSION NAME...
#        vm/kmods.sh --list
#   KERNEL_ROOT      the extracted kernel image package (vm/run.sh's cache folder for it)
#   KERNEL_VERSION   its module version (6.1.0-57-amd64)
#   PACKAGE_VERSION  the image package's Debian version (6.1.192-3): the linux-source and
#                    headers packages must be that same version
#   NAME             modules from vm/kmods.table (vm/run.sh passes those the selected tests ask
#                    for with "# kmods: NAME...")
#   --list           print the table's module names
#
# Idempotent and cached per kernel: a module whose row, kernel package (and, for the project's own
# modules, sources) are unchanged since it was built is not looked at again (no apt, no network:
# a warm cache costs a few file reads).
# What a cold build does, as root: installs linux-headers-KERNEL_VERSION (with -common and
# linux-kbuild, and make, xz-utils) when missing, downloads linux-source-X.Y=PACKAGE_VERSION
# (139 MB for 6.1), extracts only the rows' folders, runs the kernel's own kbuild
# (make -C /usr/src/linux-headers-KERNEL_VERSION M=FOLDER CONFIG_...=m modules), checks that the
# module's vermagic is the kernel's, and runs depmod. Concurrent runs on one cache wait for each
# other (flock).
#
# Exit codes: 0 built or already there; 1 a build failed; 64 usage.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
table=$here/kmods.table
say() { printf 'vm: kmods: %s\n' "$*"; }
die() {
  printf 'vm: kmods: error: %s\n' "$*" >&2
  exit 1
}
elapsed() { awk -v a="$1" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }'; }

# The table's rows: "name folder configs also", comments and blank lines left out.
rows() { sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$table"; }
row_of() { rows | awk -v n="$1" '$1 == n { print; found = 1 } END { exit !found }'; }

if [ "${1:-}" = --list ]; then
  rows | awk '{ print $1 }'
  exit 0
fi
if [ $# -lt 4 ] || [ "${1:0:1}" = - ]; then
  sed -n '2,/^set -euo/{/^#/s/^# \{0,1\}//p}' "$0" >&2
  exit 64
fi
kroot=$1 kv=$2 kver=$3
shift 3
[ -d "$kroot/lib/modules/$kv" ] || die "no $kroot/lib/modules/$kv (an extracted kernel package?)"
dest=$kroot/lib/modules/$kv/updates/orientd-vm

project=$(cd "$here/.." && pwd)
# The key a built module is cached under: its row, the kernel package's version and, for a module
# of this project (folder vm/...), its sources.
key_of() {
  local folder
  read -r _ folder _ <<<"$1"
  {
    printf '%s %s\n' "$1" "$kver"
    case $folder in vm/*) find "$project/$folder" -type f -print0 | sort -z | xargs -0 cat ;; esac
  } | sha256sum | cut -c1-16
}
todo=()
for name; do
  row=$(row_of "$name") || die "no module '$name' in vm/kmods.table (vm/kmods.sh --list)"
  [ "$(cat "$dest/$name.key" 2>/dev/null)" = "$(key_of "$row")" ] || todo+=("$name")
done
[ ${#todo[@]} -gt 0 ] || exit 0

# One build at a time per kernel tree (other runs wait here, then find the modules built).
exec {lock}>"$kroot/.kmods.lock"
flock -w 1200 "$lock" || die "another vm/kmods.sh has held $kroot/.kmods.lock for 20 minutes"
still=()
for name in "${todo[@]}"; do
  [ "$(cat "$dest/$name.key" 2>/dev/null)" = "$(key_of "$(row_of "$name")")" ] || still+=("$name")
done
[ ${#still[@]} -gt 0 ] || exit 0
todo=("${still[@]}")
started=$(date +%s.%N)
say "building ${todo[*]} for $kv (out of tree, against $kver's headers)"

# ---- host packages: the kernel's headers and kbuild, make, xz ------------------------------------
headers=linux-headers-$kv
source_pkg=linux-source-$(echo "$kv" | cut -d. -f1,2)
installed() { dpkg-query -W -f='${Status} ${Version}\n' "$1" 2>/dev/null | grep -q "^install ok installed $2"; }
need=()
installed "$headers" "$kver" || need+=("$headers=$kver")
installed make '' || need+=(make)
installed xz-utils '' || need+=(xz-utils)
if [ ${#need[@]} -gt 0 ]; then
  [ "$(id -u)" -eq 0 ] || die "missing ${need[*]}; as root: apt-get install ${need[*]}"
  t0=$(date +%s.%N)
  export DEBIAN_FRONTEND=noninteractive
  # Other agents' apt runs hold dpkg's lock for a while: wait for it rather than fail.
  apt-get install -y -qq --no-install-recommends -o DPkg::Lock::Timeout=600 "${need[@]}" >/dev/null ||
    { apt-get update -qq && apt-get install -y -qq --no-install-recommends -o DPkg::Lock::Timeout=600 "${need[@]}" >/dev/null; } ||
    die "apt-get install ${need[*]} failed"
  say "installed ${need[*]} in $(elapsed "$t0")s"
fi
kbuild=/usr/src/$headers
[ -f "$kbuild/Makefile" ] || die "$headers is installed but $kbuild/Makefile is missing"

# ---- the sources: the project's own folders, and only the rows' folders from linux-source --------
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir "$work/src"
folders=()
for name in "${todo[@]}"; do
  read -r _ folder _ also <<<"$(row_of "$name")"
  case $folder in
    vm/*)
      mkdir -p "$work/src/$folder"
      cp -r "$project/$folder/." "$work/src/$folder/"
      continue
      ;;
  esac
  folders+=("$folder")
  if [ "$also" != - ]; then
    IFS=, read -r -a extra <<<"$also"
    folders+=("${extra[@]}")
  fi
done
if [ ${#folders[@]} -gt 0 ]; then
  t0=$(date +%s.%N)
  (cd "$work" && apt-get download -q -o APT::Sandbox::User=root "$source_pkg=$kver" >/dev/null) ||
    die "apt-get download $source_pkg=$kver failed (network? apt sources? apt-get update?)"
  deb=$(ls "$work"/*.deb)
  dpkg-deb --fsys-tarfile "$deb" | tar -xO "./usr/src/$source_pkg.tar.xz" |
    tar -xJ -C "$work/src" --strip-components=1 "${folders[@]/#/$source_pkg/}" ||
    die "cannot extract ${folders[*]} from $source_pkg $kver"
  rm -f "$deb"
  say "$source_pkg $kver: downloaded and extracted ${folders[*]} in $(elapsed "$t0")s"
fi

# ---- build, check, install ------------------------------------------------------------------------
# The kernel's vermagic, from one of its own modules: a module built against other headers would
# be refused at load time ("disagrees about version of symbol").
ref=$(find "$kroot/lib/modules/$kv/kernel" -name '*.ko' -print -quit)
vermagic=$(modinfo -F vermagic "$ref")
mkdir -p "$dest"
for name in "${todo[@]}"; do
  row=$(row_of "$name")
  read -r _ folder configs _ <<<"$row"
  t0=$(date +%s.%N)
  # The Makefile line needs CONFIG_X=m; code testing IS_ENABLED(CONFIG_X) needs CONFIG_X_MODULE.
  vars=() defines=""
  IFS=, read -r -a symbols <<<"$configs"
  for s in "${symbols[@]}"; do
    vars+=("$s=m")
    defines+=" -D${s}_MODULE=1"
  done
  make -s -C "$kbuild" M="$work/src/$folder" "${vars[@]}" KCPPFLAGS="$defines" \
    -j"$(nproc)" modules >"$work/$name.log" 2>&1 || {
    tail -n 20 "$work/$name.log" >&2
    die "building $name in $folder failed"
  }
  ko=$work/src/$folder/$name.ko
  [ -f "$ko" ] || die "make in $folder made no $name.ko (is the row's CONFIG symbol right?)"
  built=$(modinfo -F vermagic "$ko")
  [ "$built" = "$vermagic" ] || die "$name.ko has vermagic '$built', the kernel '$vermagic'"
  install -m 644 "$ko" "$dest/$name.ko"
  key_of "$row" >"$dest/$name.key"
  deps=$(modinfo -F depends "$ko" | tr , ' ')
  say "$name: built in $(elapsed "$t0")s (depends on: ${deps:-nothing})"
done
# Modules of rows no longer in the table go.
for ko in "$dest"/*.ko; do
  name=${ko##*/}
  name=${name%.ko}
  row_of "$name" >/dev/null || rm -f "$ko" "$dest/$name.key"
done
t0=$(date +%s.%N)
depmod -b "$kroot" "$kv" || die "depmod -b $kroot $kv failed"
say "depmod in $(elapsed "$t0")s; all built in $(elapsed "$started")s"
