#!/bin/bash
# Product: the daemon's face-aware rotation on real drivers: orientd with [face] enabled on the
# emulated HID accelerometer (hid-sensor-accel-3d), orientd-face on vivid (V4L2), python3-
# dbusmock's logind with an unlocked session on the system bus. vivid's colour bars hold no
# face: a turn is committed (accept, or the timeout under TCG), with CameraInUse true while
# orientd-face runs and false after; a camera another program streams from (EBUSY) is answered
# unknown and the turn committed; a locked session keeps the camera closed.
# timeout: 420
# shellcheck source=vm/guest/lib.sh
. /run/vm/project/vm/guest/lib.sh

need_product orientd-face resolve -- --camera --current --proposed --timeout --frames
[ -r /usr/lib/python3/dist-packages/dbusmock/templates/logind.py ] ||
  skip "python3-dbusmock is not installed"
require "vivid creates $VIDEO" vivid_start
# The root file system is the host's, read-only: the decoded detector is cached in /tmp.
export XDG_CACHE_HOME=$TOUT/cache CACHE_DIRECTORY=

# The bus: the project's policies plus one letting the test own logind's name.
mkdir -p "$TOUT/policy"
cp "$PROJECT"/dbus/*.conf "$TOUT/policy/"
cat >"$TOUT/policy/login1-test.conf" <<'EOF'
<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-BUS Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <policy user="root">
    <allow own="org.freedesktop.login1"/>
    <allow send_destination="org.freedesktop.login1"/>
  </policy>
</busconfig>
EOF
require "systemd-udevd runs with the test hwdb" udev_start
require "a system bus with the project's policies" bus_start "$TOUT/policy"
spawn logind /usr/bin/python3 -m dbusmock --system --template logind
require "dbusmock's logind is on the bus" wait_for 30 "logind" bus_has_owner org.freedesktop.login1
require "an unlocked session c1 on seat0" busctl --system call org.freedesktop.login1 \
  /org/freedesktop/login1 org.freedesktop.DBus.Mock AddSession ssusb c1 seat0 1000 user true

require "the emulated accelerometer appears" accel_start --mount-matrix "$HWDB_MATRIX"
accel orient normal
require "udev has processed it" udevadm settle --timeout=20
printf '[face]\nenabled = yes\ncamera = v4l2:%s\ntimeout = 5000\nframes = 1\n' "$VIDEO" \
  >"$TOUT/orientd.conf"
spawn orientd "$BIN/orientd" --verbose --config "$TOUT/orientd.conf"
require "orientd owns $ORIENTD_NAME" wait_for 30 "orientd on the bus" bus_has_owner "$ORIENTD_NAME"
require "face-aware rotation is on" grep -q "face-aware rotation on: camera v4l2:$VIDEO" \
  "$TOUT/orientd.log"
check "logind's session is followed: unlocked" \
  wait_for 20 "session unlocked" grep -q "session unlocked" "$TOUT/orientd.log"
spawn monitor stdbuf -oL gdbus monitor --system --dest "$ORIENTD_NAME"
watch_start
check "a watching client gets normal" wait_for 20 "the first line" watch_reports normal

in_use_seen() { grep -o "'CameraInUse': <[a-z]*>" "$TOUT/monitor.log" | tr '\n' ' '; }
accel orient left-up
check "no face in vivid's bars: the turn is committed" wait_for 60 "left-up" watch_reports left-up
check "  after asking orientd-face (accept, or the 5 s timeout under TCG)" \
  grep -q "face: left-up committed (camera: accept\|face: left-up committed (the camera timed out" \
  "$TOUT/orientd.log"
check "the camera's use is logged" \
  grep -q "camera $VIDEO opened for a proposed rotation normal -> left-up" "$TOUT/orientd.log"
check "CameraInUse was true, then false (gdbus monitor)" \
  wait_for 10 "CameraInUse false" grep -q "'CameraInUse': <false>" "$TOUT/monitor.log"
log "CameraInUse seen: $(in_use_seen)"
check "  true first" test "$(in_use_seen)" = "'CameraInUse': <true> 'CameraInUse': <false> "
check "the camera is free afterwards (v4l2-ctl streams)" \
  v4l2-ctl -d "$VIDEO" --stream-mmap --stream-count=1 --stream-to=/dev/null

# Another program streams from the camera: orientd-face answers unknown, the turn is committed.
v4l2-ctl -d "$VIDEO" --stream-mmap --stream-count=100000 --stream-to=/dev/null &
holder=$!
sleep 3
accel orient normal
check "a camera held by another program: the turn is committed" \
  wait_for 60 "normal" watch_reports normal
check "  as unknown" grep -q "face: normal committed (camera: unknown" "$TOUT/orientd.log"
kill "$holder" 2>/dev/null
wait "$holder" 2>/dev/null

# Locked: the camera is not opened at all.
busctl --system call org.freedesktop.login1 /org/freedesktop/login1/session/c1 \
  org.freedesktop.login1.Session SetLockedHint b true
check "the lock is followed" wait_for 20 "session locked" grep -q "session locked" "$TOUT/orientd.log"
opened=$(grep -c "opened for a proposed rotation" "$TOUT/orientd.log")
accel orient right-up
check "locked: the turn is committed" wait_for 30 "right-up" watch_reports right-up
check "  without the camera" grep -q "camera not used: the session is locked" "$TOUT/orientd.log"
check "  which was not opened" test "$(grep -c "opened for a proposed rotation" "$TOUT/orientd.log")" -eq "$opened"
stop watch
stop monitor
finish
