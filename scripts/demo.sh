#!/usr/bin/env bash
# The demo: orientd as a service. Starts a private D-Bus system bus (with the policy from
# dbus/), runs orientd on an emulated (umockdev) accelerometer, light, proximity and compass
# sensor, and turns that accelerometer through all four orientations and flat while
# `orientd --watch` and Debian's `monitor-sensor` (through the iio-sensor-proxy API) show what
# they see, then changes the light and covers the proximity sensor while
# `orientd --watch --light --proximity` and monitor-sensor follow; at the same time an `orientcam
# session` of the test pattern follows `orientd --watch --json` and takes a photo in each
# orientation, written upright, with the overlay rendered for each orientation.
#
#   sudo scripts/demo.sh          # installs Debian packages (scripts/deps.sh), builds, runs
#
# Photos and overlays go to $DEMO_OUT (default ./demo-output), which the demo names at the end.
#
# It is a list of stages (functions named stage_*, run in the order of STAGES): a later part of
# the project adds its own stage function and appends it to STAGES.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/private-bus.sh
. scripts/private-bus.sh
if [ "$(id -u)" -ne 0 ]; then
  echo "demo: run as root (orientd owns its bus names as root, as installed)" >&2
  exit 77
fi

STAGES=(build bus daemon camera turn ambient get finish camera_results)
out=${DEMO_OUT:-$PWD/demo-output}
work=$(mktemp -d /tmp/orientd-demo-XXXXXX)
pids=()
watchers=()
cleanup() {
  for pid in "${watchers[@]}" "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  [ -n "${bus_pid:-}" ] && kill -9 "$bus_pid" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
say() { printf '\n==== %s\n' "$*"; }

stage_build() {
  scripts/deps.sh
  say "build (debug): swift build --product orientd --product orientcam"
  swift build --product orientd 2>&1 | tail -n 1
  swift build --product orientcam 2>&1 | grep -v 'prohibited flag' | tail -n 1
  bin=$(swift build --show-bin-path)
  orientd="$bin/orientd"
  export ORIENTCAM="$bin/orientcam"
}

stage_bus() {
  say "a private system bus with dbus/orientd.conf: only root may own the names"
  private_bus_conf "$work/bus.conf" "$work/bus.sock"
  bus_pid=$(dbus-daemon --config-file="$work/bus.conf" --fork --print-pid)
  export DBUS_SYSTEM_BUS_ADDRESS="unix:path=$work/bus.sock"
  echo "DBUS_SYSTEM_BUS_ADDRESS=$DBUS_SYSTEM_BUS_ADDRESS"
}

# The emulated accelerometer (Tests/Fixtures/umockdev/mxc4005.umockdev, the tests' too): an
# MXC4005 on I2C, polled through in_accel_{x,y,z}_raw, 1 g = 1000 counts; it starts upright.
device=/sys/devices/platform/i2c-0/i2c-MXC6655:00/iio:device0
# The emulated light, proximity and compass sensors (Tests/Fixtures/umockdev/ambient.umockdev,
# the tests' too): an LTR303 (lux = (raw + 10) * 0.5, 100 counts = 55 lux) and an STK3310
# (near above its in_proximity_nearlevel, 128; far again below 90 % of it).
light=/sys/devices/platform/i2c-1/i2c-LTR303:00/iio:device1
proximity=/sys/devices/platform/i2c-1/i2c-STK3310:00/iio:device2
stage_daemon() {
  say "orientd on emulated sensors (umockdev-run), log in \$work/orientd.log"
  umockdev-run -d Tests/Fixtures/umockdev/mxc4005.umockdev \
    -d Tests/Fixtures/umockdev/ambient.umockdev -- "$orientd" -v > /dev/null \
    2> "$work/orientd.log" &
  pids+=($!)
  local runner=$! daemon=""
  for _ in $(seq 100); do
    daemon=$(pgrep -P "$runner" -x orientd || true)
    if [ -n "$daemon" ] && grep -q "notice: serving" "$work/orientd.log"; then break; fi
    sleep 0.1
  done
  grep "notice: serving" "$work/orientd.log" || { cat "$work/orientd.log"; exit 1; }
  # The testbed's sysfs: the values are rewritten in place, as the kernel changes them.
  testbed=$(tr '\0' '\n' < "/proc/$daemon/environ" | sed -n 's/^UMOCKDEV_DIR=//p')
  sysfs="$testbed$device"
  daemon_pid=$daemon
  echo "orientd runs as pid $daemon_pid; nothing claimed yet, so it reads nothing:"
  echo "  open in_accel_* files: $(open_sensor_files), light/proximity files: $(open_ambient_files)"
  echo "orientd --list-sensors (in the same testbed) finds them all:"
  # shellcheck disable=SC2046
  env $(tr '\0' '\n' < "/proc/$daemon/environ" | grep -E '^(LD_PRELOAD|UMOCKDEV_DIR)=') \
    "$orientd" --list-sensors | grep -E '^(iio:|event|light|proximity|compass)' | sed 's/^/  /'
}

open_sensor_files() {  # how many in_accel_* attributes orientd has open
  { ls -l "/proc/$daemon_pid/fd" 2>/dev/null || true; } | { grep -c in_accel_ || true; }
}

open_ambient_files() {  # how many light and proximity attributes orientd has open
  { ls -l "/proc/$daemon_pid/fd" 2>/dev/null || true; } |
    { grep -cE 'in_(illuminance|proximity)_raw' || true; }
}

set_raw() {  # x y z
  printf '%s\n' "$1" > "$sysfs/in_accel_x_raw"
  printf '%s\n' "$2" > "$sysfs/in_accel_y_raw"
  printf '%s\n' "$3" > "$sysfs/in_accel_z_raw"
}

stage_turn() {
  say "orientd --watch and monitor-sensor claim the accelerometer; the device is turned"
  # Process substitution, so that $! is the client itself (the demo stops exactly these).
  "$orientd" --watch > >(sed -u 's/^/  [orientd --watch]  /') &
  watchers+=($!)
  stdbuf -oL monitor-sensor > >(sed -u 's/^/  [monitor-sensor]   /') 2>&1 &
  watchers+=($!)
  sleep 1.5
  echo "  (sampling now: $(open_sensor_files) in_accel_* files open)"
  for step in "left-up:1000 0 0" "bottom-up:0 1000 0" "right-up:-1000 0 0" \
    "normal:0 -1000 0" "flat on its back:0 0 -1000" "picked up again:0 -1000 0"; do
    echo "  -> turning the device: ${step%%:*}"
    # shellcheck disable=SC2086
    set_raw ${step#*:}
    sleep 1.2
  done
}

stage_ambient() {
  say "orientd --watch --light --proximity (and monitor-sensor) follow light and proximity"
  "$orientd" --watch --light --proximity > >(sed -u 's/^/  [--light --proximity]  /') &
  watchers+=($!)
  sleep 1.5
  echo "  (reading now: $(open_ambient_files) light/proximity files open)"
  for step in "a lamp is turned on (150 lux):$light/in_illuminance_raw:290" \
    "a hand covers the proximity sensor:$proximity/in_proximity_raw:200" \
    "the hand goes away:$proximity/in_proximity_raw:0" \
    "the lamp is turned off (15 lux):$light/in_illuminance_raw:20"; do
    echo "  -> ${step%%:*}"
    local rest=${step#*:}
    printf '%s\n' "${rest##*:}" > "$testbed${rest%:*}"
    sleep 1
  done
}

stage_camera() {
  say "orientcam session follows orientd --watch --json: a photo in each new orientation"
  # Never delete anything the demo did not make: an existing folder must be empty or one of
  # its own earlier outputs (marked by .orientd-demo).
  if [ -d "$out" ] && [ -n "$(ls -A "$out")" ] && [ ! -e "$out/.orientd-demo" ]; then
    echo "demo: $out exists and is not an earlier demo output; set DEMO_OUT to another folder" >&2
    exit 73
  fi
  [ -e "$out/.orientd-demo" ] && rm -f "$out"/session-*.jpg "$out"/overlay-*.png "$out/session.jsonl"
  mkdir -p "$out"
  touch "$out/.orientd-demo"
  mkfifo "$work/watch.fifo"
  "$orientd" --watch --json > "$work/watch.fifo" &
  watchers+=($!)
  scripts/demo/session.sh "$out" --watch "$work/watch.fifo" --timeout 40 \
    > "$work/session.log" 2>&1 &
  session_runner=$!
}

stage_camera_results() {
  say "the camera session"
  wait "$session_runner" || { cat "$work/session.log"; exit 1; }
  sed 's/^/  /' "$work/session.log"
  echo
  echo "Photos (upright, EXIF Orientation 1) and overlay renders are in: $out"
  ls -1 "$out" | sed 's/^/  /'
}

stage_get() {
  say "orientd --get --json (claims, answers, releases)"
  "$orientd" --get --json
}

stage_finish() {
  say "the watchers stop (SIGTERM): their claims go, orientd stops reading the sensor"
  for pid in "${watchers[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  sleep 1
  echo "  open in_accel_* files: $(open_sensor_files), light/proximity files: $(open_ambient_files)"
  kill -TERM "$daemon_pid"
  wait "${pids[0]}" 2>/dev/null || true
  say "orientd's log"
  sed 's/^/  /' "$work/orientd.log"
}

for stage in "${STAGES[@]}"; do "stage_$stage"; done
