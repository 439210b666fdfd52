#!/usr/bin/env bash
# Runs the test suite under a sanitizer and fails on any report.
#
#   scripts/sanitize.sh asan [swift test options...]   AddressSanitizer, LeakSanitizer on
#   scripts/sanitize.sh tsan [swift test options...]   ThreadSanitizer
#
# Each builds into its own scratch path (build-asan/, build-tsan/) so the normal .build is left
# alone, then runs `swift test --skip-build` with the same sanitizer. The test helpers and
# executables the tests start (orientd, orientcam, accel-probe) are built with the sanitizer too,
# so a report in a child process fails the test that started it (its exit status changes).
#
# ASan: LeakSanitizer runs at the exit of every instrumented process (detect_leaks=1). The only
# leaks allowed are listed, with the reason for each, in scripts/sanitizers/lsan.supp: the
# Swift/XCTest runtime's, never the project's.
set -euo pipefail
cd "$(dirname "$0")/.."
kind=${1:?usage: scripts/sanitize.sh asan|tsan [swift test options...]}
shift
case "$kind" in
  asan) sanitizer=address ;;
  tsan) sanitizer=thread ;;
  *) echo "sanitize: unknown sanitizer '$kind' (asan or tsan)" >&2; exit 64 ;;
esac
scratch=build-$kind
supp=$PWD/scripts/sanitizers

# Swift's crash handler would otherwise print its own backtrace over the sanitizer's report.
export SWIFT_BACKTRACE=enable=no
export ASAN_OPTIONS=detect_leaks=1:halt_on_error=1
export LSAN_OPTIONS=suppressions=$supp/lsan.supp:print_suppressions=0
export TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1:suppressions=$supp/tsan.supp

start=$(date +%s)
echo "sanitize: building with --sanitize=$sanitizer into $scratch/"
swift build --build-tests --sanitize="$sanitizer" --scratch-path "$scratch" 2>&1 \
  | grep -v "Cannot export local symbol" || true
# grep swallows the build's status: check that the test bundle was built.
[ -e "$scratch/debug/orientdPackageTests.xctest" ] || { echo "sanitize: build failed" >&2; exit 1; }
built=$(date +%s)

log=$scratch/sanitize-test.log
echo "sanitize: running the tests under $kind (log: $log)"
# The status of swift test itself (a pipeline's status would be grep's).
rc=0
swift test --skip-build --sanitize="$sanitizer" --scratch-path "$scratch" "$@" > "$log" 2>&1 || rc=$?
grep -E "^(✔|✘) (Suite|Test run)|recorded an issue|Sanitizer|SUMMARY" "$log" || true
reports=$(grep -cE "ERROR: (Address|Leak|Thread)Sanitizer|WARNING: ThreadSanitizer" "$log" || true)
echo "sanitize: $kind: build $((built - start)) s, tests $(($(date +%s) - built)) s," \
  "exit status $rc, $reports sanitizer report(s)"
if [ "$rc" -ne 0 ] || [ "$reports" -ne 0 ]; then
  echo "sanitize: FAILED (see $log)" >&2
  exit 1
fi
