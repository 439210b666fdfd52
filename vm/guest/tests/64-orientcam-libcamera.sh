#!/bin/bash
# Product: orientcam through libcamera, on vimc (Debian's kernel does not build it: vm/kmods.sh
# builds it out of tree, the "kmods:" line below). libcamera lists only devices udev has set up,
# so udevd runs; its vimc pipeline gives one camera, "platform/vimc.0 Sensor B", which reports no
# Location and no Rotation and forces the transform to Identity.
#
# `orientcam list` shows the camera as libcamera:ID, vimc's video nodes under it and none of them
# again as a V4L2 camera. A session through libcamera (`orientcam session --source libcamera
# --orientation-from -`: stdin carries orientd's JSON lines and the triggers) takes a photo in
# each of the four orientations; `orientcam capture --source libcamera` takes one with
# --sensor-rotation 90 (left-up, in RGB888: its byte order is the other one) and one with 270
# (normal): the override for a camera that reports no Rotation, as vimc. Every photo is decoded
# and compared with all eight turns and mirror images of a frame libcamera's own `cam` captured
# (tools/check_upright.py --vimc, which first checks that frame against what vimc draws: its
# colour bars, and its text box at the top left, which tells top from bottom); each must be the
# turn by the orientation's rotation plus the sensor rotation, EXIF Orientation 1 (an R/B mix-up
# swaps yellow and cyan, which the comparison sees too).
#
# Benchmark, printed and not asserted: the same session through V4L2 on the same device (vimc's
# "RGB/YUV Capture" node, which libcamera's configuration of the media pipeline leaves set up at
# the same size and format), trigger-to-file side by side (BENCH lines, tools/bench_shots.py);
# its photos are checked upright too. VM_BENCH_PHOTOS (default 4, after 1 warm-up) photos each;
# with VM_BENCH_ONESHOTS (default 0) also one-shot captures each way, process start to exit
# (scripts/bench/libcamera.sh asks for more). vimc is unloaded at the end, so vivid stays the only
# camera for later tests.
# kmods: vimc
# timeout: 900
# shellcheck source=vm/guest/lib.sh
. /run/vm/project/vm/guest/lib.sh

need_product orientcam capture -- --source libcamera --sensor-rotation
need_product orientcam list -- libcamera
SIZE=${VM_BENCH_SIZE:-480x360} # multiples of 6: vimc's pipeline makes the sensor a third of it
PHOTOS=${VM_BENCH_PHOTOS:-4} ONESHOTS=${VM_BENCH_ONESHOTS:-0}
REFERENCE=$TOUT/reference.rgb

