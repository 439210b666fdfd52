#!/usr/bin/env bash
# The demo, stage 1 (the orientation engine): builds, synthesises a scripted rotation through
# all four orientations (with a 180 degree flip, and the device put down flat and picked up)
# as a 100 Hz, 16-bit accelerometer would report it, and replays it through orientd's detector.
# Later stages add the daemon and the camera.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/deps.sh
echo "==== build (debug)"
swift build --product orientd
swift build --product orient-bench
bin=$(swift build --show-bin-path)

work=$(mktemp -d /tmp/orientd-demo-XXXXXX)
trap 'rm -rf "$work"' EXIT
trace="$work/demo.csv"

echo
echo "==== orient-bench trace demo > $trace"
"$bin/orient-bench" trace demo > "$trace"
echo "$(grep -vc '^[#t]' "$trace") samples; the script (ground truth):"
grep -E "^# ([0-9]|pose)" "$trace" | sed "s/^# /  /"

echo
echo "==== orientd replay $trace   (t of the committing sample, orientation)"
"$bin/orientd" replay "$trace"

echo
echo "==== orientd replay --json --tilt $trace   (tilt changes too: the flat put-down)"
"$bin/orientd" replay --json --tilt "$trace"

echo
echo "==== the same with a looser detector: orientd replay --set hysteresis=2 --set settle-time-slow=0.1"
"$bin/orientd" replay --set hysteresis=2 --set settle-time-slow=0.1 "$trace"

echo
echo "The full quality benchmark (orientd vs Android vs iio-sensor-proxy): see docs/benchmark.md,"
echo "or run: swift run -c release orient-bench"
