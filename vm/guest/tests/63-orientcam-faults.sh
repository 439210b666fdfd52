#!/bin/bash
# Product: orientcam when the world fails under it, on real drivers.
# camera-gone: vivid loses its driver (the platform device is unbound) while `orientcam session`
# streams from it, as when a USB camera is pulled: the driver unregisters /dev/video0 under the
# open stream, so poll reports an error and VIDIOC_DQBUF fails with ENODEV. The session ends by
# itself with an error event and an end event (reason error, the one photo taken, status 69),
# exit status 69, and the photo taken before stays whole and upright.
# vfat: an SD card's filesystem has neither unnamed files (O_TMPFILE) nor hard links: orientcam
# writes a hidden temporary file and names it with renameat2(RENAME_NOREPLACE) (strace: the
# O_TMPFILE open fails with EOPNOTSUPP, link with EPERM); --count 2 writes two whole photos, an
# existing photo is refused (exit 73) and left as it was, --force replaces it, and no temporary
# file is left.
# parts: camera-gone vfat
# timeout: 150
# shellcheck source=vm/guest/lib.sh
. /run/vm/project/vm/guest/lib.sh

need_product orientcam session -- --headless --source --orientation --json

part camera-gone
require "vivid creates $VIDEO" vivid_start
require "a reference frame, captured with v4l2-ctl" vivid_frame YUYV "$TOUT/reference.yuyv"
SESSION_LOG=$TOUT/session.log
session_says() { last_line_with "$SESSION_LOG" "\"event\":\"$1\""; }
mkdir -p "$TOUT/gone"
spawn session "$BIN/orientcam" session --source "v4l2:$VIDEO" --resolution 640x480 --format yuyv \
  --orientation normal --headless -o "$TOUT/gone/shot-{n}.jpg" --json
pid_of session
SESSION_PID=$PID
require "the session is ready" wait_for 30 "the ready event" session_says ready
kill -USR1 "$SESSION_PID"
require "SIGUSR1 took a photo" wait_for 20 "the photo event" session_says photo
log "unbinding vivid.0 from its driver"
echo vivid.0 >/sys/bus/platform/drivers/vivid/unbind
check "the session ends by itself" wait_for 20 "the session to exit" not_running "$SESSION_PID"
wait "$SESSION_PID"
rc=$?
rm -f "$PIDS/session.pid"
check "with exit status 69 (exit $rc)" test "$rc" -eq 69
check "an end event says why and counts the photo" session_says end
log "end: $LAST_LINE"
check "  reason error, 1 photo, status 69" eval '[[ $LAST_LINE == *"\"reason\":\"error\""* &&
  $LAST_LINE == *"\"photos\":1,"* && $LAST_LINE == *"\"status\":69"* ]]'
last_line_with "$SESSION_LOG" "orientcam:"
log "message: $LAST_LINE"
check "stderr says the camera went away during the session and the photo is kept" eval \
  '[[ $LAST_LINE == *"the source failed during the session: $VIDEO: the camera went away while streaming (No such device"* &&
  $LAST_LINE == *"the 1 photo taken is kept"* ]]'
files=("$TOUT"/gone/*)
check "the photo taken before is there, alone (${files[*]##*/})" \
  eval '[ ${#files[@]} -eq 1 ] && [ "${files[0]##*/}" = shot-1.jpg ]'
"${PY[@]}" "$GUEST/tools/check_upright.py" --reference "$TOUT/reference.yuyv" --size 640x480 \
  --bars "$TOUT/gone/shot-1.jpg=0" >"$TOUT/upright.txt" 2>&1
upright_results "$TOUT/upright.txt"
echo vivid.0 >/sys/bus/platform/drivers/vivid/bind
check "vivid bound again" wait_for 20 "$VIDEO" test -c "$VIDEO"

part vfat
require "loop, vfat and its code pages load" kmod -a loop vfat nls_cp437 nls_ascii nls_iso8859-1
truncate -s 16M "$RUNDIR/sd.img"
require "mkfs.vfat makes an SD card image" mkfs.vfat -n ORIENTCAM "$RUNDIR/sd.img"
SD=$RUNDIR/sd
mkdir -p "$SD"
require "it mounts as vfat" mount -t vfat -o loop "$RUNDIR/sd.img" "$SD"
strace -f -qq -e trace=open,openat,link,linkat,rename,renameat2 -e signal=none \
  -o "$TOUT/vfat.strace" "$BIN/orientcam" capture --source pattern --orientation left-up \
  --count 2 -o "$SD/p-{n}.jpg" >"$TOUT/vfat.out" 2>"$TOUT/vfat.err"
rc=$?
check "capture --count 2 onto vfat exits 0 (exit $rc)" test $rc -eq 0
check "  the O_TMPFILE open fails with EOPNOTSUPP" has_line "$TOUT/vfat.strace" \
  '*O_TMPFILE*EOPNOTSUPP*'
check "  link(2) fails with EPERM" has_line "$TOUT/vfat.strace" '*link*"*/p-1.jpg"*EPERM*'
check "  renameat2(RENAME_NOREPLACE) names the photos" has_line "$TOUT/vfat.strace" \
  '*renameat2(*"*/p-2.jpg", RENAME_NOREPLACE) = 0*'
cp "$SD/p-1.jpg" "$RUNDIR/p-1.copy"
"$BIN/orientcam" capture --source pattern --orientation normal -o "$SD/p-1.jpg" \
  >"$TOUT/taken.out" 2>"$TOUT/taken.err"
rc=$?
check "an existing photo is refused with 73 (exit $rc)" test $rc -eq 73
check "  as already there" has_line "$TOUT/taken.err" '*p-1.jpg already exists*'
check "  and left as it was" cmp -s "$SD/p-1.jpg" "$RUNDIR/p-1.copy"
"$BIN/orientcam" capture --source pattern --orientation normal -o "$SD/p-1.jpg" --force \
  >"$TOUT/forced.out" 2>"$TOUT/forced.err"
rc=$?
check "--force replaces it (exit $rc)" test $rc -eq 0
check "  with the new photo" not cmp -s "$SD/p-1.jpg" "$RUNDIR/p-1.copy"
for photo in "$SD"/p-*.jpg; do
  check "${photo##*/} is a whole JPEG (djpeg)" djpeg -outfile /dev/null "$photo"
done
shopt -s dotglob
names=("$SD"/*)
shopt -u dotglob
names=("${names[@]##*/}")
check "only the two photos are on the card, nothing hidden (${names[*]})" \
  eval '[ "${names[*]}" = "p-1.jpg p-2.jpg" ]'
umount "$SD"
finish
