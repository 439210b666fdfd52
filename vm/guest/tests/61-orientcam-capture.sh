#!/bin/bash
# Product: `orientcam capture` from vivid through mmap streaming, in YUYV and NV12, for each of the
# four orientations. vivid shows the same picture however the emulated device is held, so the
# photo for an orientation turned clockwise by R degrees must be the camera's frame turned
# clockwise by R: what makes the scene upright when the device really is held that way (see
# tools/check_upright.py). Every JPEG is decoded and compared with all eight turns and mirror
# images of a frame captured independently (v4l2-ctl); it must be the turn by R, with the size
# swapped for 90 and 270, and EXIF Orientation 1 (nothing left for a viewer to turn). The first
# capture runs under strace: the frames come through mmap streaming (S_FMT with the format asked
# for, REQBUFS and QUERYBUF with V4L2_MEMORY_MMAP, STREAMON, DQBUF). orientcam has no other way
# to read a camera, so one traced capture stands for all (tracing costs 4 s under TCG: the
# negotiation makes hundreds of ioctls, and each one stops the process).
# timeout: 120
# shellcheck source=vm/guest/lib.sh
. /run/vm/project/vm/guest/lib.sh

need_product orientcam capture -- --source --orientation --format --resolution --json

# streamed FILE FOURCC: FILE, an strace log of a capture's ioctls on $VIDEO (strace -P), shows it
# set to FOURCC, its buffers requested and queried as V4L2_MEMORY_MMAP, streaming on and frames
# dequeued from those buffers: streaming I/O through mapped buffers, during which the driver
# refuses read(2) (one awk over the log; it says what is missing).
streamed() {
  awk -v fourcc="v4l2_fourcc('${2:0:1}', '${2:1:1}', '${2:2:1}', '${2:3:1}')" '
    index($0, "VIDIOC_S_FMT, ") && index($0, "pixelformat=" fourcc) { seen["S_FMT"] = 1 }
    index($0, "VIDIOC_REQBUFS, ") && index($0, "memory=V4L2_MEMORY_MMAP") { seen["REQBUFS"] = 1 }
    index($0, "VIDIOC_QUERYBUF, ") && index($0, "memory=V4L2_MEMORY_MMAP") { seen["QUERYBUF"] = 1 }
    index($0, "VIDIOC_STREAMON") { seen["STREAMON"] = 1 }
    index($0, "VIDIOC_DQBUF, ") && index($0, "memory=V4L2_MEMORY_MMAP") { seen["DQBUF"] = 1 }
    END {
      n = split("S_FMT REQBUFS QUERYBUF STREAMON DQBUF", want, " ")
      for (i = 1; i <= n; i++) if (!(want[i] in seen)) missing = missing " " want[i]
      if (missing != "") {
        print "strace: missing" missing
        exit 1
      }
    }' "$1"
}
require "vivid creates $VIDEO" vivid_start
require "a reference frame, captured with v4l2-ctl" vivid_frame YUYV "$TOUT/reference.yuyv"
mkdir -p "$TOUT/photos"
photos=()
for format in YUYV NV12; do
  for orientation in normal left-up bottom-up right-up; do
    rot=$(rotation_of "$orientation")
    photo=$TOUT/photos/$format-$orientation.jpg
    trace=()
    # Only ioctls stop the process (--seccomp-bpf; each stop is slow under TCG, and loading a
    # Swift binary makes hundreds of mmap and read calls), and only those on the camera are logged.
    [ "$format-$orientation" = YUYV-normal ] && trace=(strace -f -qq --seccomp-bpf -P "$VIDEO" -e trace=ioctl
      -e signal=none -o "$TOUT/photos/$format.strace")
    "${trace[@]}" "$BIN/orientcam" capture --source "v4l2:$VIDEO" --format "$format" --resolution 640x480 \
      --orientation "$orientation" -o "$photo" --json >"$TOUT/photos/$format-$orientation.json" \
      2>"$TOUT/photos/$format-$orientation.err"
    rc=$?
    check "capture $format $orientation exits 0 (exit $rc)" test $rc -eq 0
    [ ${#trace[@]} -gt 0 ] &&
      check "  through mmap streaming in $format (strace: S_FMT, REQBUFS/QUERYBUF MMAP, STREAMON, DQBUF)" \
        streamed "$TOUT/photos/$format.strace" "$format"
    # A bash match, not json_fields: a Python start per photo costs seconds under TCG.
    IFS= read -r -d '' report <"$TOUT/photos/$format-$orientation.json"
    check "  and reports format $format, turned $rot degrees, from --orientation" \
      eval '[[ $report == *"\"format\":\"$format\""* && $report == *"\"degrees\":$rot,"* &&
        $report == *"\"orientation_source\":\"--orientation\""* ]]'
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
