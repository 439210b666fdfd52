#!/usr/bin/env bash
# orientcam against the usual tools, whole process each time (start-up included):
#   1. lossless 90-degree rotation of a 12-megapixel JPEG (4032x3024, 4:2:0, a whole number of
#      MCUs, so every tool can be exact): orientcam vs `jpegtran -rotate 90` vs `exiftran -9`;
#      and at 4000x3000 (not a whole number of MCUs): trimming with orientcam and jpegtran, and
#      orientcam's default exact re-encode;
#   2. one photo from a test pattern: orientcam's pattern vs `fswebcam -d TEST:`, upright and
#      turned 90 degrees.
# Prints a Markdown table: median wall time over RUNS interleaved runs (after one warm-up run
# each), mean CPU time (user + system, 10 ms resolution per run, so less disturbed by other
# load on a shared machine) and the peak resident memory (`/usr/bin/time -f %M`). orientcam is built in release mode
# with the Swift runtime linked statically (as a device install would be).
# Usage: scripts/bench/capture.sh [RUNS]   (default 11)
# Files go to BENCH_DIR (default: a folder in /dev/shm), where fsync is nearly free: orientcam
# fsyncs each photo and its folder before naming it (atomic, durable output) while jpegtran,
# exiftran and fswebcam do not sync at all. One extra row shows orientcam writing to a disk
# folder (DISK_DIR, default /var/tmp) to show what durability costs there.
set -euo pipefail
cd "$(dirname "$0")/../.."
runs=${1:-11}

for tool in jpegtran exiftran fswebcam cjpeg djpeg python3 /usr/bin/time; do
  command -v "$tool" >/dev/null || { echo "bench: $tool missing; run scripts/deps.sh" >&2; exit 69; }
done

swift build -c release --static-swift-stdlib --product orientcam >/dev/null
orientcam="$(swift build -c release --show-bin-path)/orientcam"
base=${BENCH_DIR:-/dev/shm}
[ -d "$base" ] || base=/tmp
work=$(mktemp -d "$base/orientcam-bench-XXXXXX")
disk=$(mktemp -d "${DISK_DIR:-/var/tmp}/orientcam-bench-XXXXXX")
trap 'rm -rf "$work" "$disk"' EXIT

# The 12-megapixel input: the test pattern as a camera held left-up sees it, with some sensor-like
# noise (low bits flipped at random) so the JPEG has a photo's entropy, encoded by cjpeg at q92.
"$orientcam" capture --source pattern:left-up --format rgb24 --resolution 4032x3024 \
  --orientation normal --rotate none --quality 100 -o "$work/clean.jpg" >/dev/null
djpeg -pnm "$work/clean.jpg" >"$work/clean.ppm"
python3 - "$work/clean.ppm" "$work/noisy.ppm" <<'PY'
import os, sys
data = open(sys.argv[1], "rb").read()
magic, size, depth, pixels = data.split(b"\n", 3)
n = len(pixels)
noise = int.from_bytes(os.urandom(n), "little") & int.from_bytes(b"\x0f" * n, "little")
mixed = (int.from_bytes(pixels, "little") ^ noise).to_bytes(n, "little")
open(sys.argv[2], "wb").write(b"\n".join([magic, size, depth]) + b"\n" + mixed)
PY
cjpeg -quality 92 -outfile "$work/in12mp.jpg" "$work/noisy.ppm"
rm -f "$work/clean.jpg" "$work/clean.ppm" "$work/noisy.ppm"
# The same cut to 4000x3000 (lossless crop): 3000 is not a multiple of the 16-pixel MCU, so an
# exact lossless 90-degree turn is impossible and each tool must trim or re-encode.
jpegtran -crop 4000x3000+0+0 -outfile "$work/in4000.jpg" "$work/in12mp.jpg"

names=()
commands=()
# add NAME COMMAND...: registers a command (arguments joined; none contains spaces).
add() {
  names+=("$1")
  shift
  commands+=("$*")
}
add "12 MP rotate 90: orientcam capture --source file: (lossless)" \
  "$orientcam" capture --source "file:$work/in12mp.jpg" --orientation left-up --force \
  -o "$work/out-orientcam.jpg"
add "12 MP rotate 90: orientcam, output on disk (fsync)" \
  "$orientcam" capture --source "file:$work/in12mp.jpg" --orientation left-up --force \
  -o "$disk/out-orientcam.jpg"
