#!/bin/bash
# Product: the volume keys as a shutter. During `orientcam session --shutter-keys volumeup
# --headless`, pressing KEY_VOLUMEUP on the emulated keyboard takes a photo; meanwhile another
# reader sees no volume key events at all (the device is grabbed) but does see KEY_A, re-emitted
# by orientcam on its own device; when the session ends the grab is gone.
# timeout: 120
# shellcheck source=vm/guest/lib.sh
. /run/vm/project/vm/guest/lib.sh

need_product orientcam session -- --shutter-keys --headless --source --orientation
require "vivid creates $VIDEO" vivid_start
require "uinput and evdev load" kmod -a uinput evdev
require "the keyboard emulator starts" keyboard_start
spawn reader "$PY" "$GUEST/tools/evdev_probe.py" watch --all --out "$TOUT/reader.keys"
require "a second reader listens to every input device" wait_for 20 "the reader" grep -qs ready "$TOUT/reader.keys"
mkdir -p "$TOUT/shots"
spawn session "$BIN/orientcam" session --source "v4l2:$VIDEO" --resolution 640x480 \
  --orientation normal --shutter-keys volumeup --headless -o "$TOUT/shots/shot-{n}.jpg" --json
# Probing with a grab of our own could steal the device from orientcam as it starts; watch its
# behaviour instead: press KEY_A until the reader sees it re-emitted from another device.
reemitted_a() { awk -v n="$KEYS_NODE" '$2 != n && $4 == 30' "$TOUT/reader.keys" | grep -q .; }
press_a_until_reemitted() { keys press a && reemitted_a; }
require "the session grabs the keyboard and re-emits KEY_A on a device of its own" \
  wait_for 30 "re-emitted KEY_A" press_a_until_reemitted
# From the first re-emitted event on, the keyboard is grabbed.
since=$(awk -v n="$KEYS_NODE" '$2 != n && $4 == 30 { print $1; exit }' "$TOUT/reader.keys")
keys press volumeup
shot() { compgen -G "$TOUT/shots/*.jpg" >/dev/null; }
check "KEY_VOLUMEUP took a photo" wait_for 20 "a photo" shot
for photo in "$TOUT"/shots/*.jpg; do
  check "  ${photo##*/} is upright" "$PY" "$GUEST/tools/check_upright.py" "$photo" --rotation 0
done
reemitted_count() { awk -v n="$KEYS_NODE" '$2 != n && $4 == 30' "$TOUT/reader.keys" | wc -l; }
reemitted_more() { [ "$(reemitted_count)" -ge "$1" ]; }
before=$(reemitted_count)
keys press a
check "KEY_A keeps being re-emitted (down and up)" \
  wait_for 10 "another re-emitted KEY_A" reemitted_more $((before + 2))
check "no reader saw KEY_VOLUMEUP, on any device" not grep -q ' 115 ' "$TOUT/reader.keys"
check "nothing came from the grabbed device itself after the grab" \
  not awk -v n="$KEYS_NODE" -v t="$since" '$2 == n && $1 > t { f = 1 } END { exit !f }' "$TOUT/reader.keys"
stop session
check "the grab is gone after the session" \
  not "$PY" "$GUEST/tools/evdev_probe.py" grabbed "$KEYS_NODE"
keys press volumeup
direct_volume() { awk -v n="$KEYS_NODE" '$2 == n && $4 == 115' "$TOUT/reader.keys" | grep -q .; }
check "KEY_VOLUMEUP reaches other readers again" wait_for 10 "KEY_VOLUMEUP" direct_volume
finish
