#!/bin/bash
# Product: `orientcam capture` from vivid through mmap streaming, in YUYV and NV12, for each of the
# four orientations. vivid shows the same picture however the emulated device is held, so the
# photo for an orientation turned clockwise by R degrees must be the camera's frame turned
# clockwise by R: what makes the scene upright when the device really is held that way (see
# tools/check_upright.py). Every JPEG is decoded and compared with all eight turns and mirror
# images of a frame captured independently (v4l2-ctl); it must be the turn by R, with the size
# swapped for 90 and 270, and EXIF Orientation 1 (nothing left for a viewer to turn).
# timeout: 120
# shellcheck source=vm/guest/lib.sh
. /run/vm/project/vm/guest/lib.sh

need_product orientcam capture -- --source --orientation --format --resolution --json
require "vivid creates $VIDEO" vivid_start
require "a reference frame, captured with v4l2-ctl" vivid_frame YUYV "$TOUT/reference.yuyv"
mkdir -p "$TOUT/photos"
photos=()
for format in YUYV NV12; do
  for orientation in normal left-up bottom-up right-up; do
    rot=$(rotation_of "$orientation")
    photo=$TOUT/photos/$format-$orientation.jpg
    "$BIN/orientcam" capture --source "v4l2:$VIDEO" --format "$format" --resolution 640x480 \
      --orientation "$orientation" -o "$photo" --json >"$TOUT/photos/$format-$orientation.json" \
      2>"$TOUT/photos/$format-$orientation.err"
    rc=$?
    check "capture $format $orientation exits 0 (exit $rc)" test $rc -eq 0
    IFS= read -r -d '' report <"$TOUT/photos/$format-$orientation.json"
    check "  and reports format $format, turned $rot degrees" \
      eval '[[ $report == *"\"format\":\"$format\""* && $report == *"\"degrees\":$rot,"* ]]'
    photos+=("$photo=$rot")
  done
done
"${PY[@]}" "$GUEST/tools/check_upright.py" --reference "$TOUT/reference.yuyv" --size 640x480 \
  --bars "${photos[@]}" >"$TOUT/upright.txt" 2>&1
cat "$TOUT/upright.txt"
upright_results "$TOUT/upright.txt"
mapfile -t checked <"$TOUT/upright.txt"
check "all $((${#photos[@]} + 1)) pictures were checked" test ${#checked[@]} -eq $((${#photos[@]} + 1))
finish
