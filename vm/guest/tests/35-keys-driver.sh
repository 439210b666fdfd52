#!/bin/bash
# Keys: uinput + evdev give the project's emulated keyboard (emu/uinput_keyboard.py) an event node;
# without a grab every reader gets the volume key; EVIOCGRAB makes one reader exclusive (a second
# grab gets EBUSY, other readers see nothing, KEY_A included); releasing the grab restores them.
# timeout: 60
# shellcheck source=vm/guest/lib.sh
. /run/vm/project/vm/guest/lib.sh

require "uinput and evdev load" kmod -a uinput evdev
require "the keyboard emulator starts" keyboard_start
log "keyboard: $(tr '\n' ' ' <"$KEYS_STATUS")"

spawn reader-a "${PY[@]}" "$GUEST/tools/evdev_probe.py" watch --out "$TOUT/a.keys" "$KEYS_NODE"
spawn reader-b "${PY[@]}" "$GUEST/tools/evdev_probe.py" watch --out "$TOUT/b.keys" "$KEYS_NODE"
listening() { has_line "$TOUT/a.keys" ready && has_line "$TOUT/b.keys" ready; }
require "two readers are listening" wait_for 20 "both readers" listening
keys press volumeup
check "reader A gets KEY_VOLUMEUP down and up" wait_for 10 "A's events" key_events "$TOUT/a.keys" 115 2
check "reader B gets them too" wait_for 10 "B's events" key_events "$TOUT/b.keys" 115 2
check "nobody holds a grab yet" not "${PY[@]}" "$GUEST/tools/evdev_probe.py" grabbed "$KEYS_NODE"
stop reader-a

spawn grabber "${PY[@]}" "$GUEST/tools/evdev_probe.py" watch --grab --out "$TOUT/grabber.keys" "$KEYS_NODE"
require "a third reader grabs the device" wait_for 20 "the grab" has_line "$TOUT/grabber.keys" ready
check "a second EVIOCGRAB fails with EBUSY" "${PY[@]}" "$GUEST/tools/evdev_probe.py" grabbed "$KEYS_NODE"
keys press volumeup
keys press a
check "the grabbing reader gets KEY_VOLUMEUP and KEY_A" \
  wait_for 10 "the grabber's events" key_events "$TOUT/grabber.keys" 30 2
check "it got the volume key too" key_events "$TOUT/grabber.keys" 115 2
check "reader B saw nothing while grabbed" key_events "$TOUT/b.keys" 115 2 exactly
check "not even KEY_A" key_events "$TOUT/b.keys" 30 0 exactly

stop grabber
check "the grab is gone with the grabbing process" \
  wait_for 10 "the grab to go" not "${PY[@]}" "$GUEST/tools/evdev_probe.py" grabbed "$KEYS_NODE"
keys press volumeup
check "reader B receives again" wait_for 10 "B's events" key_events "$TOUT/b.keys" 115 4
finish
