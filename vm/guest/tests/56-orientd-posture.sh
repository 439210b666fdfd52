#!/bin/bash
# Product: a convertible on the real driver stack: two HID sensor-hub accelerometers (uhid,
# hid-sensor-hub, hid-sensor-accel-3d), the second located in the base by udev
# (ACCEL_LOCATION=base, fixtures/61-orientd-vm-base.rules), both mounted with the hwdb matrix.
#   orientd-posture   with no firmware SW_TABLET_MODE device, orientd creates its own switch
#                     through uinput (tablet-mode-switch = auto); folded from laptop to tablet and
#                     back, Posture and TabletMode follow, and a reader of the switch's evdev
#                     node sees SW_TABLET_MODE 1, then 0. Both sensors are read buffered.
#   orientd-firmware-switch  with a firmware-like SW_TABLET_MODE device present (uinput, as
#                     intel-vbtn's), orientd makes no switch of its own and publishes the
#                     firmware switch's state as TabletMode (TabletModeSource switch);
#                     unplugged, TabletMode goes back to the hinge (and orientd makes its own
#                     switch); plugged in again while orientd runs, it takes over again.
# parts: orientd-posture orientd-firmware-switch
# timeout: 240
# shellcheck source=vm/guest/lib.sh
. /run/vm/project/vm/guest/lib.sh

POSTURE_PATH=/org/orientd/Posture1
POSTURE_IFACE=org.orientd.Posture1
BASE_CTL=$RUNDIR/base.control
BASE_STATUS=$RUNDIR/base.status
BASE_SENT=0
SWITCH_EVENTS=$RUNDIR/switch.events

