#!/bin/bash
# Product: orientcam through libcamera, on vimc (Debian's kernel does not build it: vm/kmods.sh
# builds it out of tree, the "kmods:" line below). libcamera lists only devices udev has set up,
# so udevd runs; its vimc pipeline gives one camera, "platform/vimc.0 Sensor B", which reports no
# Location and no Rotation and forces the transform to Identity.
#
# orientcam-libcamera: `orientcam list` shows the camera as libcamera:ID and does not list vimc's
# video nodes again as V4L2 cameras; `orientcam capture --source libcamera` in each of the four
# orientations, and with --sensor-rotation 90 and 270 (the override for a camera that reports no
# Rotation, as vimc): every photo is decoded and compared with all eight turns and mirror images
# of a frame libcamera's own `cam` captured (tools/check_upright.py --vimc, which first checks
# that frame against what vimc draws: its colour bars, and its text box at the top left, which
# tells top from bottom); each must be the turn by the orientation's rotation plus the sensor
# rotation, EXIF Orientation 1. One capture is in RGB888, the others in BGR888 (the byte orders
# differ: a mix-up swaps yellow and cyan, which the comparison sees).
#
# libcamera-bench: benchmark, printed and not asserted: trigger-to-file latency of photos from an
# open `orientcam session` through libcamera against one through V4L2 on the same vimc device
# (its "RGB/YUV Capture" node, which libcamera's configuration of the media pipeline leaves set
# up at the same size and format), VM_BENCH_PHOTOS each (default 5, after 2 warm-up photos;
# scripts/bench/libcamera.sh asks for more); with VM_BENCH_ONESHOTS (default 0), also one-shot
# captures each way, process start to exit. The sessions' photos are checked upright.
# vimc is unloaded at the end, so vivid stays the only camera for later tests.
# kmods: vimc
# parts: orientcam-libcamera libcamera-bench
# timeout: 600
# shellcheck source=vm/guest/lib.sh
. /run/vm/project/vm/guest/lib.sh

need_product orientcam capture -- --source libcamera --sensor-rotation
need_product orientcam list -- libcamera
SIZE=${VM_BENCH_SIZE:-480x360} # multiples of 6: vimc's pipeline makes the sensor a third of it
REFERENCE=$TOUT/reference.rgb

