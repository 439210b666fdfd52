#!/usr/bin/env bash
# Benchmark (not a test): the cost of one accelerometer reading (x, y, z) through libiio,
# through open/read/close per attribute, through pread on kept-open files, and through
# orientd's SysfsAttribute (pread plus an fstat at most every 250 ms per attribute that
# notices a replaced file; attr0 checks on every read).
# Prints readings/s and CPU us per reading from iio-read-bench, then system calls per reading
# counted with strace (difference between two run lengths, so start-up cancels out).
#
#   scripts/bench/iio-read.sh            # READINGS=20000 by default
#
# Runs twice: inside a umockdev testbed (emulated sysfs reached through the umockdev preload),
# and, when `unshare -m` is allowed (root), on plain files mounted at /sys/bus/iio in a private
# mount namespace, without the preload, which is closer to the cost of real sysfs minus the
# driver. On a machine with a real accelerometer, run .build/release/iio-read-bench directly.
set -euo pipefail
cd "$(dirname "$0")/../.."
READINGS=${READINGS:-20000}
swift build -c release --product iio-read-bench >/dev/null
BENCH=$PWD/.build/release/iio-read-bench
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cat > "$work/accel.umockdev" <<'FIXTURE'
P: /devices/platform/i2c-0/i2c-MXC6655:00
E: SUBSYSTEM=i2c
E: MODALIAS=acpi:MXC6655:

P: /devices/platform/i2c-0/i2c-MXC6655:00/iio:device0
E: SUBSYSTEM=iio
A: name=mxc4005\n
A: in_accel_x_raw=12\n
A: in_accel_y_raw=-1024\n
A: in_accel_z_raw=33\n
A: in_accel_scale=0.009582\n
FIXTURE

# The same files as plain tmpfs files at /sys/bus/iio/devices/iio:device0 (libiio's path).
plain() {
  unshare -m --propagation private sh -c '
    mount -t tmpfs none /sys/bus && mkdir -p /sys/bus/iio/devices/iio:device0 &&
    cd /sys/bus/iio/devices/iio:device0 &&
    printf "mxc4005\n" > name && printf "12\n" > in_accel_x_raw &&
    printf -- "-1024\n" > in_accel_y_raw && printf "33\n" > in_accel_z_raw &&
    printf "0.009582\n" > in_accel_scale && exec "$@"' sh "$@"
}
emulated() { umockdev-run -d "$work/accel.umockdev" -- "$@"; }

syscalls() {  # runner method readings -> total system calls
  "$1" strace -f -c -o "$work/strace.txt" "$BENCH" --only "$2" --readings "$3" >/dev/null
  awk '$NF == "total" { print $4 }' "$work/strace.txt"
}

report() {  # runner label
  echo "== $2"
  "$1" "$BENCH" --readings "$READINGS"
  if command -v strace >/dev/null; then
    printf 'syscalls/reading:'
    for method in libiio reopen pread attr attr0; do
      a=$(syscalls "$1" "$method" 1000)
      b=$(syscalls "$1" "$method" 2000)
      printf '  %s %s' "$method" "$(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.1f", (b - a) / 1000 }')"
    done
    echo
  fi
}

report emulated "umockdev testbed ($(umockdev-run --version 2>/dev/null || echo umockdev))"
if plain true 2>/dev/null; then
  report plain "plain files, private mount namespace, no preload"
else
  echo "== plain files: skipped (unshare -m not permitted here)"
fi
