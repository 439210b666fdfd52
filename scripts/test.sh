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

stage "build (debug: the binaries the upstream suite, orient-bench and the VM stages run)"
swift build

# The suite runs once, under AddressSanitizer and LeakSanitizer: every test a plain
# `swift test --skip-build` runs, and a leak or memory error in the test process or in any
# orientd, orientcam or probe it starts fails it too. (A second, plain run would find nothing
# this one does not: another minute or more of CI's 40-minute budget.)
stage "unit and integration tests under ASan + LSan (private dbus-daemon, umockdev testbeds; scripts/sanitize.sh asan, build-asan/)"
scripts/sanitize.sh asan

stage "iio-sensor-proxy 3.9.0's own integration tests, orientd as the daemon (Tests/Upstream/run.sh)"
Tests/Upstream/run.sh

stage "orientation quality gate: orient-bench --quick, tune and held-out splits (deterministic simulation, no timing)"
# Both splits gate: the tune split's targets and, since the detector's fourth round
# (docs/detector.md), the held-out split's (shapes and seeds the detector was not tuned on), in
# the one-repetition quick run. pipefail: a failed target fails the stage.
"$(swift build --show-bin-path)/orient-bench" --quick --no-throughput | tail -n 30

# The two VM stages keep about one of the two cores busy (QEMU's CPU time is 70-95 % of one core
# over the stage's wall time: the guest mostly waits for its emulators and daemons), so each runs
# beside a stage that needs no VM: the release build of the packages beside the bash VM, fuzzing
# beside the systemd VM. The stage beside writes its output to .build/ci/NAME.log, printed when
# it ends; either failing fails the run.
mkdir -p .build/ci
BESIDE_PID=
beside_stop() {
  if [ -n "$BESIDE_PID" ]; then
    kill -TERM -- "-$BESIDE_PID" 2>/dev/null || true
    wait "$BESIDE_PID" 2>/dev/null || true
  fi
}
trap beside_stop EXIT
# beside NAME COMMAND...: start COMMAND in its own process group (stopped if the run fails first).
beside() {
  BESIDE_NAME=$1
  shift
  printf '(%s starts beside the next stage; its output: .build/ci/%s.log)\n' "$BESIDE_NAME" "$BESIDE_NAME"
  setsid "$@" >".build/ci/$BESIDE_NAME.log" 2>&1 &
  BESIDE_PID=$!
}
# beside_wait TITLE: wait for it, print its output under a stage line, fail if it failed.
beside_wait() {
  local rc=0
  wait "$BESIDE_PID" || rc=$?
  BESIDE_PID=
  stage "$1 (ran beside the stage above; exit status $rc)"
  cat ".build/ci/$BESIDE_NAME.log"
  [ "$rc" -eq 0 ] || exit "$rc"
}
# vm_stage NAME [vm/run.sh options]: vm/run.sh exits 77 only when QEMU cannot run at all on this
# machine (never with CI=true); it says so in a banner, and the other stages still count.
vm_stage() {
  local name=$1 vm_status=0
  shift
  vm/run.sh "$@" || vm_status=$?
  if [ "$vm_status" -eq 77 ]; then
    echo "$name skipped: QEMU cannot run here (see the banner above)"
  elif [ "$vm_status" -ne 0 ]; then
    exit "$vm_status"
  fi
}

beside build-deb scripts/build-deb.sh
stage "tests against real kernel drivers in a QEMU VM (vm/run.sh, the binaries built above)"
vm_stage "VM stage"
beside_wait "Debian packages: scripts/build-deb.sh (release build, dpkg-buildpackage, man pages, lintian)"

beside fuzz scripts/fuzz.sh --ci
stage "the packages as users get them: systemd as PID 1 in the VM (vm/run.sh --systemd)"
vm_stage "systemd VM stage" --systemd
beside_wait "fuzzing: every target in fuzz/targets for ${FUZZ_CI_SECONDS:-20} s (scripts/fuzz.sh --ci)"

printf '\n==== all stages passed in %ss\n' "$(( $(date +%s) - start ))"