# vimc_node NAME: VIMC_NODE is the /dev/videoN vimc registered as NAME.
vimc_node() {
  local v
  for v in /sys/class/video4linux/video*; do
    first_line "$v/name"
    if [ "$FIRST_LINE" = "$1" ]; then
      VIMC_NODE=/dev/${v##*/}
      return 0
    fi
  done
  return 1
}
# vimc_nodes: VIMC_NODES lists every video node vimc registered.
vimc_nodes() {
  local v
  VIMC_NODES=()
  for v in /sys/class/video4linux/video*; do
    [ "$(readlink -f "$v/device/driver" 2>/dev/null)" = /sys/bus/platform/drivers/vimc ] &&
      VIMC_NODES+=("/dev/${v##*/}")
  done
  [ ${#VIMC_NODES[@]} -ge 3 ]
}
# listed_on_its_own NODE: the text of `orientcam list` has a V4L2 block for NODE.
listed_on_its_own() { has_line "$TOUT/list.txt" "$1: *"; }
# capture NAME ARGS...: orientcam capture through libcamera into photos/NAME.jpg (report .json).
capture() {
  local name=$1
  shift
  "$BIN/orientcam" capture --source libcamera --resolution "$SIZE" -o "$TOUT/photos/$name.jpg" \
    --json "$@" >"$TOUT/photos/$name.json" 2>"$TOUT/photos/$name.err"
}
# turned FILE FORMAT DEGREES: a capture report says FORMAT and a turn by DEGREES.
turned() {
  local report
  IFS= read -r -d '' report <"$1"
  [[ $report == *"\"format\":\"$2\""* && $report == *"\"degrees\":$3,"* &&
    $report == *'"source":"libcamera:platform/vimc.0 Sensor B"'* ]]
}
unload_vimc() { modprobe -d "$KROOT" -S "$KV" -r vimc; }
# no_device NODE: the JSON list has no V4L2 entry for NODE.
no_device() { [[ $LIST_JSON != *"\"device\":\"$1\""* ]]; }

require "systemd-udevd runs" udev_start
require "modprobe -d loads vimc" kmod vimc
require "vimc registers its video nodes" wait_for 20 "vimc's video nodes" vimc_nodes
require "udev has set vimc's nodes up" udevadm settle --timeout=30
log "vimc video nodes: ${VIMC_NODES[*]}"
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

part orientcam-libcamera
"$BIN/orientcam" list >"$TOUT/list.txt" 2>"$TOUT/list.err"
check "orientcam list exits 0" test $? -eq 0
cat "$TOUT/list.txt"
check "it lists libcamera's camera" \
  has_line "$TOUT/list.txt" "libcamera:platform/vimc.0 Sensor B: Sensor B (libcamera v0.0.3)"
check "  with its formats" has_line "$TOUT/list.txt" "  BGR888 (rgb24): 48x48 to 4096x2160 *"
check "  and the V4L2 nodes it drives" \
  has_line "$TOUT/list.txt" "  V4L2 nodes: $(IFS=,; echo "${VIMC_NODES[*]}" | sed 's/,/, /g') *"
for node in "${VIMC_NODES[@]}"; do
  check "$node is not listed again on its own" not listed_on_its_own "$node"
done
"$BIN/orientcam" list --json >"$TOUT/list.json" 2>>"$TOUT/list.err"
IFS= read -r -d '' LIST_JSON <"$TOUT/list.json"
check "list --json has libcamera's camera, its source and V4L2 nodes" eval '[[ $LIST_JSON == \
  *"\"source\":\"libcamera:platform/vimc.0 Sensor B\",\"id\":\"platform/vimc.0 Sensor B\""*"\"v4l2_devices\":[\"${VIMC_NODES[0]}\""* ]]'
for node in "${VIMC_NODES[@]}"; do
  check "  and no V4L2 entry for $node" no_device "$node"
done

photos=()
for orientation in normal left-up bottom-up right-up; do
  rot=$(rotation_of "$orientation")
  capture "$orientation" --format rgb24 --orientation "$orientation"
  check "capture through libcamera, $orientation, exits 0 (exit $?)" test -s "$TOUT/photos/$orientation.jpg"
  check "  reports RGB3 from libcamera, turned $rot" turned "$TOUT/photos/$orientation.json" RGB3 "$rot"
  photos+=("$TOUT/photos/$orientation.jpg=$rot")
done
# --sensor-rotation: a camera mounted turned, which libcamera (vimc) does not report.
capture sensor-90 --format bgr24 --orientation left-up --sensor-rotation 90
check "capture with --sensor-rotation 90, left-up, in RGB888 exits 0" test -s "$TOUT/photos/sensor-90.jpg"
check "  reports BGR3, turned 180" turned "$TOUT/photos/sensor-90.json" BGR3 180
photos+=("$TOUT/photos/sensor-90.jpg=180")
capture sensor-270 --format rgb24 --orientation normal --sensor-rotation 270
check "capture with --sensor-rotation 270, normal, exits 0" test -s "$TOUT/photos/sensor-270.jpg"
check "  reports RGB3, turned 270" turned "$TOUT/photos/sensor-270.json" RGB3 270
photos+=("$TOUT/photos/sensor-270.jpg=270")
"${PY[@]}" "$GUEST/tools/check_upright.py" --reference "$REFERENCE" --size "$SIZE" --vimc \
  "${photos[@]}" >"$TOUT/upright.txt" 2>&1
cat "$TOUT/upright.txt"
upright_results "$TOUT/upright.txt"
mapfile -t checked <"$TOUT/upright.txt"
check "all $((${#photos[@]} + 1)) pictures were checked" test ${#checked[@]} -eq $((${#photos[@]} + 1))

part libcamera-bench
PHOTOS=${VM_BENCH_PHOTOS:-5}
require "vimc's RGB/YUV Capture node" vimc_node "RGB/YUV Capture"
# bench NAME SOURCE: a session of PHOTOS (+2 warm-up) photos held left-up, its BENCH line.
bench() {
  "${PY[@]}" "$GUEST/tools/bench_shots.py" --label "$1" --photos "$PHOTOS" --list "$TOUT/$1.list" -- \
    "$BIN/orientcam" session --source "$2" --format rgb24 --resolution "$SIZE" \
    --orientation left-up --headless --json -o "$TOUT/photos/${1// /-}-{n}.jpg" 2>"$TOUT/$1.err"
}
# libcamera first: it sets the media pipeline up (Sensor B to the capture node) at SIZE, RGB888.
check "a session through libcamera takes $PHOTOS photos" \
  bench "libcamera $SIZE RGB24 session" libcamera
check "a session through V4L2 ($VIMC_NODE) takes $PHOTOS photos" \
  bench "v4l2 $SIZE RGB24 session" "v4l2:$VIMC_NODE"
ONESHOTS=${VM_BENCH_ONESHOTS:-0}
if [ "$ONESHOTS" -gt 0 ]; then
  for source in libcamera "v4l2:$VIMC_NODE"; do
    label="${source%%:*} $SIZE RGB24 one-shot capture"
    check "$ONESHOTS one-shot captures through ${source%%:*}" \
      "${PY[@]}" "$GUEST/tools/bench_shots.py" --label "$label" --one-shot "$ONESHOTS" --warmup 1 \
      --list "$TOUT/${source%%:*}-oneshot.list" -- "$BIN/orientcam" capture --source "$source" \
      --format rgb24 --resolution "$SIZE" --orientation left-up --json \
      -o "$TOUT/photos/${source%%:*}-oneshot-{i}.jpg"
  done
fi
session_photos=()
for list in "$TOUT"/*session.list "$TOUT"/*-oneshot.list; do
  [ -s "$list" ] || continue
  mapfile -t taken <"$list"
  session_photos+=("${taken[0]}=90" "${taken[-1]}=90")
done
"${PY[@]}" "$GUEST/tools/check_upright.py" --reference "$REFERENCE" --size "$SIZE" \
  "${session_photos[@]}" >"$TOUT/session-upright.txt" 2>&1
cat "$TOUT/session-upright.txt"
upright_results "$TOUT/session-upright.txt"
check "both sessions' photos were checked" test "${#session_photos[@]}" -ge 4
check "vimc unloads" unload_vimc
finish
