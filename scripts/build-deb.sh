#!/usr/bin/env bash
# Builds the Debian packages orientd, orientd-rotate, orientcam and orientd-face (debian/) with dpkg-buildpackage, after
# installing their build dependencies (debian/control's Build-Depends, read by
# dpkg-checkbuilddeps: apt is not touched when nothing is missing) and lintian, then runs lintian
# on the result. Swift is not a Debian package: the Swift toolchain on PATH builds them
# (debian/rules checks it).
#
#   scripts/build-deb.sh            # as root on Debian 12; packages in .build/deb/
#   DEB_OUT=DIR scripts/build-deb.sh
#
# Exit status: 0 built and lintian-clean (no error or warning); 1 the build or lintian failed;
# 69 build dependencies missing and not root (it says what to install).
set -euo pipefail
cd "$(dirname "$0")/.."
out=${DEB_OUT:-$PWD/.build/deb}
t0=$(date +%s)

# Unmet build dependencies, as dpkg-checkbuilddeps prints them ("a (>= 1) b | c d"): the first
# alternative of each, without its version (apt resolves the virtual ones, e.g. debhelper-compat,
# to their only provider).
unmet() {
  dpkg-checkbuilddeps 2>&1 >/dev/null |
    sed -n '/Unmet build dependencies: /{s/.*Unmet build dependencies: //;s/([^)]*)//g;s/:any//g;p}' |
    awk '{ for (i = 1; i <= NF; i++) { if ($i == "|") { i++; continue } print $i } }' || true
}
mapfile -t missing < <(unmet)
command -v lintian >/dev/null || missing+=(lintian)
if [ ${#missing[@]} -gt 0 ]; then
  echo "build-deb: installing ${missing[*]}"
  if [ "$(id -u)" -ne 0 ]; then
    echo "build-deb: not root; run as root: apt-get install ${missing[*]}" >&2
    exit 69
  fi
  export DEBIAN_FRONTEND=noninteractive
  apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends "${missing[@]}" >/dev/null ||
    { apt-get -o DPkg::Lock::Timeout=600 update -qq && apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends "${missing[@]}"; }
fi

# dpkg-buildpackage writes the packages next to the source tree; they are moved to $out.
# -nc: the release build under .build is kept between runs (SwiftPM rebuilds what changed);
# debian/rules clean removes only what the packaging itself made.
debian/rules clean
dpkg-buildpackage -b -us -uc -nc
mkdir -p "$out"
rm -f "$out"/*.deb "$out"/*.changes "$out"/*.buildinfo
version=$(dpkg-parsechangelog -S Version)
arch=$(dpkg-architecture -qDEB_HOST_ARCH)
for f in ../orientd_"${version}"_"$arch".{changes,buildinfo} \
  ../orientd_"${version}"_"$arch".deb ../orientcam_"${version}"_"$arch".deb \
  ../orientd-rotate_"${version}"_"$arch".deb ../orientd-rotate-dbgsym_"${version}"_"$arch".deb \
  ../orientd-face_"${version}"_"$arch".deb ../orientd-face-dbgsym_"${version}"_"$arch".deb \
  ../orientd-dbgsym_"${version}"_"$arch".deb ../orientcam-dbgsym_"${version}"_"$arch".deb; do
  [ -e "$f" ] && mv "$f" "$out/"
done
echo "build-deb: built in $(($(date +%s) - t0)) s:"
ls -l "$out"
# The manual pages as built into the package: groff warnings (man --warnings) fail, and each must
# have a NAME section lexgrog (mandb's parser, whatis/apropos) can read; the completions parse.
for page in debian/tmp/usr/share/man/man?/*; do
  warnings=$(MANWIDTH=80 man --warnings -l "$page" 2>&1 >/dev/null)
  [ -z "$warnings" ] || { echo "build-deb: man --warnings $page:" >&2; echo "$warnings" >&2; exit 1; }
  lexgrog "$page" || { echo "build-deb: lexgrog finds no NAME section in $page" >&2; exit 1; }
done
for completion in debian/tmp/usr/share/bash-completion/completions/*; do
  bash -n "$completion" || { echo "build-deb: $completion does not parse" >&2; exit 1; }
done
# --fail-on warning: a warning fails the build as an error does (overrides in debian/*.lintian-overrides).
lintian --fail-on error,warning --info "$out"/orientd_"${version}"_"$arch".changes
echo "build-deb: lintian clean"