# vimc_nodes: VIMC_NODES lists the video nodes vimc registered, VIMC_CAPTURE the one named
# "RGB/YUV Capture".
vimc_nodes() {
  local v
  VIMC_NODES=()
  for v in /sys/class/video4linux/video*; do
    [ "$(readlink -f "$v/device/driver" 2>/dev/null)" = /sys/bus/platform/drivers/vimc ] || continue
    VIMC_NODES+=("/dev/${v##*/}")
    first_line "$v/name"
    [ "$FIRST_LINE" = "RGB/YUV Capture" ] && VIMC_CAPTURE=/dev/${v##*/}
  done
  [ ${#VIMC_NODES[@]} -ge 3 ]
}
# listed_on_its_own NODE: the text of `orientcam list` has a V4L2 block for NODE.
listed_on_its_own() { has_line "$TOUT/list.txt" "$1: *"; }
# turned FILE FORMAT DEGREES: a capture report says FORMAT and a turn by DEGREES.
turned() {
  local report
  IFS= read -r -d '' report <"$1"
  [[ $report == *"\"format\":\"$2\""* && $report == *"\"degrees\":$3,"* &&
    $report == *'"source":"libcamera:platform/vimc.0 Sensor B"'* ]]
}
# session NAME SOURCE ORIENTATIONS: a session of PHOTOS (+1 warm-up) photos, the device held in
# ORIENTATIONS in turn, its BENCH line; photos/NAME-N.jpg, NAME.list (path and orientation).
session() {
  "${PY[@]}" "$GUEST/tools/bench_shots.py" --label "$1" --photos "$PHOTOS" --warmup 1 \
    --orientations "$3" --list "$TOUT/${1%% *}.list" -- \
    "$BIN/orientcam" session --source "$2" --format rgb24 --resolution "$SIZE" \
    --orientation-from - --headless --json -o "$TOUT/photos/${1%% *}-{n}.jpg" 2>"$TOUT/${1%% *}.err"
}
# expect LIST: PHOTOS_TO_CHECK gets each photo of a list with the turn its orientation needs.
expect() {
  local path orientation
  while read -r path orientation; do
    PHOTOS_TO_CHECK+=("$path=$(rotation_of "$orientation")")
  done <"$1"
}
unload_vimc() { modprobe -d "$KROOT" -S "$KV" -r vimc; }

require "systemd-udevd runs" udev_start
require "modprobe -d loads vimc" kmod vimc
require "vimc registers its video nodes" wait_for 20 "vimc's video nodes" vimc_nodes
require "udev has set vimc's nodes up" udevadm settle --timeout=30
log "vimc video nodes: ${VIMC_NODES[*]}; RGB/YUV Capture: $VIMC_CAPTURE"
# The reference: the second frame libcamera's own cam takes of its first camera, BGR888 (bytes
# R, G, B), at the photos' size.
cam -c 1 --capture=2 --file="$TOUT/cam-#.bin" \
  -s "role=still,width=${SIZE%x*},height=${SIZE#*x},pixelformat=BGR888" >"$TOUT/cam.log" 2>&1
mv "$TOUT/cam-cam0-stream0-000001.bin" "$REFERENCE" 2>/dev/null
rm -f "$TOUT"/cam-cam0-*.bin
require "libcamera's own cam finds vimc's camera" \
  has_line "$TOUT/cam.log" "Using camera platform/vimc.0 Sensor B as cam0"
require "  and captures a reference frame with it" test -s "$REFERENCE"
mkdir -p "$TOUT/photos"

"$BIN/orientcam" list >"$TOUT/list.txt" 2>"$TOUT/list.err"
check "orientcam list exits 0" test $? -eq 0
cat "$TOUT/list.txt"
check "it lists libcamera's camera" \
  has_line "$TOUT/list.txt" "libcamera:platform/vimc.0 Sensor B: Sensor B (libcamera v0.0.3)"
check "  with its formats" has_line "$TOUT/list.txt" "  BGR888 (rgb24): 48x48 to 4096x2160 *"
nodes=${VIMC_NODES[*]}
check "  and the V4L2 nodes it drives" \
  has_line "$TOUT/list.txt" "  V4L2 nodes: ${nodes// /, } (driven by libcamera)"
for node in "${VIMC_NODES[@]}"; do
  check "$node is not listed again on its own" not listed_on_its_own "$node"
done

PHOTOS_TO_CHECK=()
check "a session through libcamera takes $PHOTOS photos, turning the device" \
  session "libcamera $SIZE RGB24 session" libcamera normal,left-up,bottom-up,right-up
expect "$TOUT/libcamera.list"
# --sensor-rotation: a camera mounted turned, which libcamera (vimc) does not report.
for c in "sensor-90 bgr24 left-up 90 BGR3 180" "sensor-270 rgb24 normal 270 RGB3 270"; do
  read -r name format orientation degrees fourcc turn <<<"$c"
  "$BIN/orientcam" capture --source libcamera --resolution "$SIZE" --format "$format" \
    --orientation "$orientation" --sensor-rotation "$degrees" -o "$TOUT/photos/$name.jpg" \
    --json >"$TOUT/photos/$name.json" 2>"$TOUT/photos/$name.err"
  check "capture through libcamera, --sensor-rotation $degrees, $orientation, $format: exit $?" \
    test -s "$TOUT/photos/$name.jpg"
  check "  reports $fourcc, turned $turn" turned "$TOUT/photos/$name.json" "$fourcc" "$turn"
  PHOTOS_TO_CHECK+=("$TOUT/photos/$name.jpg=$turn")
done

# The benchmark's other side (and the V4L2 path on a device libcamera set up).
check "the same session through V4L2 ($VIMC_CAPTURE) takes $PHOTOS photos" \
  session "v4l2 $SIZE RGB24 session" "v4l2:$VIMC_CAPTURE" normal,left-up,bottom-up,right-up
expect "$TOUT/v4l2.list"
if [ "$ONESHOTS" -gt 0 ]; then
  for source in libcamera "v4l2:$VIMC_CAPTURE"; do
    api=${source%%:*}
    check "$ONESHOTS one-shot captures through $api" \
      "${PY[@]}" "$GUEST/tools/bench_shots.py" --label "$api $SIZE RGB24 one-shot capture" \
      --one-shot "$ONESHOTS" --warmup 1 --list "$TOUT/$api-oneshot.list" -- \
      "$BIN/orientcam" capture --source "$source" --format rgb24 --resolution "$SIZE" \
      --orientation left-up --json -o "$TOUT/photos/$api-oneshot-{i}.jpg"
    expect "$TOUT/$api-oneshot.list"
  done
fi
"${PY[@]}" "$GUEST/tools/check_upright.py" --reference "$REFERENCE" --size "$SIZE" --vimc \
  "${PHOTOS_TO_CHECK[@]}" >"$TOUT/upright.txt" 2>&1
cat "$TOUT/upright.txt"
upright_results "$TOUT/upright.txt"
mapfile -t checked <"$TOUT/upright.txt"
all=$((${#PHOTOS_TO_CHECK[@]} + 1))
check "all $all pictures were checked (at least $((2 * PHOTOS + 2)) photos)" \
  eval '[ ${#checked[@]} -eq $all ] && [ ${#PHOTOS_TO_CHECK[@]} -ge $((2 * PHOTOS + 2)) ]'
check "vimc unloads" unload_vimc
finish
