#!/bin/bash
# Benchmark, printed and not asserted: latency from a physical change (the emulated sensor's new
# vector) to a client seeing the new orientation, for Debian's iio-sensor-proxy and for orientd,
# one after the other on the same emulated accelerometer, with Debian's monitor-sensor as the
# client of both (and orientd --watch --json for orientd's own API). Numbers under QEMU's software
# emulation are slower than on hardware; the comparison is what counts. Fails only when a daemon
# misses changes (then the numbers would mean nothing).
# timeout: 200
# shellcheck source=vm/guest/lib.sh
. /run/vm/project/vm/guest/lib.sh

ROUNDS=${VM_BENCH_ROUNDS:-2}
require "systemd-udevd runs with the test hwdb" udev_start
require "the emulated accelerometer appears" accel_start --mount-matrix "$HWDB_MATRIX"
accel orient normal
require "udev has processed it" udevadm settle --timeout=20

# turn CLIENT_LINES PATTERN: turn the device ROUNDS times through the four orientations, each time
# waiting for the client to show the new one; the change times go to $RUNDIR/changes.
count_matching() { grep -cE "$2" "$1" 2>/dev/null; }
more_matching() { [ "$(count_matching "$1" "$2")" -gt "$3" ]; }
turn() {
  local lines=$1 template=$2 round orientation pattern before
  : >"$RUNDIR/changes"
  for round in $(seq "$ROUNDS"); do
    for orientation in left-up bottom-up right-up normal; do
      pattern=${template//\{o\}/$orientation}
      before=$(count_matching "$lines" "$pattern")
      accel orient "$orientation"
      echo "$(accel_get changed_at) $orientation" >>"$RUNDIR/changes"
      wait_for 10 "$orientation on the client" more_matching "$lines" "$pattern" "$before" || return 1
    done
  done
}
bench_line() {
  local what=$1 lines=$2 template=$3 stats
  stats=$("$PY" "$GUEST/tools/latency.py" "$RUNDIR/changes" "$lines" "$template")
  echo "BENCH latency $what: $stats"
  cp "$RUNDIR/changes" "$TOUT/changes-${what%% *}.txt"
  cp "$lines" "$TOUT/"
}
MONITOR_TEMPLATE='orientation changed: {o}$'
WATCH_TEMPLATE='"orientation"\s*:\s*"{o}"'

# --- Debian's iio-sensor-proxy, its own policy from /etc/dbus-1/system.d
require "a system bus with Debian's policies" bus_start /etc/dbus-1/system.d
spawn iio-sensor-proxy /usr/sbin/iio-sensor-proxy
require "iio-sensor-proxy owns net.hadess.SensorProxy" \
  wait_for 30 "iio-sensor-proxy on the bus" bus_has_owner net.hadess.SensorProxy
spawn monitor "$PY" "$GUEST/tools/stamp_lines.py" "$RUNDIR/monitor-iio-sensor-proxy.lines" -- monitor-sensor
require "monitor-sensor sees its accelerometer" \
  wait_for 30 "monitor-sensor" grep -qs 'Has accelerometer' "$RUNDIR/monitor-iio-sensor-proxy.lines"
check "iio-sensor-proxy reports every change to monitor-sensor" \
  turn "$RUNDIR/monitor-iio-sensor-proxy.lines" "$MONITOR_TEMPLATE"
bench_line "iio-sensor-proxy $(dpkg-query -W -f='${Version}' iio-sensor-proxy) -> monitor-sensor" \
  "$RUNDIR/monitor-iio-sensor-proxy.lines" "$MONITOR_TEMPLATE"
stop monitor
stop iio-sensor-proxy
bus_stop
# iio-sensor-proxy 3.0 leaves the kernel buffer enabled when it stops; start orientd's run from
# the state a freshly booted system has.
if buffer_on; then
  log "iio-sensor-proxy left $IIO_NAME's buffer enabled; disabling it for the next run"
  echo 0 >"$IIO_DEV/buffer/enable"
fi
accel orient normal

# --- orientd with its compatibility API (and Debian's policy for net.hadess.SensorProxy, as on a
# system where iio-sensor-proxy's package is installed), then its own API.
if [ ! -x "$BIN/orientd" ] || ! "$BIN/orientd" --help 2>&1 | grep -q -- --watch; then
  echo "BENCH latency orientd: SKIPPED, product not built yet"
  echo "orientd not built yet: iio-sensor-proxy only" >"$TOUT/note"
  finish
fi
require "a system bus with the project's and Debian's policies" bus_start "$PROJECT/dbus" /etc/dbus-1/system.d
spawn orientd "$BIN/orientd" --verbose
require "orientd owns $ORIENTD_NAME" wait_for 30 "orientd on the bus" bus_has_owner "$ORIENTD_NAME"
if wait_for 10 "orientd's net.hadess.SensorProxy" bus_has_owner net.hadess.SensorProxy; then
  spawn monitor "$PY" "$GUEST/tools/stamp_lines.py" "$RUNDIR/monitor-orientd.lines" -- monitor-sensor
  require "monitor-sensor sees orientd's accelerometer" \
    wait_for 30 "monitor-sensor" grep -qs 'Has accelerometer' "$RUNDIR/monitor-orientd.lines"
  check "orientd reports every change to monitor-sensor" \
    turn "$RUNDIR/monitor-orientd.lines" "$MONITOR_TEMPLATE"
  bench_line "orientd -> monitor-sensor" "$RUNDIR/monitor-orientd.lines" "$MONITOR_TEMPLATE"
  stop monitor
else
  check "orientd serves net.hadess.SensorProxy for monitor-sensor" false
fi
watch_start
require "orientd --watch answers" wait_for 20 "--watch" watch_reports normal
check "orientd reports every change to --watch" turn "$WATCH_LINES" "$WATCH_TEMPLATE"
bench_line "orientd -> orientd --watch --json" "$WATCH_LINES" "$WATCH_TEMPLATE"
finish
