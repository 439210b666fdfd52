#!/bin/bash
# Product: the volume keys as a shutter. `orientcam session --shutter-keys volumeup --headless
# --json` grabs the emulated keyboard (uinput, evdev) and, since it has other keys, re-emits them
# through a uinput copy of it; its ready event names both (shutter_devices[].path and .pass_on).
# While the session runs: a new EVIOCGRAB of the keyboard fails (EBUSY); KEY_VOLUMEUP takes a
# photo, which is the camera's frame unturned (orientation normal); a second reader of the
# keyboard sees nothing (no volume key, no KEY_A) and a reader of the pass-on device sees KEY_A
# and no volume key. After the session (SIGTERM) the grab is gone: a new EVIOCGRAB succeeds and
# the keyboard's own node delivers KEY_VOLUMEUP again.
# timeout: 90
# shellcheck source=vm/guest/lib.sh
. /run/vm/project/vm/guest/lib.sh

need_product orientcam session -- --shutter-keys --headless --source --orientation --json
require "vivid creates $VIDEO" vivid_start
require "a reference frame, captured with v4l2-ctl" vivid_frame YUYV "$TOUT/reference.yuyv"
require "uinput and evdev load" kmod -a uinput evdev
require "the keyboard emulator starts" keyboard_start
kv "$KEYS_STATUS" name
KEYS_NAME=$KV_VALUE
log "keyboard: $KEYS_NODE ($KEYS_NAME)"

# node_key_events FILE NODE CODE N [exactly]: FILE (evdev_probe.py watch) has at least (exactly)
# N events of key CODE read from NODE.
node_key_events() {
  local n=0 stamp node name code value
  if [ -r "$1" ]; then
    while read -r stamp node name code value; do
      [ "$node" = "$2" ] && [ "$code" = "$3" ] && n=$((n + 1))
    done <"$1"
  fi
  if [ "${5:-}" = exactly ]; then [ "$n" -eq "$4" ]; else [ "$n" -ge "$4" ]; fi
}
# events_from FILE NODE: FILE has any event read from NODE.
events_from() {
  local stamp node rest
  [ -r "$1" ] || return 1
  while read -r stamp node rest; do
    [ "$node" = "$2" ] && return 0
  done <"$1"
  return 1
}
grabbed() { "${PY[@]}" "$GUEST/tools/evdev_probe.py" grabbed "$KEYS_NODE"; }
SESSION_LOG=$TOUT/session.log
session_says() { last_line_with "$SESSION_LOG" "\"event\":\"$1\""; }

mkdir -p "$TOUT/shots"
spawn session "$BIN/orientcam" session --source "v4l2:$VIDEO" --resolution 640x480 --format yuyv \
  --orientation normal --shutter-keys volumeup --headless -o "$TOUT/shots/shot-{n}.jpg" --json
require "the session is ready" wait_for 30 "the ready event" session_says ready
log "ready: $LAST_LINE"
json_fields "$SESSION_LOG" --match event=ready shutter_keys shutter_devices.0.path \
  shutter_devices.0.name shutter_devices.0.pass_on shutter_devices.1.path
check "it names volumeup as its shutter key" field_is shutter_keys '["volumeup"]'
check "it uses the emulated keyboard $KEYS_NODE" field_is shutter_devices.0.path "$KEYS_NODE"
check "  and no other device" field_is shutter_devices.1.path '<missing>'
field shutter_devices.0.pass_on
PASS_ON=$FIELD
check "it passes the keyboard's other keys on through a device of its own ($PASS_ON)" \
  eval '[[ $PASS_ON == /dev/input/event* && $PASS_ON != "$KEYS_NODE" ]] && test -c "$PASS_ON"'
first_line "/sys/class/input/${PASS_ON##*/}/device/name"
check "  which has the keyboard's name ('$FIRST_LINE')" test "$FIRST_LINE" = "$KEYS_NAME"
check "a new EVIOCGRAB of the keyboard fails with EBUSY: the session holds it" grabbed

spawn reader "${PY[@]}" "$GUEST/tools/evdev_probe.py" watch --out "$TOUT/reader.keys" \
  "$KEYS_NODE" "$PASS_ON"
require "a second reader listens to the keyboard and the pass-on device" \
  wait_for 20 "the reader" has_line "$TOUT/reader.keys" ready
keys press volumeup
check "KEY_VOLUMEUP took a photo" wait_for 20 "the photo event" session_says photo
log "photo: $LAST_LINE"
check "  from the key" eval '[[ $LAST_LINE == *"\"trigger\":\"key:volumeup\""* ]]'
# shots N: at least N photos are in the shots folder.
shots() {
  local files
  files=("$TOUT"/shots/*.jpg)
  [ -e "${files[0]}" ] && [ ${#files[@]} -ge "$1" ]
}
check "  written" shots 1
keys press a
check "KEY_A comes out of the pass-on device (down and up)" \
  wait_for 10 "KEY_A on $PASS_ON" node_key_events "$TOUT/reader.keys" "$PASS_ON" 30 2
keys press volumeup
check "the second volume key press took another photo" \
  wait_for 20 "a second photo" shots 2
check "the reader got no KEY_VOLUMEUP from either device" key_events "$TOUT/reader.keys" 115 0 exactly
check "and nothing at all from the grabbed keyboard" not events_from "$TOUT/reader.keys" "$KEYS_NODE"

stop session
check "the session ended cleanly" session_says end
log "end: $LAST_LINE"
check "the grab is gone: a new EVIOCGRAB succeeds" not grabbed
keys press volumeup
check "the keyboard's own node delivers KEY_VOLUMEUP to the reader again" \
  wait_for 10 "KEY_VOLUMEUP on $KEYS_NODE" node_key_events "$TOUT/reader.keys" "$KEYS_NODE" 115 2
check "the pass-on device is gone" wait_for 10 "$PASS_ON to go" not test -e "$PASS_ON"
stop reader

shots=()
for photo in "$TOUT"/shots/*.jpg; do shots+=("$photo=0"); done
"${PY[@]}" "$GUEST/tools/check_upright.py" --reference "$TOUT/reference.yuyv" --size 640x480 \
  "${shots[@]}" >"$TOUT/upright.txt" 2>&1
cat "$TOUT/upright.txt"
upright_results "$TOUT/upright.txt"
finish
