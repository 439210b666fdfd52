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
swift format lint --strict -r Package.swift Sources Tests

stage "build (debug, with tests)"
swift build --build-tests

stage "unit and integration tests (private dbus-daemon, umockdev testbeds)"
swift test --skip-build

stage "orientation quality gate: orient-bench --quick (deterministic simulation, no timing)"
"$(swift build --show-bin-path)/orient-bench" --quick --no-throughput | tail -n 30

printf '\n==== all stages passed in %ss\n' "$(( $(date +%s) - start ))"
