#!/bin/bash
# Camera driver: vivid gives a V4L2 webcam; its formats are listed, and mmap streaming captures
# frames in YUYV and NV12 whose colour bars the upright checker (tools/check_upright.py) reads the
# right way up, and refuses when told to expect a turned picture.
# timeout: 60
# shellcheck source=vm/guest/lib.sh
. /run/vm/project/vm/guest/lib.sh

require "vivid creates $VIDEO" vivid_start
v4l2-ctl -d "$VIDEO" --info | sed 's/^/  /'
v4l2-ctl -d "$VIDEO" --list-ctrls >"$TOUT/controls.txt" 2>&1
v4l2-ctl -d "$VIDEO" --list-formats-ext >"$TOUT/formats.txt" 2>&1
formats=$(sed -n "s/.*\[[0-9]*\]: '\([A-Z0-9 ]*\)'.*/\1/p" "$TOUT/formats.txt" | tr -d ' ' | tr '\n' ' ')
log "formats: $formats"
check "vivid offers YUYV" grep -q "'YUYV'" "$TOUT/formats.txt"
check "vivid offers NV12" grep -q "'NV12'" "$TOUT/formats.txt"
check "640x480 is one of its sizes" grep -q 'Size: Discrete 640x480' "$TOUT/formats.txt"

for format in YUYV NV12; do
  frame=$TOUT/frame-640x480.${format,,}
  v4l2-ctl -d "$VIDEO" --set-fmt-video=width=640,height=480,pixelformat="$format" \
    --stream-mmap=3 --stream-count=2 --stream-to="$frame" 2>"$TOUT/capture-$format.err"
  check "mmap capture of 2 frames in $format" test $? -eq 0
  per_frame=$((640 * 480 * 3 / 2))
  [ "$format" = YUYV ] && per_frame=$((640 * 480 * 2))
  check "$format frames are $per_frame bytes each" test "$(stat -c %s "$frame")" -eq $((2 * per_frame))
  # The checker reads the last frame: cut it out.
  tail -c "$per_frame" "$frame" >"$frame.last"
  check "the $format frame reads upright" \
    "$PY" "$GUEST/tools/check_upright.py" "$frame.last" --format "${format,,}" --size 640x480 --rotation 0
  check "and the checker refuses it as turned by 90 degrees" \
    not "$PY" "$GUEST/tools/check_upright.py" "$frame.last" --format "${format,,}" --size 640x480 --rotation 90
done
finish
