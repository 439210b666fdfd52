#!/bin/bash
# Product: `orientcam capture` from vivid through mmap streaming, in YUYV and NV12, for each of the
# four orientations: every JPEG decodes (djpeg) to vivid's colour bars turned clockwise by the
# orientation's rotation, i.e. upright for a user holding the device that way.
# timeout: 180
# shellcheck source=vm/guest/lib.sh
. /run/vm/project/vm/guest/lib.sh

need_product orientcam capture -- --source --orientation --format --resolution --json
require "vivid creates $VIDEO" vivid_start
mkdir -p "$TOUT/photos"
for format in YUYV NV12; do
  for orientation in normal left-up bottom-up right-up; do
    photo=$TOUT/photos/$format-$orientation.jpg
    "$BIN/orientcam" capture --source "v4l2:$VIDEO" --format "$format" --resolution 640x480 \
      --orientation "$orientation" -o "$photo" --json >"$TOUT/photos/$format-$orientation.json" \
      2>"$TOUT/photos/$format-$orientation.err"
    rc=$?
    check "capture $format $orientation exits 0 (exit $rc)" test $rc -eq 0
    check "  $photo is upright (turned $(rotation_of "$orientation") degrees)" \
      "$PY" "$GUEST/tools/check_upright.py" "$photo" --rotation "$(rotation_of "$orientation")" \
      --source-size 640x480
  done
done
finish
