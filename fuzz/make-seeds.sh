#!/usr/bin/env bash
# Regenerates the generated seed files in fuzz/corpus/ from real sources; the hand-written
# seeds (and every regress-* input a fixed crash left) are kept. Needs `swift build` done (for
# orient-bench, orientd and orientcam) and the fuzz targets built (scripts/fuzz.sh --build).
# Run it from the repository root; review `git status` afterwards.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=$(swift build --show-bin-path)
C=fuzz/corpus

# Every ACCEL_MOUNT_MATRIX in systemd's hwdb (udev package), as hwdb writes them.
rm -f $C/mount-matrix/hwdb-*
grep -h '^ *ACCEL_MOUNT_MATRIX=' /lib/udev/hwdb.d/60-sensor.hwdb | sed 's/^ *ACCEL_MOUNT_MATRIX=//' \
  | sort -u | nl -nln -w1 | while read -r n m; do printf '%s' "$m" >"$C/mount-matrix/hwdb-$n"; done

# Traces as orient-bench writes them for orientd replay (first 60 lines: comments, header,
# samples of three sensor profiles).
"$BIN/orient-bench" trace rotate-90-fast --quick --profile 12.5Hz-8bit | head -n 60 \
  >$C/trace-csv/rotate-90-fast-12hz-head.csv
"$BIN/orient-bench" trace shake --quick --profile 25Hz-12bit | head -n 60 >$C/trace-csv/shake-25hz-head.csv
"$BIN/orient-bench" trace put-down --quick --profile 12.5Hz-8bit | head -n 60 \
  >$C/trace-csv/put-down-12hz-head.csv

# Watch lines as orientd prints them (byte 0 of a watch-lines input picks the read sizes).
{ printf '\x05'; "$BIN/orient-bench" trace demo --quick | "$BIN/orientd" replay --json --tilt | head -20; } \
  >$C/watch-lines/replay-json-tilt
{ printf '\x01'; "$BIN/orient-bench" trace rotate-180-fast --quick | "$BIN/orientd" replay --json; } \
  >$C/watch-lines/replay-json
{ printf '@'; "$BIN/orient-bench" trace demo --quick | "$BIN/orientd" replay --json | head -1; } \
  >$C/json/watch-line

# Overlay files: the built-in overlay as `orientcam layout --print-overlay` writes it, for a small
# rendered preview and a large one laid out only (byte 0 picks the preview size).
{ printf '\x11'; "$BIN/orientcam" layout --print-overlay; } >$C/overlay-json/built-in-176
{ printf '\xb7'; "$BIN/orientcam" layout --print-overlay; } >$C/overlay-json/built-in-1136x1776

# D-Bus messages of the orientd / iio-sensor-proxy API shapes, marshalled by DBusKit.
FUZZ_WRITE_SEEDS=$PWD/$C/dbus-message SWIFT_BACKTRACE=enable=no build-fuzz/bin/dbus-message

# Small JPEGs: orientcam's test pattern (with and without an EXIF Orientation, odd size from a
# raw format), and cjpeg/jpegtran variants (4:4:4, 4:2:2, grey, progressive, restart markers,
# arithmetic coding, trimmed rotation, a truncated file). Byte 0 of an input picks the plan.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$BIN/orientcam" capture --source pattern --resolution 64x48 --format mjpeg --orientation left-up \
  --rotate exif -o "$tmp/pattern-exif.jpg" >/dev/null
"$BIN/orientcam" capture --source pattern --resolution 40x30 --format mjpeg --orientation normal \
  -o "$tmp/pattern-40x30.jpg" >/dev/null
"$BIN/orientcam" capture --source pattern --resolution 36x20 --format yuyv --orientation right-up \
  -o "$tmp/pattern-odd.jpg" >/dev/null
djpeg -ppm "$tmp/pattern-40x30.jpg" >"$tmp/p.ppm"
cjpeg -sample 1x1 -quality 50 "$tmp/p.ppm" >"$tmp/s444.jpg"
cjpeg -sample 2x1 -quality 50 "$tmp/p.ppm" >"$tmp/s422.jpg"
cjpeg -grayscale -quality 50 "$tmp/p.ppm" >"$tmp/gray.jpg"
cjpeg -progressive -quality 50 "$tmp/p.ppm" >"$tmp/progressive.jpg"
cjpeg -restart 1 -quality 50 "$tmp/p.ppm" >"$tmp/restart.jpg"
cjpeg -arithmetic -quality 50 "$tmp/p.ppm" >"$tmp/arithmetic.jpg"
jpegtran -rotate 90 -trim "$tmp/pattern-exif.jpg" >"$tmp/jpegtran-rot90.jpg"
head -c 1200 "$tmp/pattern-40x30.jpg" >"$tmp/truncated.jpg"
i=0
for f in "$tmp"/*.jpg; do
  i=$((i + 1))
  { printf "\\x$(printf %02x $(((i * 37) % 128)))"; cat "$f"; } >"$C/jpeg-file/$(basename "$f" .jpg)"
done

# Scan records in the layouts of real drivers (see the header of fuzz/targets/scan-record.swift).
python3 - "$C/scan-record" <<'PY'
import os, struct, sys
d = sys.argv[1]
def ch(index, big, signed, storage, ts, rep, bits, shift):
    st = {8: 0, 16: 1, 32: 2, 64: 3}[storage]
    repsel = {1: 0, 2: 4, 3: 5, 4: 6, 255: 7}[rep]
    flags = (1 if big else 0) | (2 if signed else 0) | (st << 2) | (16 if ts else 0) | (repsel << 5)
    return bytes([index, flags, (bits - 1) % 256, shift])
def seed(name, chans, record):
    open(os.path.join(d, name), 'wb').write(bytes([len(chans) - 1]) + b''.join(chans) + record)
ts = ch(3, False, True, 64, True, 1, 64, 0)
seed('accel3d-s32', [ch(i, False, True, 32, False, 1, 32, 0) for i in range(3)] + [ts],
     struct.pack('<iii', 12, -9806, 310) + b'\0' * 4 + struct.pack('<q', 1234567890123))
seed('bmc150-s12', [ch(i, False, True, 16, False, 1, 12, 4) for i in range(3)] + [ts],
     struct.pack('<hhh', 16 << 4, -1024 << 4, 5 << 4) + b'\0' * 2 + struct.pack('<q', 99))
seed('mma8452-be-s14', [ch(i, True, True, 16, False, 1, 14, 2) for i in range(3)] + [ts],
     struct.pack('>hhh', 100 << 2, -4000 << 2, 7 << 2) + b'\0' * 2 + struct.pack('<q', 5))
seed('repeat-s16x3', [ch(0, False, True, 16, False, 3, 16, 0), ts],
     struct.pack('<hhh', 1, -2, 3) + b'\0' * 2 + struct.pack('<q', 7))
seed('u8-gaps', [ch(0, False, False, 8, False, 1, 8, 0), ch(5, False, False, 8, False, 1, 8, 0),
                 ch(9, False, False, 8, False, 1, 6, 2)], bytes([1, 2, 3]))
seed('s16-x-ts', [ts, ch(0, False, True, 16, False, 1, 16, 0)],
     struct.pack('<h', -1) + b'\0' * 6 + struct.pack('<q', 1))
PY
echo "make-seeds: done; check git status"
