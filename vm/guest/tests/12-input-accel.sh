#!/bin/bash
# An input-subsystem accelerometer (as HP laptops' lis3lv02d): emu/uinput_accel.py makes an evdev
# device with ABS_X/Y/Z and INPUT_PROP_ACCELEROMETER; real udev marks it ID_INPUT_ACCELEROMETER=1
# (input_id builtin) and iio-sensor-proxy's rules IIO_SENSOR_PROXY_TYPE=input-accel. Product:
# `orientd --list-sensors --json` chooses it (mode events, 1000 units per g from the axis
# resolution); with no client orientd holds no input node; `orientd --watch --json` and
# Debian's monitor-sensor follow it through the four orientations; after the clients leave the
# node is closed again.
# timeout: 120
# shellcheck source=vm/guest/lib.sh
. /run/vm/project/vm/guest/lib.sh

INPUT_CTL=$RUNDIR/input.control
INPUT_STATUS=$RUNDIR/input.status
INPUT_SENT=0
input_accel() {
  INPUT_SENT=$((INPUT_SENT + 1))
  echo "$*" >"$INPUT_CTL"
  wait_for 10 "the input accelerometer to handle '$*'" input_handled "$INPUT_SENT"
}
input_handled() { kv "$INPUT_STATUS" commands && [ "$KV_VALUE" -ge "$1" ]; }
# orientd_holds_node: the daemon has the emulator's event node open.
orientd_holds_node() { orientd_holds "$INPUT_NODE"; }
# monitor_says ORIENTATION: monitor-sensor's last line reports the change.
monitor_says() {
  last_line_with "$TOUT/monitor-sensor.log" 'orientation changed' &&
    [[ $LAST_LINE == *"orientation changed: $1" ]]
}

require "uinput and evdev" kmod -a uinput evdev
require "systemd-udevd runs" udev_start
rm -f "$INPUT_CTL" "$INPUT_STATUS"
mkfifo "$INPUT_CTL"
spawn input-accel "${PY[@]}" "$GUEST/emu/uinput_accel.py" --control "$INPUT_CTL" --status "$INPUT_STATUS"
require "the emulated input accelerometer has an event node" \
  wait_for 20 "its status" test -s "$INPUT_STATUS"
kv "$INPUT_STATUS" node
INPUT_NODE=$KV_VALUE
INPUT_EVENT=${INPUT_NODE##*/}
require "udev has processed it" udevadm settle --timeout=20
udevadm info -q property -n "$INPUT_NODE" >"$TOUT/udev-properties.txt"
check "udev: ID_INPUT_ACCELEROMETER=1 (input_id, from INPUT_PROP_ACCELEROMETER)" \
  has_line "$TOUT/udev-properties.txt" 'ID_INPUT_ACCELEROMETER=1'
if has_line "$TOUT/udev-properties.txt" 'IIO_SENSOR_PROXY_TYPE=*'; then
  check "udev: iio-sensor-proxy's rules type it input-accel" \
    has_line "$TOUT/udev-properties.txt" 'IIO_SENSOR_PROXY_TYPE=input-accel'
fi

need_product orientd -- --list-sensors --watch --json
"$BIN/orientd" --list-sensors --json >"$TOUT/list-sensors.json" 2>"$TOUT/list-sensors.err"
check "orientd --list-sensors --json exits 0" test $? -eq 0
json_fields "$TOUT/list-sensors.json" chosen chosenMode sensors.0.devnode sensors.0.scale.0
log "read: $(tr '\n' ' ' <"$RUNDIR/fields")"
check "--list-sensors chooses $INPUT_EVENT" field_is chosen "$INPUT_EVENT"
check "  read as events" field_is chosenMode events
check "  from $INPUT_NODE" field_is sensors.0.devnode "$INPUT_NODE"
field sensors.0.scale.0
check "  scale 9.80665/1000 m/s^2 per unit (resolution 1000 per g), got $FIELD" \
  test "${FIELD:0:8}" = 0.009806

require "a system bus with the project's policies" bus_start "$PROJECT/dbus"
spawn orientd "$BIN/orientd" --verbose
require "orientd owns $ORIENTD_NAME" wait_for 30 "orientd on the bus" bus_has_owner "$ORIENTD_NAME"
require "orientd found the accelerometer (HasAccelerometer)" \
  wait_for 20 "HasAccelerometer true" orientd_has_accel
check "with no client orientd holds no $INPUT_NODE" not orientd_holds_node

watch_start
spawn monitor-sensor stdbuf -oL monitor-sensor
check "--watch: normal first" wait_for 20 "normal" watch_reports normal
check "a client: orientd reads $INPUT_NODE" wait_for 10 "the node open" orientd_holds_node
for turn in left-up:90 bottom-up:180 right-up:270 normal:0; do
  input_accel orient "${turn%:*}"
  check "--watch reports ${turn%:*}" wait_for 15 "${turn%:*}" watch_reports "${turn%:*}"
  check "  rotation ${turn#*:}" watch_rotation "${turn#*:}"
  check "monitor-sensor reports ${turn%:*}" wait_for 15 "${turn%:*}" monitor_says "${turn%:*}"
done
stop watch
stop monitor-sensor
check "after the clients leave orientd closes $INPUT_NODE" \
  wait_for 15 "the node closed" not orientd_holds_node
finish
