#!/usr/bin/env bash
# Trigger-to-file latency through libcamera against V4L2 on the same camera: vimc in the test VM
# (QEMU under TCG: vm/run.sh; vimc built out of tree by vm/kmods.sh), through libcamera's vimc
# pipeline (`--source libcamera`) and through its "RGB/YUV Capture" V4L2 node
# (`--source v4l2:/dev/videoN`, the media pipeline as libcamera configured it), the same format
# (RGB24, libcamera's BGR888) and size. Runs the VM test orientcam-libcamera with more photos:
#
#   session     photos from an open `orientcam session --orientation-from -` (an orientation line
#               and Enter each, the device turned through normal, left-up, bottom-up, right-up),
#               PHOTOS of them after 1 warm-up photo: timings.trigger_to_file_ms (trigger read ->
#               photo durable under its name, measured by the session), its halves
#               trigger->frame (the wait for the next frame's exposure) and frame->file (the
#               frame's way to orientcam, then turning, encoding, writing: the same code either
#               way), and what the client saw
#   one-shot    `orientcam capture` held left-up, process start -> exit with the photo written,
#               ONESHOTS runs after 1 warm-up (libcamera's start-up: camera manager, IPA module,
#               pipeline)
#
# The products are the debug build the VM tests use (swift build; not a release build: the VM
# shares .build/debug). Under TCG the numbers are slow; what counts is the two columns side by
# side. Prints the VM's BENCH lines and a Markdown table.
# Usage: scripts/bench/libcamera.sh [PHOTOS [ONESHOTS [WxH]]]   (default 20 5 480x360)
set -euo pipefail
cd "$(dirname "$0")/../.."
photos=${1:-20} oneshots=${2:-5} size=${3:-480x360}
log=$(mktemp)
trap 'rm -f "$log"' EXIT
swift build >"$log" 2>&1 || { cat "$log"; exit 1; }
# Many photos under TCG take longer than the VM's default limit (540 s).
ORIENTD_VM_TIMEOUT=${ORIENTD_VM_TIMEOUT:-1800} VM_BENCH_PHOTOS=$photos VM_BENCH_ONESHOTS=$oneshots \
  VM_BENCH_SIZE=$size vm/run.sh orientcam-libcamera | tee "$log"
grep -q '^VM TEST orientcam-libcamera: PASS' "$log" || { echo "bench: the VM run failed" >&2; exit 1; }
python3 - "$log" <<'PY'
import re, sys
rows = {}
for line in open(sys.argv[1]):
    m = re.match(r'VM BENCH (\S+) (\S+) (\S+) (.+?): n=(\d+) (.*)', line)
    if not m:
        continue
    api, size, fmt, what, n, rest = m.groups()
    for measure, median, p90 in re.findall(r'(\S+) median=([\d.]+) p90=([\d.]+) ms', rest):
        rows.setdefault((what, measure, size, fmt, n), {})[api] = (float(median), float(p90))
print()
print('| %-58s | libcamera median / p90 ms | V4L2 median / p90 ms | ratio |'
      % 'vimc, same device')
print('|%s|--------------------------:|---------------------:|------:|' % ('-' * 60))
for (what, measure, size, fmt, n), by in rows.items():
    lc, v4 = by.get('libcamera'), by.get('v4l2')
    if not lc or not v4:
        continue
    label = '%s %s %s, %s (n=%s)' % (what, size, fmt, measure, n)
    print('| %-58s | %12.1f / %8.1f | %10.1f / %7.1f | %5.2f |'
          % (label, lc[0], lc[1], v4[0], v4[1], lc[0] / v4[0]))
PY