# base SETTING...: one command to the base sensor's emulator, waiting until it is handled.
base() {
  BASE_SENT=$((BASE_SENT + 1))
  echo "$*" >"$BASE_CTL"
  wait_for 10 "the base emulator to handle '$*'" base_handled "$BASE_SENT"
}
base_handled() { kv "$BASE_STATUS" commands && [ "$KV_VALUE" -ge "$1" ]; }
# fold LID_VECTOR BASE_VECTOR: both sensors' readings, in the sensors' own frames (the hwdb
# matrix turns (x, y, z) into (y, -x, z) in the display frame).
fold() {
  accel vector "$1"
  base vector "$2"
}
# lid_at DEGREES: the lid's reading at that hinge angle with the base flat on a table (in the
# lid sensor's own frame: (g sin a, 0, g cos a), which the hwdb matrix turns into the display
# frame). A fold moves only the lid, a step at a time as a real one passes through each angle:
# closed and tablet read the same, and only continuity tells them apart.
lid_at() {
  accel vector "$(awk -v a="$1" 'BEGIN { r = a * atan2(0, -1) / 180; g = 9.80665
    printf "%.4f 0 %.4f", g * sin(r), g * cos(r) }')"
}
# hinge_near DEGREES: the published HingeAngle is within 5 degrees of DEGREES.
hinge_near() {
  local v
  v=$(posture_prop HingeAngle) || return 1
  awk -v v="${v#d }" -v a="$1" 'BEGIN { d = v - a; exit !(d < 5 && d > -5) }'
}
posture_prop() {
  busctl --system get-property "$ORIENTD_NAME" "$POSTURE_PATH" "$POSTURE_IFACE" "$1" 2>&1
}
posture_is() { [ "$(posture_prop Posture)" = "s \"$1\"" ]; }
# switch_seen VALUE: the last SW_TABLET_MODE (code 1) event the reader recorded has VALUE.
switch_seen() {
  last_line_with "$SWITCH_EVENTS" ' 1 ' && [[ $LAST_LINE == *" 1 $1" ]]
}
# find_switch: SWITCH_NODE is the event node of orientd's switch.
find_switch() {
  local d
  for d in /sys/class/input/event*; do
    first_line "$d/device/name"
    if [ "$FIRST_LINE" = "orientd tablet-mode switch" ]; then
      SWITCH_NODE=/dev/input/${d##*/}
      return 0
    fi
  done
  return 1
}
base_location() {
  local d
  for d in /sys/bus/iio/devices/iio:device*; do
    if udevadm info -q property -p "$d" 2>/dev/null | grep -qx 'ACCEL_LOCATION=base'; then
      BASE_DEV=$d
      return 0
    fi
  done
  return 1
}

part orientd-posture
need_product orientd -- --watch posture
require "systemd-udevd runs with the test hwdb" udev_start
cp "$GUEST/fixtures/61-orientd-vm-base.rules" /etc/udev/rules.d/ && udevadm control --reload
require "a system bus with the project's policies" bus_start "$PROJECT/dbus"
require "uinput and evdev" kmod -a uinput evdev
require "the lid's emulated accelerometer appears" accel_start --mount-matrix "$HWDB_MATRIX"
rm -f "$BASE_CTL" "$BASE_STATUS"
mkfifo "$BASE_CTL"
spawn base "${PY[@]}" "$GUEST/emu/hid_accel.py" --control "$BASE_CTL" --status "$BASE_STATUS" \
  --log "$TOUT/base-events.log" --name "orientd-vm base accelerometer" --product 0x0a78 \
  --mount-matrix "$HWDB_MATRIX"
require "udev has processed both" udevadm settle --timeout=20
require "udev located the second sensor in the base (ACCEL_LOCATION=base)" \
  wait_for 20 "ACCEL_LOCATION=base" base_location
log "base sensor: $BASE_DEV"
# Laptop at 110 degrees on a table.
fold "9.2152 0 -3.3541" "0 0 -9.80665"
spawn orientd "$BIN/orientd" --verbose
require "orientd owns $ORIENTD_NAME" wait_for 30 "orientd on the bus" bus_has_owner "$ORIENTD_NAME"
check "HasHinge is true" wait_for 20 "HasHinge" eval '[ "$(posture_prop HasHinge)" = "b true" ]'
require "orientd created its tablet-mode switch" wait_for 20 "the switch's event node" find_switch
log "switch: $SWITCH_NODE"
spawn switch "${PY[@]}" "$GUEST/tools/evdev_probe.py" watch --out "$SWITCH_EVENTS" --switches \
  "$SWITCH_NODE"
require "the switch reader is ready" wait_for 20 "the reader" has_line "$SWITCH_EVENTS" ready
# libinput, where its tools are installed, as the compositor's input stack would see it, with a
# built-in keyboard (i8042 bus, and KEY_Q..KEY_P, which libinput requires of a keyboard) that
# libinput pairs with the switch and suspends in tablet mode.
KBD_CTL=$RUNDIR/kbd.control
KBD_STATUS=$RUNDIR/kbd.status
KBD_SENT=0
kbd() {
  KBD_SENT=$((KBD_SENT + 1))
  echo "$*" >"$KBD_CTL"
  wait_for 10 "the keyboard to handle '$*'" eval 'kv "$KBD_STATUS" commands && [ "$KV_VALUE" -ge "$KBD_SENT" ]'
}
libinput_saw() { grep -q "$1" "$TOUT/libinput.log"; }
if command -v libinput >/dev/null; then
  rm -f "$KBD_CTL" "$KBD_STATUS"
  mkfifo "$KBD_CTL"
  spawn kbd "${PY[@]}" "$GUEST/emu/uinput_keyboard.py" --control "$KBD_CTL" --status "$KBD_STATUS" \
    --name "orientd-vm built-in keyboard" --bus 0x11 \
    --keys volumeup,volumedown,a,16,17,18,19,20,21,22,23,24,25
  require "the built-in keyboard appears" wait_for 20 "its event node" \
    eval 'kv "$KBD_STATUS" node && [ -e "$KV_VALUE" ]'
  kv "$KBD_STATUS" node
  KBD_NODE=$KV_VALUE
  udevadm settle --timeout=10
  spawn libinput stdbuf -oL libinput debug-events --show-keycodes --device "$SWITCH_NODE" \
    --device "$KBD_NODE"
  check "libinput takes orientd's device for a switch" \
    wait_for 30 "DEVICE_ADDED" libinput_saw "DEVICE_ADDED.*orientd tablet-mode switch.*cap:S"
  check "libinput has the built-in keyboard" \
    wait_for 10 "DEVICE_ADDED keyboard" libinput_saw "DEVICE_ADDED.*orientd-vm built-in keyboard"
  kbd press a
  check "in laptop posture the keyboard types (KEY_A)" wait_for 10 "KEY_A" libinput_saw "KEY_A"
else
  log "no libinput tools here (libinput-tools): libinput's view not checked"
fi
check "Posture laptop" wait_for 20 "laptop" posture_is laptop
check "TabletMode false, from the hinge" \
  eval '[ "$(posture_prop TabletMode)" = "b false" ] && [ "$(posture_prop TabletModeSource)" = "s \"hinge\"" ]'
check "the base sensor is read buffered (its buffer is on)" \
  wait_for 10 "the base buffer" eval 'first_line "$BASE_DEV/buffer/enable" && [ "$FIRST_LINE" = 1 ]'
# Folded all the way back, through flat and stand: a tablet.
lid_at 180
check "HingeAngle 180, Posture flat" wait_for 20 "flat" eval 'hinge_near 180 && posture_is flat'
lid_at 270
check "HingeAngle 270" wait_for 20 "270 degrees" hinge_near 270
lid_at 350
check "Posture tablet" wait_for 20 "tablet" posture_is tablet
check "HingeAngle 350" hinge_near 350
check "TabletMode true" eval '[ "$(posture_prop TabletMode)" = "b true" ]'
check "the evdev reader saw SW_TABLET_MODE 1" wait_for 10 "SW_TABLET_MODE 1" switch_seen 1
if running libinput; then
  check "libinput reports the switch toggled on" wait_for 10 "SWITCH_TOGGLE state 1" \
    libinput_saw "SWITCH_TOGGLE.*switch tablet-mode state 1"
  # Typed while folded: libinput has suspended the keyboard (checked below, once a later key
  # has come through, since events arrive in order).
  kbd press volumedown
fi
# Opened again to laptop, the same way back.
lid_at 270
check "HingeAngle 270 on the way back" wait_for 20 "270 degrees" hinge_near 270
lid_at 180
check "HingeAngle 180 on the way back" wait_for 20 "180 degrees" hinge_near 180
lid_at 110
check "Posture laptop again" wait_for 20 "laptop" posture_is laptop
check "the evdev reader saw SW_TABLET_MODE 0" wait_for 10 "SW_TABLET_MODE 0" switch_seen 0
if running libinput; then
  check "libinput reports it toggled off" wait_for 10 "SWITCH_TOGGLE state 0" \
    libinput_saw "SWITCH_TOGGLE.*switch tablet-mode state 0"
  kbd press volumeup
  check "opened again, the keyboard types (KEY_VOLUMEUP)" \
    wait_for 10 "KEY_VOLUMEUP" libinput_saw "KEY_VOLUMEUP"
  check "what was typed in tablet posture never reached libinput (no KEY_VOLUMEDOWN)" \
    not libinput_saw "KEY_VOLUMEDOWN"
  stop libinput
  stop kbd
fi
cp "$SWITCH_EVENTS" "$TOUT/switch-events.txt"
stop switch
stop orientd
check "orientd removed its switch when it stopped" wait_for 10 "the switch gone" not find_switch
# Adaptive sampling raised buffer/watermark while still; the kernel takes it back only once the
# buffer is disabled.
check "orientd put every attribute back" not grep -q "cannot restore" "$TOUT/orientd.log"

part orientd-firmware-switch
FW_CTL=$RUNDIR/fw.control
FW_STATUS=$RUNDIR/fw.status
FW_SENT=0
fw() {
  FW_SENT=$((FW_SENT + 1))
  echo "$*" >"$FW_CTL"
  wait_for 10 "the firmware switch to handle '$*'" eval 'kv "$FW_STATUS" commands && [ "$KV_VALUE" -ge "$FW_SENT" ]'
}
rm -f "$FW_CTL" "$FW_STATUS"
mkfifo "$FW_CTL"
spawn fw "${PY[@]}" "$GUEST/emu/uinput_keyboard.py" --control "$FW_CTL" --status "$FW_STATUS" \
  --name "orientd-vm Intel Virtual Buttons" --keys "" --tablet-switch
require "the firmware-like switch appears" wait_for 20 "its event node" \
  eval 'kv "$FW_STATUS" node && [ -e "$KV_VALUE" ]'
spawn orientd-fw "$BIN/orientd" --verbose
require "orientd owns $ORIENTD_NAME" wait_for 30 "orientd on the bus" bus_has_owner "$ORIENTD_NAME"
check "TabletModeSource is switch" \
  wait_for 20 "switch" eval '[ "$(posture_prop TabletModeSource)" = "s \"switch\"" ]'
check "orientd made no switch of its own" not find_switch
fw switch on
check "TabletMode follows the firmware switch: true" \
  wait_for 10 "true" eval '[ "$(posture_prop TabletMode)" = "b true" ]'
fw switch off
check "and false" wait_for 10 "false" eval '[ "$(posture_prop TabletMode)" = "b false" ]'
# Hotplug: the firmware switch unplugged (a keyboard dock taken off) hands TabletMode back to the
# hinge and auto makes orientd's own switch; plugged in again while orientd runs, it takes over.
stop fw
check "unplugged: TabletModeSource is hinge" \
  wait_for 20 "hinge" eval '[ "$(posture_prop TabletModeSource)" = "s \"hinge\"" ]'
check "and orientd made its own switch" wait_for 10 "orientd's switch" find_switch
rm -f "$FW_STATUS"
FW_SENT=0
spawn fw "${PY[@]}" "$GUEST/emu/uinput_keyboard.py" --control "$FW_CTL" --status "$FW_STATUS" \
  --name "orientd-vm Intel Virtual Buttons" --keys "" --tablet-switch
check "plugged in again: TabletModeSource is switch" \
  wait_for 20 "switch" eval '[ "$(posture_prop TabletModeSource)" = "s \"switch\"" ]'
check "and orientd removed its own switch" wait_for 10 "the switch gone" not find_switch
fw switch on
check "TabletMode follows the hotplugged switch" \
  wait_for 10 "true" eval '[ "$(posture_prop TabletMode)" = "b true" ]'
stop orientd-fw
stop fw
stop base
finish
