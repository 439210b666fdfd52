#!/bin/bash
# Product: orientd serves the gyroscope and the device rotation (issue 26 phase 2) through the
# real HID drivers: emu/hid_accel.py --kind gyro and --kind rotation become gyro_3d
# (hid-sensor-gyro-3d) and dev_rotation (hid-sensor-rotation); orientd lists them
# (--list-sensors --json kinds "gyroscope" and "rotation"), reads both buffered only while a
# client holds org.orientd.Motion1 (buffers off before and after), and `orientd --watch --motion
# --json` prints the emulators' angular velocity and quaternion, the hub's sampling frequency at
# the PropertyRate while no stream asks more. Then the benchmark, printed and not asserted beyond
# "no gap" and the hub's frequency: stream clients (tools/motion_stream.py, real dbus-python
# clients with the socket from OpenStream) at 100 Hz, 1 and 3 at a time, batches of 1 and 10, and
# one at 25 Hz (the hub then runs at 25 Hz), batches of 1 and 10: latency from
# the kernel's scan timestamp to the client's decoding, client wakeups per second, and the
# daemon's context switches per second (voluntary + involuntary, /proc/PID/status).
# timeout: 420
# shellcheck source=vm/guest/lib.sh
. /run/vm/project/vm/guest/lib.sh

MOTION_PATH=/org/orientd/Motion1
MOTION_IFACE=org.orientd.Motion1
motion_prop() {
  busctl --system get-property "$ORIENTD_NAME" "$MOTION_PATH" "$MOTION_IFACE" "$1" 2>&1
}
buffer_is() { first_line "$1/buffer/enable" && [ "$FIRST_LINE" = "$2" ]; }
both_buffers() { buffer_is "$GYRO_DEV" "$1" && buffer_is "$ROT_DEV" "$1"; }
# watch_near KEY V1 V2...: the last --watch --motion line's KEY is within 0.002 of V1 V2 ...
watch_near() {
  local key=$1
  shift
  "${PY[@]}" - "$TOUT/watch.log" "$key" "$@" <<'PYEOF'
import json, sys
lines = [l for l in open(sys.argv[1]) if l.startswith('{')]
if not lines:
    sys.exit(1)
got = json.loads(lines[-1]).get(sys.argv[2]) or []
want = [float(v) for v in sys.argv[3:]]
sys.exit(0 if len(got) == len(want) and all(abs(a - b) <= 0.002 for a, b in zip(got, want)) else 1)
PYEOF
}
ctxt() { awk '/ctxt_switches/ { n += $2 } END { print n }' "/proc/$1/status"; }
# rate_is ATTRIBUTE HZ: the gyroscope's (or rotation's) sampling frequency reads HZ.
rate_is() { first_line "$1" && awk -v v="$FIRST_LINE" -v w="$2" 'BEGIN { exit !(v + 0 == w + 0) }'; }
# bench CLIENTS BATCH [RATE]: one run of tools/motion_stream.py at RATE (default 100), its
# summary as a BENCH line with the gyroscope's sampling frequency read while it streams.
bench() {
  local clients=$1 batch=$2 rate=${3:-100} before after start end rc run reader
  run="$clients-$batch-$rate"
  pid_of orientd
  before=$(ctxt "$PID")
  start=$(uptime_s)
  # Read once the client has claimed and opened its stream (that takes it a second or two).
  (sleep "${VM_BENCH_SECONDS:-4}"; cat "$GYRO_DEV/in_anglvel_sampling_frequency" \
    >"$TOUT/bench-$run.hz" 2>&1) &
  reader=$!
  /usr/bin/python3 "$GUEST/tools/motion_stream.py" --clients "$clients" --batch "$batch" \
    --rate "$rate" --seconds "${VM_BENCH_SECONDS:-4}" >"$TOUT/bench-$run.jsonl" \
    2>"$TOUT/bench-$run.err"
  rc=$?
  end=$(uptime_s)
  after=$(ctxt "$PID")
  wait "$reader"
  cat "$TOUT/bench-$run.jsonl" "$TOUT/bench-$run.err"
  "${PY[@]}" - "$TOUT/bench-$run.jsonl" "$clients" "$batch" \
    "$(awk -v a="$before" -v b="$after" -v s="$start" -v e="$end" 'BEGIN { printf "%.1f", (b - a) / (e - s) }')" \
    "$rate" "$(head -n 1 "$TOUT/bench-$run.hz")" <<'PYEOF'
import json, sys
runs = [json.loads(l) for l in open(sys.argv[1]) if l.startswith('{')]
def worst(key):
    return max(r['latency_ms'][key] for r in runs) if runs else None
print('BENCH motion rate=%s sensor_hz=%s clients=%s batch=%s records=%s gaps=%s latency_ms p50=%s '
      'p95=%s p99=%s client_wakeups_per_s=%s daemon_ctxt_per_s=%s' % (
          sys.argv[5], sys.argv[6], sys.argv[2], sys.argv[3], [r['records'] for r in runs],
          sum(r['gaps'] for r in runs), worst('p50'), worst('p95'), worst('p99'),
          [r['wakeups_per_s'] for r in runs], sys.argv[4]))
PYEOF
  return $rc
}

