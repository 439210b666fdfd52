#!/usr/bin/env bash
# Benchmark (not a test) of orientd-face: accuracy per quarter turn on public-domain
# photographs from Debian packages (scikit-image's 100 LFW face crops and 100 non-faces,
# the astronaut and Grace Hopper portraits; every picture shown turned 0/90/180/270 degrees,
# and rolled 20 and 30 degrees off each quarter turn, as a head in bed rarely is exactly
# sideways), and proposal -> answer latency of `orientd-face resolve` from a file camera
# (spawn to answer, the path FaceQuery takes), p50 and p95. Prints tables.
#
#   scripts/bench/face.sh [--runs 30] [--rolls 0,20,30|none] [--turns 0,90,180,270]
#
# Builds orientd-face in release mode first (SKIP_BUILD=1 uses what is built; BIN=DIR picks a
# directory). The vivid latency comes from the VM: vm/run.sh face-vivid (VM BENCH line).
set -euo pipefail
cd "$(dirname "$0")/../.."
if [ -z "${SKIP_BUILD:-}" ]; then
  scripts/deps.sh >/dev/null
  swift build -c release --product orientd-face 2>&1 | grep -v 'prohibited flag' | tail -n 1
fi
bin=${BIN:-$(swift build -c release --show-bin-path)}
exec /usr/bin/python3 scripts/bench/face.py "$bin/orientd-face" "$@"
