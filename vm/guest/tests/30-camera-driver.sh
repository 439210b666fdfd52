#!/bin/bash
# Camera driver: vivid gives a V4L2 webcam; its formats are listed, and mmap streaming captures
# frames in YUYV and NV12 of the right size; the YUYV frame shows what the VM sets vivid to show
# (colour bars over the top 60%, one colour below: see tools/check_upright.py) the right way up,
# and the NV12 frame is the same picture, unturned and unmirrored (the checker tells all eight
# turns and mirror images apart).
# timeout: 60
# shellcheck source=vm/guest/lib.sh
. /run/vm/project/vm/guest/lib.sh

require "vivid creates $VIDEO" vivid_start
v4l2-ctl -d "$VIDEO" --info | sed 's/^/  /'
v4l2-ctl -d "$VIDEO" --list-ctrls >"$TOUT/controls.txt" 2>&1
v4l2-ctl -d "$VIDEO" --list-formats-ext >"$TOUT/formats.txt" 2>&1
formats=$(sed -n "s/.*\[[0-9]*\]: '\([A-Z0-9 ]*\)'.*/\1/p" "$TOUT/formats.txt" | tr -d ' ' | tr '\n' ' ')
log "formats: $formats"
check "vivid offers YUYV" has_line "$TOUT/formats.txt" "*'YUYV'*"
check "vivid offers NV12" has_line "$TOUT/formats.txt" "*'NV12'*"
check "640x480 is one of its sizes" has_line "$TOUT/formats.txt" '*Size: Discrete 640x480*'
check "the frame fills 60% of the height (fill_percentage_of_frame)" \
  has_line "$TOUT/controls.txt" '*fill_percentage_of_frame*value=60*'

for format in YUYV NV12; do
  check "mmap streaming captures a 640x480 $format frame of the right size" \
    vivid_frame "$format" "$TOUT/frame-640x480.${format,,}"
done
"${PY[@]}" "$GUEST/tools/check_upright.py" --reference "$TOUT/frame-640x480.yuyv" --size 640x480 \
  --bars "$TOUT/frame-640x480.nv12=0" >"$TOUT/upright.txt" 2>&1
cat "$TOUT/upright.txt"
upright_results "$TOUT/upright.txt"
check "the checker ran" test -s "$TOUT/upright.txt"
finish
