#!/bin/bash
# Product: `orientd-face resolve` on a real V4L2 camera (vivid, through Capture's CameraSource:
# negotiation, mmap streaming, poll). vivid's colour bars hold no face, so the answer is accept;
# the camera is released afterwards (another program can stream at once), and a camera another
# program is streaming from (EBUSY) is answered unknown without waiting. Prints a BENCH line:
# proposal -> answer latency (spawn to answer) from vivid, median and max of four, under TCG.
# timeout: 420
# shellcheck source=vm/guest/lib.sh
. /run/vm/project/vm/guest/lib.sh

need_product orientd-face resolve -- --camera --current --proposed --timeout --frames
require "vivid creates $VIDEO" vivid_start
# The root file system is the host's, read-only: the decoded detector is cached in /tmp.
export XDG_CACHE_HOME=$TOUT/cache CACHE_DIRECTORY=

resolve() {  # OUT: one resolve from vivid, its answer in OUT.json and its log in OUT.err
  "$BIN/orientd-face" resolve --camera "v4l2:$VIDEO" --current normal --proposed left-up \
    --timeout 60000 --frames 1 >"$1.json" 2>"$1.err"
}
answer_is() { grep -q "\"answer\":\"$2\"" "$1.json"; }

resolve "$TOUT/first"
rc=$?
cat "$TOUT/first.json" "$TOUT/first.err"
check "resolve exits 0 (exit $rc)" test $rc -eq 0
check "no face in vivid's bars: accept" answer_is "$TOUT/first" accept
check "  from one frame of $VIDEO" grep -q "\"frames\":1,\"camera\":\"$VIDEO\"" "$TOUT/first.json"
check "the camera's opening is logged" grep -q "camera $VIDEO opened for a proposed rotation normal -> left-up" "$TOUT/first.err"
check "  and its closing" grep -q "camera $VIDEO closed" "$TOUT/first.err"
check "the camera is free afterwards (v4l2-ctl streams)" \
  v4l2-ctl -d "$VIDEO" --stream-mmap --stream-count=1 --stream-to=/dev/null

# Another program streams from the camera: orientd-face answers unknown and says why.
v4l2-ctl -d "$VIDEO" --stream-mmap --stream-count=100000 --stream-to=/dev/null &
holder=$!
# Streaming starts within a second or two under TCG; then REQBUFS from anyone else is EBUSY.
sleep 3
resolve "$TOUT/busy"
cat "$TOUT/busy.json" "$TOUT/busy.err"
check "a camera held by another program: unknown" answer_is "$TOUT/busy" unknown
check "  and the log says it is held by another program" grep -q "held by another program" "$TOUT/busy.err"
kill "$holder" 2>/dev/null
wait "$holder" 2>/dev/null

# Latency: spawn to answer, as the daemon's FaceQuery sees it.
times=()
for _ in 1 2 3 4; do
  start=$(date +%s%N)
  resolve "$TOUT/bench"
  times+=($((($(date +%s%N) - start) / 1000000)))
done
sorted=$(printf '%s\n' "${times[@]}" | sort -n | tr '\n' ' ')
read -r -a ms <<<"$sorted"
echo "BENCH face orientd-face resolve from vivid (TCG, 1 frame, 4 quarter turns): n=${#ms[@]} p50=${ms[1]} ms max=${ms[3]} ms all: $sorted"
finish
