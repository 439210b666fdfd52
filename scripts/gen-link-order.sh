#!/usr/bin/env bash
# Regenerates link/orientd.order: the functions orientd executes while it starts, serves a
# a claim on an emulated accelerometer that is turned through all four orientations, and
# stops, as recorded by valgrind's callgrind. scripts/build-release.sh links them first, so the code
# the daemon runs sits on few pages. Run after larger changes to the daemon; a stale order only
# costs memory, never correctness. Needs root (orientd owns its bus names as root).
set -euo pipefail
cd "$(dirname "$0")/.."
command -v valgrind >/dev/null || { apt-get install -y -qq valgrind >/dev/null; }
scripts/build-release.sh orientd
bin=$(swift build -c release --show-bin-path)
work=$(mktemp -d /tmp/orientd-order-XXXXXX)
bus_pid=
cleanup() { [ -n "$bus_pid" ] && kill -9 "$bus_pid" 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT
# valgrind cannot read the DWARF lld writes; it only needs the symbol table.
strip -g -o "$work/orientd" "$bin/orientd"
# shellcheck source=scripts/private-bus.sh
. scripts/private-bus.sh
private_bus_conf "$work/bus.conf" "$work/bus.sock"
bus_pid=$(dbus-daemon --config-file="$work/bus.conf" --fork --print-pid)
export DBUS_SYSTEM_BUS_ADDRESS="unix:path=$work/bus.sock"
# The emulated accelerometer of the tests and scripts/demo.sh, polled, 1 g = 1000 counts.
device=/sys/devices/platform/i2c-0/i2c-MXC6655:00/iio:device0
umockdev-run -d Tests/Fixtures/umockdev/mxc4005.umockdev -- valgrind --tool=callgrind --demangle=no \
  --callgrind-out-file="$work/cg.out" "$work/orientd" > "$work/orientd.log" 2>&1 &
runner=$!
for _ in $(seq 300); do
  busctl status org.orientd.Orientation1 >/dev/null 2>&1 && break
  sleep 0.2
done
busctl status org.orientd.Orientation1 >/dev/null || { cat "$work/orientd.log"; exit 1; }
daemon=$(pgrep -f -- "--callgrind-out-file=$work/cg.out" | tail -n 1)
sysfs="$(tr '\0' '\n' < "/proc/$daemon/environ" | sed -n 's/^UMOCKDEV_DIR=//p')$device"
busctl get-property net.hadess.SensorProxy /net/hadess/SensorProxy net.hadess.SensorProxy \
  AccelerometerOrientation > /dev/null
busctl call org.orientd.Orientation1 /org/orientd/Orientation1 \
  org.freedesktop.DBus.Introspectable Introspect > /dev/null
timeout 120 "$bin/orientd" --watch --json > "$work/watch.log" &
watcher=$!
sleep 5
for xyz in "1000 0 0" "0 1000 0" "-1000 0 0" "0 -1000 0" "0 0 -1000" "0 -1000 0"; do
  read -r x y z <<< "$xyz"
  printf '%s\n' "$x" > "$sysfs/in_accel_x_raw"
  printf '%s\n' "$y" > "$sysfs/in_accel_y_raw"
  printf '%s\n' "$z" > "$sysfs/in_accel_z_raw"
  sleep 2
done
timeout 30 "$bin/orientd" --get --json > /dev/null || true
kill -TERM "$watcher"
wait "$watcher" 2>/dev/null || true
sleep 2
kill -TERM "$daemon"
wait "$runner" 2>/dev/null || true
echo "watch saw: $(grep -o '"orientation":"[a-z-]*"' "$work/watch.log" | cut -d'"' -f4 | xargs)"
# Functions of the orientd object that ran, in callgrind's (first-seen) order.
python3 - "$work/cg.out" "$work/orientd" > link/orientd.order <<'PY'
import re, sys
path, binary = sys.argv[1], sys.argv[2]
objects, names, current, seen, order = {}, {}, None, set(), []
for line in open(path, errors="replace"):
    m = re.match(r"^(c?ob)=\((\d+)\)(?: (.*))?", line)
    if m:
        if m.group(3): objects[m.group(2)] = m.group(3).strip()
        if m.group(1) == "ob": current = objects.get(m.group(2))
        continue
    m = re.match(r"^(c?fn)=\((\d+)\)(?: (.*))?", line)
    if m:
        if m.group(3): names[m.group(2)] = m.group(3).strip()
        name = names.get(m.group(2))
        if m.group(1) == "fn" and current == binary and name and not name.startswith("0x") \
                and name not in seen:
            seen.add(name); order.append(name)
print("\n".join(order))
PY
echo "link/orientd.order: $(wc -l < link/orientd.order) functions"
# SwiftPM does not know that the link reads the order: remove the executable, so that the next
# scripts/build-release.sh links it again with the new order.
rm -f "$bin/orientd"
