#!/usr/bin/env bash
# Runs iio-sensor-proxy 3.9.0's own integration tests (Tests/Upstream/iio-sensor-proxy/tests/
# integration-test.py, see Tests/Upstream/README.md) with orientd as the daemon.
#
#   Tests/Upstream/run.sh [TEST ...]      # e.g. Tests.test_iio_poll_accel; default: all
#
# The test finds its daemon as $top_builddir/src/iio-sensor-proxy and monitor-sensor beside
# it, as in iio-sensor-proxy's meson build tree. This makes such a tree in a temporary
# directory: src/iio-sensor-proxy runs the built orientd (with an empty configuration, so that
# the machine's /etc/orientd.conf does not count), src/monitor-sensor is Debian's.
# The test itself starts a private system bus (GLib's GTestDBus), python3-dbusmock's polkitd
# and a umockdev testbed (it re-executes itself under umockdev-wrapper); nothing on the
# machine is touched. Each test runs in a process of its own, as meson runs them.
#
# Environment: ORIENTD_BIN_DIR (default: `swift build --show-bin-path`, already built).
# Exit status: 0 when every test passed or was skipped on purpose (the file says why).
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
bin=${ORIENTD_BIN_DIR:-$(swift build --show-bin-path)}
[ -x "$bin/orientd" ] || { echo "upstream tests: $bin/orientd not built" >&2; exit 69; }
for tool in umockdev-wrapper monitor-sensor /usr/bin/python3; do
  command -v "$tool" >/dev/null || { echo "upstream tests: $tool missing (scripts/deps.sh)" >&2; exit 69; }
done
/usr/bin/python3 -c 'import dbusmock, psutil, gi; gi.require_version("UMockdev", "1.0")' || {
  echo "upstream tests: python3-dbusmock, python3-psutil, python3-gi or gir1.2-umockdev-1.0 missing (scripts/deps.sh)" >&2
  exit 69
}

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir "$work/src"
: >"$work/orientd.conf"
cat >"$work/src/iio-sensor-proxy" <<EOF
#!/bin/sh
# orientd in iio-sensor-proxy's place (the test adds -v: orientd's --verbose too).
exec "$bin/orientd" --config "$work/orientd.conf" "\$@"
EOF
chmod +x "$work/src/iio-sensor-proxy"
ln -s "$(command -v monitor-sensor)" "$work/src/monitor-sensor"

suite=$root/Tests/Upstream/iio-sensor-proxy
tests=("$@")
if [ ${#tests[@]} -eq 0 ]; then
  mapfile -t tests < <(grep -o '^    def test_[a-z0-9_]*' "$suite/tests/integration-test.py" | sed 's/^    def /Tests./')
fi

start=$(date +%s)
failed=()
skipped=()
for test in "${tests[@]}"; do
  t0=$(date +%s)
  if top_builddir=$work top_srcdir=$suite /usr/bin/python3 "$suite/tests/integration-test.py" -v "$test" \
    >"$work/log" 2>&1; then
    result=ok
    if grep -q '^OK (skipped=' "$work/log"; then
      result=$(grep -Eo 'skipped .*$' "$work/log" | head -n 1 || true)
      skipped+=("$test")
    fi
    echo "upstream: $test: $result ($(( $(date +%s) - t0 ))s)"
  else
    # The test sets UMOCKDEV_DEBUG=all for the daemon: its traces of every wrapped call are
    # left out here, the rest of the log (the test's and the daemon's) is shown.
    echo "upstream: $test: FAILED ($(( $(date +%s) - t0 ))s)"
    grep -Ev '^(testbed wrapped|script_record_open|isatty\(|trap_path|ioctl_|ioctl fd| +(ioctl_|->)|\*\* \(umockdev)' \
      "$work/log" | sed 's/^/  | /'
    failed+=("$test")
  fi
done
echo "upstream: ${#tests[@]} tests, ${#failed[@]} failed, ${#skipped[@]} skipped (iio-sensor-proxy's own fake drivers), $(( $(date +%s) - start ))s"
[ ${#failed[@]} -eq 0 ]