add "12 MP rotate 90: jpegtran -rotate 90" \
  jpegtran -rotate 90 -outfile "$work/out-jpegtran.jpg" "$work/in12mp.jpg"
add "12 MP rotate 90: exiftran -9" \
  exiftran -9 -o "$work/out-exiftran.jpg" "$work/in12mp.jpg"
add "4000x3000 rotate 90: orientcam --lossless trim" \
  "$orientcam" capture --source "file:$work/in4000.jpg" --orientation left-up --force \
  --lossless trim -o "$work/trim-orientcam.jpg"
add "4000x3000 rotate 90: jpegtran -rotate 90 -trim" \
  jpegtran -rotate 90 -trim -outfile "$work/trim-jpegtran.jpg" "$work/in4000.jpg"
add "4000x3000 rotate 90: orientcam (default --lossless reencode)" \
  "$orientcam" capture --source "file:$work/in4000.jpg" --orientation left-up --force \
  -o "$work/reencode-orientcam.jpg"
add "1280x720 photo, upright: orientcam --source pattern" \
  "$orientcam" capture --source pattern --resolution 1280x720 --orientation normal --force \
  -o "$work/pattern-orientcam.jpg"
add "1280x720 photo, upright: fswebcam -d TEST:" \
  fswebcam -q -d TEST: -r 1280x720 --no-banner --jpeg 90 "$work/pattern-fswebcam.jpg"
add "1280x720 photo, turned 90: orientcam --orientation left-up" \
  "$orientcam" capture --source pattern --resolution 1280x720 --orientation left-up --force \
  -o "$work/pattern-orientcam90.jpg"
add "1280x720 photo, turned 90: fswebcam --rotate 90" \
  fswebcam -q -d TEST: -r 1280x720 --no-banner --jpeg 90 --rotate 90 "$work/pattern-fswebcam90.jpg"

# Rounds interleave the commands, so a busy moment on a shared machine hits all of them alike.
declare -A times mems cpus
for ((c = 0; c < ${#commands[@]}; c++)); do
  ${commands[c]} >/dev/null 2>&1 || { echo "bench: failed: ${commands[c]}" >&2; exit 1; }
done
for ((i = 0; i < runs; i++)); do
  for ((c = 0; c < ${#commands[@]}; c++)); do
    start=$(date +%s%N)
    /usr/bin/time -f "%M %U %S" -o "$work/mem" ${commands[c]} >/dev/null 2>&1
    end=$(date +%s%N)
    times[$c]+="$(((end - start) / 1000)) "
    read -r kb user sys <"$work/mem"
    mems[$c]+="$kb "
    cpus[$c]+="$(awk -v u="$user" -v s="$sys" 'BEGIN { print (u + s) * 1000 }') "
  done
done

echo "orientcam benchmark: median of $runs interleaved runs, $(nproc) CPUs, files in" \
  "$(stat -f -c %T "$work"), 12 MP input $(stat -c %s "$work/in12mp.jpg") bytes"
echo
echo "| task and command                                             | wall ms | CPU ms | peak MiB |"
echo "|--------------------------------------------------------------|--------:|-------:|---------:|"
for ((c = 0; c < ${#commands[@]}; c++)); do
  median_us=$(tr ' ' '\n' <<<"${times[$c]}" | grep . | sort -n |
    awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
  peak_kb=$(tr ' ' '\n' <<<"${mems[$c]}" | grep . | sort -n | tail -n 1)
  cpu_ms=$(tr ' ' '\n' <<<"${cpus[$c]}" | grep . | awk '{ t += $1 } END { print t / NR }')
  awk -v name="${names[c]}" -v us="$median_us" -v cpu="$cpu_ms" -v kb="$peak_kb" \
    'BEGIN { printf "| %-60s | %7.1f | %6.0f | %8.1f |\n", name, us / 1000, cpu, kb / 1024 }'
done
echo

# The outputs agree: orientcam's lossless rotation has exactly jpegtran's pixels, and the
# pattern in it is upright.
for pair in out trim; do
  if cmp -s <(djpeg -pnm "$work/$pair-orientcam.jpg") <(djpeg -pnm "$work/$pair-jpegtran.jpg"); then
    echo "check: $pair: orientcam and jpegtran outputs decode to identical pixels"
  else
    echo "check: FAILED: $pair: orientcam and jpegtran outputs differ" >&2
    exit 1
  fi
done
"$orientcam" inspect "$work/out-orientcam.jpg" "$work/reencode-orientcam.jpg" | sed 's/^/check: /'