need_product orientd -- --watch --motion
require "systemd-udevd runs" udev_start
require "a system bus with the project's policies" bus_start "$PROJECT/dbus"
require "the emulated gyroscope becomes gyro_3d" hid_start gyro
GYRO_DEV=$(readlink -f "$IIO_DEV")
require "the emulated device rotation becomes dev_rotation" hid_start rotation
ROT_DEV=$(readlink -f "$IIO_DEV")
udevadm settle --timeout=20
hid gyro rate 0.1 -0.2 3
hid rotation quaternion 0.7071 0.7071 0 0

"$BIN/orientd" --list-sensors --json >"$TOUT/list.json" 2>"$TOUT/list.err"
json_fields "$TOUT/list.json" motion.0.kind motion.0.name motion.1.kind motion.1.name \
  motion.0.read motion.1.read
check "--list-sensors --json: kind gyroscope, gyro_3d" eval 'field_is motion.0.kind gyroscope && field_is motion.0.name gyro_3d'
check "--list-sensors --json: kind rotation, dev_rotation" eval 'field_is motion.1.kind rotation && field_is motion.1.name dev_rotation'
log "read: $(grep read "$RUNDIR/fields" | tr '\n' ' ')"

spawn orientd "$BIN/orientd" --verbose
require "orientd owns $ORIENTD_NAME" wait_for 30 "orientd on the bus" bus_has_owner "$ORIENTD_NAME"
check "HasGyroscope and HasRotation are true, RotationSource sensor" \
  wait_for 20 "the motion properties" eval '[ "$(motion_prop HasGyroscope)" = "b true" ] && [ "$(motion_prop HasRotation)" = "b true" ] && [ "$(motion_prop RotationSource)" = "s \"sensor\"" ]'
check "nothing is read while nobody holds Motion1 (both buffers off)" both_buffers 0

spawn watch "$BIN/orientd" --watch --motion --json
check "a motion client makes orientd read both buffered" wait_for 30 "both buffers on" both_buffers 1
check "properties only, the rotation from the sensor: both at the PropertyRate (5 Hz)" \
  wait_for 20 "5 Hz" eval 'rate_is "$GYRO_DEV/in_anglvel_sampling_frequency" 5 && rate_is "$ROT_DEV/in_rot_sampling_frequency" 5'
check "--watch --motion prints the gyroscope's angular_velocity [0.1, -0.2, 3]" \
  wait_for 30 "angular_velocity" watch_near angular_velocity 0.1 -0.2 3
check "and the rotation sensor's quaternion [0.7071, 0.7071, 0, 0]" \
  wait_for 30 "rotation" watch_near rotation 0.7071 0.7071 0 0
hid gyro rate 0 0 -1.5
hid rotation quaternion 1 0 0 0
check "both follow the emulators: [0, 0, -1.5] and [1, 0, 0, 0]" \
  wait_for 30 "the changes" eval 'watch_near angular_velocity 0 0 -1.5 && watch_near rotation 1 0 0 0'
log "watch: $(tail -n 2 "$TOUT/watch.log" | tr '\n' '|')"
# What a properties-only client costs: both sensors at 5 Hz (before issue 26's rate: 100 Hz).
pid_of orientd
idle_before=$(ctxt "$PID")
idle_start=$(uptime_s)
sleep "${VM_BENCH_SECONDS:-4}"
echo "BENCH motion watch-only sensor_hz=$(head -n 1 "$GYRO_DEV/in_anglvel_sampling_frequency") daemon_ctxt_per_s=$(awk -v a="$idle_before" -v b="$(ctxt "$PID")" -v s="$idle_start" -v e="$(uptime_s)" 'BEGIN { printf "%.1f", (b - a) / (e - s) }')"
stop watch
check "the client gone, both buffers are off again" wait_for 20 "buffers off" both_buffers 0

for clients in 1 3; do
  for batch in 1 10; do
    check "stream: $clients client(s), batches of $batch, no gap" bench "$clients" "$batch"
  done
done
# The sensor follows the clients: a 25 Hz client runs the hub at 25 Hz, every sample its own.
check "stream at 25 Hz: the hub at 25 Hz, no gap" bench 1 1 25
check "its sampling frequency read 25 while it ran" rate_is "$TOUT/bench-1-1-25.hz" 25
check "stream at 25 Hz, batches of 10, no gap" bench 1 10 25
check "the stream clients gone, both buffers are off again" wait_for 20 "buffers off" both_buffers 0
log "orientd: $(grep -E 'gyro|rotation|stream' "$TOUT/orientd.log" | tail -n 8 | tr '\n' '|')"
finish
