#!/usr/bin/env bash
# Benchmark (not a test): orientd against Debian's iio-sensor-proxy, one after the other, on
# the same emulated (umockdev) accelerometer and the same private bus, measured by the same
# client through net.hadess.SensorProxy (scripts/bench/daemon.py). Prints, side by side:
# wakeups and CPU per claimed minute with the device still and while turning every 1.5-3.5 s,
# latency from a sysfs change to the client seeing the new orientation (median, p95), wakeups
# per idle (unclaimed) minute, resident memory, and the time from start to the bus name being
# owned; then the targets with orientd/iio-sensor-proxy ratios (exit 1 if one is missed).
#
#   sudo scripts/bench/daemon.sh [--changes 30] [--idle 20] [--still 30] [--pause-min 1.5]
#                                [--pause-max 3.5] [--starts 5] [--seed 1]
#                                [--orientd-config FILE] [--ambient-changes 20]
#                                [--ambient-still 15] [--only-ambient]
#
# First the same for ambient light and proximity (emulated LTR303 and STK3310), each claimed
# alone: latency of a change, wakeups and CPU still and changing (docs/benchmark.md "Light and
# proximity"); --ambient-changes 0 skips them, --only-ambient skips the accelerometer.
#
# SKIP_BUILD=1 uses the release build already there. Takes about 9 minutes.
set -euo pipefail
cd "$(dirname "$0")/../.."
# shellcheck source=scripts/private-bus.sh
. scripts/private-bus.sh
if [ "$(id -u)" -ne 0 ]; then
  echo "bench-daemon: run as root (both daemons own net.hadess.SensorProxy, root only)" >&2
  exit 77
fi
scripts/deps.sh >/dev/null
if [ -z "${SKIP_BUILD:-}" ]; then
  # As installed (scripts/build-release.sh): release, static Swift runtime, lld with packed
  # relocations and the function order in link/orientd.order.
  scripts/build-release.sh orientd
fi
bin=$(swift build -c release --show-bin-path)

work=$(mktemp -d /tmp/orientd-bench-XXXXXX)
bus_pid=
cleanup() {
  [ -n "$bus_pid" ] && kill -9 "$bus_pid" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

# A private system bus with orientd's policy and iio-sensor-proxy's own.
private_bus_conf "$work/bus.conf" "$work/bus.sock" \
  '  <include ignore_missing="yes">/etc/dbus-1/system.d/net.hadess.SensorProxy.conf</include>'
bus_pid=$(dbus-daemon --config-file="$work/bus.conf" --fork --print-pid 2>/dev/null)
export DBUS_SYSTEM_BUS_ADDRESS="unix:path=$work/bus.sock"

echo "== $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg);" \
  "orientd $("$bin/orientd" --version | cut -d' ' -f2) (release, static Swift runtime)," \
  "iio-sensor-proxy $(dpkg-query -W -f='${Version}' iio-sensor-proxy 2>/dev/null || echo '?')"
umockdev-wrapper /usr/bin/python3 scripts/bench/daemon.py --orientd "$bin/orientd" \
  --work "$work" "$@"
