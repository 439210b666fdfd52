#!/usr/bin/env bash
# Benchmark (not a test): turn -> output transform applied, for `orientd rotate` on a real
# headless sway (orientd on an emulated polled accelerometer, private bus), next to rot8's
# documented behaviour on the same turns (500 ms sysfs polling, simulated: rot8 is not in
# Debian; its apply step, one swaymsg, is measured on the same sway). Prints median and p95.
#
#   sudo scripts/bench/rotate.sh [--turns 20] [--json]
#
# Runs as root (sway itself is started as nobody). SKIP_BUILD=1 uses what is built.
set -euo pipefail
cd "$(dirname "$0")/../.."
if [ "$(id -u)" -ne 0 ]; then
  echo "bench-rotate: run as root (the fixtures start sway as nobody)" >&2
  exit 77
fi
if [ -z "${SKIP_BUILD:-}" ]; then
  scripts/deps.sh >/dev/null
  swift build --product orientd 2>&1 | grep -v 'prohibited flag' | tail -n 1
  swift build --product orientd-rotate 2>&1 | grep -v 'prohibited flag' | tail -n 1
  swift build --product rotate-bench 2>&1 | grep -v 'prohibited flag' | tail -n 1
fi
bin=$(swift build --show-bin-path)
exec "$bin/rotate-bench" "$@"
