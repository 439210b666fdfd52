#!/usr/bin/env bash
# The whole test suite, from a fresh clone: installs Debian packages, builds, runs every test
# stage and fails on the first failing stage. CI (.ci/run) runs exactly this.
set -euo pipefail
cd "$(dirname "$0")/.."
start=$(date +%s)
stage() { printf '\n==== %s (%ss)\n' "$1" "$(( $(date +%s) - start ))"; }

stage "Debian packages"
scripts/deps.sh

stage "lint: swift format lint --strict"
swift format lint --strict -r Package.swift Sources Benchmarks Tests fuzz

stage "build (debug, with tests)"
swift build --build-tests

stage "unit and integration tests (private dbus-daemon, umockdev testbeds)"
swift test --skip-build

stage "iio-sensor-proxy 3.9.0's own integration tests, orientd as the daemon (Tests/Upstream/run.sh)"
Tests/Upstream/run.sh

stage "orientation quality gate: orient-bench --quick --split tune (deterministic simulation, no timing)"
# The tune split's targets gate. The held-out split (issue 25) is reported, not gated: its
# 4-repetition run meets every per-family and pooled target, but the one-repetition quick run
# misses one (a walk-turn at 100 Hz) and three wrong-scale replays fail at 25 and 12.5 Hz:
# docs/detector.md says which and why.
"$(swift build --show-bin-path)/orient-bench" --quick --no-throughput --split tune | tail -n 30

stage "tests against real kernel drivers in a QEMU VM (vm/run.sh, the binaries built above)"
# vm/run.sh exits 77 only when QEMU cannot run at all on this machine (never with CI=true); it
# says so in a banner, and the other stages still count.
vm_status=0
vm/run.sh || vm_status=$?
if [ "$vm_status" -eq 77 ]; then
  echo "VM stage skipped: QEMU cannot run here (see the banner above)"
elif [ "$vm_status" -ne 0 ]; then
  exit "$vm_status"
fi

stage "Debian packages: scripts/build-deb.sh (release build, dpkg-buildpackage, man pages, lintian)"
scripts/build-deb.sh

stage "the packages as users get them: systemd as PID 1 in the VM (vm/run.sh --systemd)"
vm_status=0
vm/run.sh --systemd || vm_status=$?
if [ "$vm_status" -eq 77 ]; then
  echo "systemd VM stage skipped: QEMU cannot run here (see the banner above)"
elif [ "$vm_status" -ne 0 ]; then
  exit "$vm_status"
fi

stage "AddressSanitizer + LeakSanitizer: the test suite again (scripts/sanitize.sh asan, build-asan/)"
scripts/sanitize.sh asan

stage "fuzzing: every target in fuzz/targets for ${FUZZ_CI_SECONDS:-20} s (scripts/fuzz.sh --ci)"
scripts/fuzz.sh --ci

printf '\n==== all stages passed in %ss\n' "$(( $(date +%s) - start ))"
