#!/bin/bash
# Benchmark, printed and not asserted: latency from a physical change (the emulated sensor's new
# vector, sent to the driver at once as an input report) to a client seeing the new orientation,
# for Debian's iio-sensor-proxy and for orientd, one after the other on the same emulated
# accelerometer (buffered, through the same kernel driver and udev/hwdb matrix), with Debian's
# monitor-sensor as the client of both, and orientd --watch --json for orientd's own API. Each
# line also gives the daemon's CPU time during the turns. Numbers under QEMU's software emulation
# are slower than on hardware; the comparison is what counts. Fails when a daemon misses a
# change (then the numbers would mean nothing), or, as every product check, when orientd is
# missing under CI=true. One product check rides along, since only this test has
# iio-sensor-proxy: version 3.0 leaves the kernel buffer enabled when it stops, and orientd,
# started next, must take that buffer over and leave it disabled after its last client.
# With VM_BENCH_IDLE / VM_BENCH_STILL (seconds, given to vm/run.sh) each run also counts the
# daemon's wakeups unclaimed and its wakeups, CPU and the hub's reports claimed and still.
# timeout: 400
# shellcheck source=vm/guest/lib.sh
. /run/vm/project/vm/guest/lib.sh

ROUNDS=${VM_BENCH_ROUNDS:-2}
# Seconds of unclaimed and of claimed-still measurement per run (0: none, as in CI; see
# docs/benchmark.md for the run with them).
IDLE=${VM_BENCH_IDLE:-0} STILL=${VM_BENCH_STILL:-0}
require "systemd-udevd runs with the test hwdb" udev_start
require "the emulated accelerometer appears" accel_start --mount-matrix "$HWDB_MATRIX"
accel orient normal
require "udev has processed it" udevadm settle --timeout=20

MONITOR_READY='orientation: normal\)$|orientation changed: normal$'
MONITOR_TEMPLATE='orientation changed: {o}$'
# bench LABEL DAEMON READY TEMPLATE CLIENT...: tools/bench_turns.py, its BENCH line in the log.
bench() {
  local label=$1 daemon=$2 ready=$3 template=$4
  shift 4
  pid_of "$daemon"
  "${PY[@]}" "$GUEST/tools/bench_turns.py" --control "$ACCEL_CTL" --status "$ACCEL_STATUS" \
    --label "$label" --ready "$ready" --template "$template" --rounds "$ROUNDS" \
    --idle "$IDLE" --still "$STILL" \
    --daemon-pid "$PID" --out "$TOUT" -- "$@" 2>"$TOUT/bench-client.err"
  local rc=$?
  kv "$ACCEL_STATUS" commands && ACCEL_SENT=$KV_VALUE # the bench sent commands of its own
  return $rc
}

# --- Debian's iio-sensor-proxy, its own policy from /etc/dbus-1/system.d
require "a system bus with Debian's policies" bus_start /etc/dbus-1/system.d
spawn iio-sensor-proxy /usr/sbin/iio-sensor-proxy
require "iio-sensor-proxy owns net.hadess.SensorProxy" \
  wait_for 30 "iio-sensor-proxy on the bus" bus_has_owner net.hadess.SensorProxy
check "iio-sensor-proxy reports every change to monitor-sensor" \
  bench "iio-sensor-proxy $(dpkg-query -W -f='${Version}' iio-sensor-proxy) -> monitor-sensor" \
  iio-sensor-proxy "$MONITOR_READY" "$MONITOR_TEMPLATE" monitor-sensor
stop iio-sensor-proxy
sent=$(accel_get reports_sent)
bus_stop
left_enabled=0
if buffer_on; then
  log "iio-sensor-proxy left $IIO_NAME's buffer enabled (trigger '$(<"$IIO_DEV/trigger/current_trigger")'); orientd takes it from here"
  left_enabled=1
  # Nobody reads, yet the sensor streams on into the kernel's buffer: upright scans, stale once
  # the device turns.
  check "scans (upright) go on piling up in the abandoned buffer" \
    wait_for 10 "3 more reports" accel_at_least reports_sent $((sent + 3))
fi
accel orient left-up

# --- orientd with its compatibility API (and Debian's policy for net.hadess.SensorProxy, as on a
# system where iio-sensor-proxy's package is installed), then its own API.
if [ ! -x "$BIN/orientd" ] || ! "$BIN/orientd" --help 2>&1 | grep -q -- --watch; then
  [ "${VM_CI:-false}" = true ] && fail "CI=true and orientd (with --watch) is not in the build products"
  echo "BENCH latency orientd: SKIPPED, product not built yet"
  echo "orientd not built yet: iio-sensor-proxy only" >"$TOUT/note"
  finish
fi
require "a system bus with the project's and Debian's policies" bus_start "$PROJECT/dbus" /etc/dbus-1/system.d
spawn orientd "$BIN/orientd" --verbose
require "orientd owns $ORIENTD_NAME" wait_for 30 "orientd on the bus" bus_has_owner "$ORIENTD_NAME"
require "and net.hadess.SensorProxy" wait_for 10 "orientd's net.hadess.SensorProxy" \
  bus_has_owner net.hadess.SensorProxy
out=$("$BIN/orientd" --get --json 2>&1)
log "orientd --get --json: $out"
check "orientd's first answer is the device as it is now (left-up), not a stale scan" \
  eval '[[ $out == *\"orientation\":\"left-up\"* ]]'
accel orient normal
check "orientd reports every change to monitor-sensor" \
  bench "orientd -> monitor-sensor" orientd "$MONITOR_READY" "$MONITOR_TEMPLATE" monitor-sensor
check "orientd reports every change to orientd --watch --json" \
  bench "orientd -> orientd --watch --json" orientd '"orientation":"normal"' '"orientation":"{o}"' \
  "$BIN/orientd" --watch --json
if [ $left_enabled = 1 ]; then
  check "orientd took over the buffer iio-sensor-proxy left enabled and disabled it after its last client" \
    wait_for 10 "the buffer off" buffer_off
  check "and the sensor powered down" wait_for 10 "the sensor to be idle" accel_idle
fi
finish
