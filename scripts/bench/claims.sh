#!/usr/bin/env bash
# Benchmark (not a test): many clients claim and release orientd's sensor at once, then vanish
# without releasing (Benchmarks/claims-bench). A private system bus with the project's policy and
# room for the clients, orientd on an emulated (umockdev) polled accelerometer. Prints clients,
# claims/s, the CPU seconds orientd and the bus daemon spent on the claims and on the releases
# (/proc/PID/schedstat: these hold on a loaded machine, claims/s does not), the daemon's VmRSS
# before/peak/after, its descriptors before/after, and its read system calls during one idle
# second afterwards (0: sampling stopped).
#
#   sudo scripts/bench/claims.sh [--clients 1000] [--json]
#
# RUNS=3 runs the clients three times against the same daemon (memory kept after the first
# run is reused, not grown, if the later runs end where the first did).
# CONFIG=debug uses the debug build (default: release, as installed, scripts/build-release.sh);
# SKIP_BUILD=1 uses what is built. BusFaultTests runs claims-bench with 200 clients and asserts
# on its correctness figures (every call answered, sampling stopped, descriptors back).
set -euo pipefail
cd "$(dirname "$0")/../.."
# shellcheck source=scripts/private-bus.sh
. scripts/private-bus.sh
if [ "$(id -u)" -ne 0 ]; then
  echo "bench-claims: run as root (orientd owns its bus names as root, as installed)" >&2
  exit 77
fi
config=${CONFIG:-release}
if [ -z "${SKIP_BUILD:-}" ]; then
  scripts/deps.sh >/dev/null
  if [ "$config" = release ]; then
    scripts/build-release.sh orientd
    swift build -c release --product claims-bench 2>&1 | grep -v 'prohibited flag' | tail -n 1
  else
    swift build --product orientd 2>&1 | grep -v 'prohibited flag' | tail -n 1
    swift build --product claims-bench 2>&1 | grep -v 'prohibited flag' | tail -n 1
  fi
fi
bin=$(swift build -c "$config" --show-bin-path)

work=$(mktemp -d /tmp/orientd-bench-claims-XXXXXX)
bus_pid=
runner=
cleanup() {
  [ -n "$runner" ] && kill "$runner" 2>/dev/null || true
  [ -n "$bus_pid" ] && kill -9 "$bus_pid" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

# A private system bus with room for the clients: by default a user may hold 256 connections.
private_bus_conf "$work/bus.conf" "$work/bus.sock" '  <limit name="max_connections_per_user">8192</limit>
  <limit name="max_completed_connections">8192</limit>'
# dbus-daemon keeps a descriptor per client.
ulimit -n "$(ulimit -Hn)"
bus_pid=$(dbus-daemon --config-file="$work/bus.conf" --fork --print-pid)
export DBUS_SYSTEM_BUS_ADDRESS="unix:path=$work/bus.sock"

: > "$work/empty.conf"
umockdev-run -d Tests/Fixtures/umockdev/mxc4005.umockdev -- \
  "$bin/orientd" --config "$work/empty.conf" 2> "$work/orientd.log" &
runner=$!
for _ in $(seq 100); do
  grep -q "notice: serving" "$work/orientd.log" && break
  sleep 0.1
done
grep -q "notice: serving" "$work/orientd.log" || { cat "$work/orientd.log"; exit 1; }

echo "== $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg); orientd" \
  "$("$bin/orientd" --version | cut -d' ' -f2) ($config)"
for run in $(seq "${RUNS:-1}"); do
  [ "${RUNS:-1}" -gt 1 ] && echo "-- run $run of $RUNS, same daemon"
  "$bin/claims-bench" --address "$DBUS_SYSTEM_BUS_ADDRESS" "$@"
done
