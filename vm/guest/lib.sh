# Helpers for the guest tests, sourced by main.sh and by every vm/guest/tests/*.sh.
# Paths inside the guest: the host root is /, read-only; these come from the host's shares.
# shellcheck shell=bash
VM=/run/vm
PROJECT=$VM/project # the project tree (read-only)
BIN=$VM/bin         # swift's build products (read-only; empty when nothing was built)
KROOT=$VM/kernel    # the extracted kernel package (modules for modprobe -d)
OUT=$VM/out         # results and artefacts, copied back to the host's .build/vm/out
GUEST=$PROJECT/vm/guest
PY=/usr/bin/python3 # Debian's python (stdlib only), not whatever a PATH may find first
# shellcheck source=/dev/null
[ -f "$OUT/vm.env" ] && . "$OUT/vm.env"
KV=${VM_KERNEL_VERSION:-$(uname -r)}
TOUT=${VM_TEST_OUT:-$OUT/manual} # this test's artefact folder (on the host after the run)
# This test's FIFOs, status files and pid files: on tmpfs, as 9p cannot hold FIFOs.
RUNDIR=$VM/work/${TOUT##*/}
PIDS=$RUNDIR/pids # background processes this test started (see spawn)
mkdir -p "$TOUT" "$PIDS"

# ---- time and logging ---------------------------------------------------------------------------
# Centiseconds since boot, without forking (polling loops call it often; forks are slow in TCG).
now_cs() {
  local up
  read -r up _ </proc/uptime
  up=${up/./}
  NOW_CS=$((10#$up))
}
uptime_s() {
  local up
  read -r up _ </proc/uptime
  echo "$up"
}
log() { echo "[$(uptime_s)] $*"; }

# ---- outcomes -----------------------------------------------------------------------------------
FAILURES=0
# check DESCRIPTION CMD...: run CMD; log ok/FAIL; a failure marks the test failed but goes on.
check() {
  local what=$1
  shift
  if "$@"; then
    log "ok: $what"
  else
    log "FAIL: $what"
    FAILURES=$((FAILURES + 1))
  fi
}
# require DESCRIPTION CMD...: like check, but a failure ends the test now.
require() {
  local what=$1
  shift
  if "$@"; then
    log "ok: $what"
  else
    log "FAIL: $what"
    exit 1
  fi
}
fail() {
  log "FAIL: $*"
  exit 1
}
# skip REASON: the test cannot run yet (a product is missing); main.sh prints the reason loudly.
skip() {
  echo "$*" >"$TOUT/skip-reason"
  log "SKIP: $*"
  exit 77
}
# finish: end of a test; exit status from the checks made.
finish() {
  part_end
  if [ "$FAILURES" -eq 0 ]; then exit 0; fi
  log "$FAILURES check(s) failed"
  exit 1
}

# ---- parts: one script, several reported tests ---------------------------------------------------
# A script that declares "# parts: A B C" (see main.sh) shares its set-up between the tests A, B
# and C and reports each on its own line: "part A" starts reporting checks as A, up to the next
# part or finish. A part fails when one of its checks does; a require/fail ends the script with
# the current part failed and the later ones not reached.
PART=
part() {
  part_end
  PART=$1
  PART_FAILURES=$FAILURES
  PART_LOG_LINE=$(wc -l <"$TOUT/log.txt" 2>/dev/null || echo 0)
  now_cs
  PART_START=$NOW_CS
  log "==== $PART"
}
part_end() {
  [ -n "$PART" ] || return 0
  local result=PASS note=${1:-}
  [ "$FAILURES" -gt "$PART_FAILURES" ] || [ -n "$note" ] && result=FAIL
  [ $result = FAIL ] && [ -z "$note" ] && note=$(part_first_failure)
  now_cs
  printf '%s %s %d.%d %s\n' "$PART" "$result" $(((NOW_CS - PART_START) / 100)) \
    $((((NOW_CS - PART_START) % 100) / 10)) "$note" >>"$TOUT/parts"
  PART=
}
# On an early exit (require, fail, a timeout's TERM), the part that was running failed.
part_abort() {
  local why
  if [ "$1" -ne 0 ] && [ "$1" -ne 77 ] && [ -n "$PART" ]; then
    why=$(part_first_failure)
    [ "$1" -eq 143 ] && why="stopped by the test's time limit${why:+ after: $why}"
    part_end "${why:-ended early (exit status $1)}"
  fi
  return 0
}
# The first failed check of the running part, from the test's log.
part_first_failure() {
  tail -n +$((${PART_LOG_LINE:-0} + 1)) "$TOUT/log.txt" 2>/dev/null | grep -m1 -o 'FAIL: .*' | cut -c7-
}

# ---- waiting for conditions ---------------------------------------------------------------------
# wait_for SECONDS DESCRIPTION CMD...: poll CMD every 20 ms until it succeeds; on timeout, log
# what was awaited and return 1. Never a fixed sleep: the wait ends as soon as the condition holds.
wait_for() {
  local limit=$1 what=$2 end
  shift 2
  now_cs
  end=$((NOW_CS + limit * 100))
  until "$@"; do
    now_cs
    if [ "$NOW_CS" -ge "$end" ]; then
      log "timed out after ${limit}s waiting for: $what"
      return 1
    fi
    sleep 0.02
  done
}

# ---- background processes -----------------------------------------------------------------------
# spawn NAME CMD...: start CMD in the background, output in $TOUT/NAME.log, pid remembered so
# stop/stop_all (and main.sh after the test) can end it. The pid is in SPAWNED.
spawn() {
  local name=$1
  shift
  "$@" >"$TOUT/$name.log" 2>&1 </dev/null &
  SPAWNED=$!
  echo "$SPAWNED" >"$PIDS/$name.pid"
}
# stop NAME [SIGNAL]: signal a spawned process (TERM by default), wait up to 5 s, then KILL.
stop() {
  local name=$1 sig=${2:-TERM} pid
  [ -f "$PIDS/$name.pid" ] || return 0
  pid=$(cat "$PIDS/$name.pid")
  rm -f "$PIDS/$name.pid"
  kill -"$sig" "$pid" 2>/dev/null || return 0
  if ! wait_for 5 "$name (pid $pid) to exit" not_running "$pid"; then
    kill -KILL "$pid" 2>/dev/null
  fi
  wait "$pid" 2>/dev/null
  return 0
}
not_running() { ! kill -0 "$1" 2>/dev/null; }
running() { kill -0 "$(cat "$PIDS/$1.pid" 2>/dev/null || echo 0)" 2>/dev/null; }
stop_all() {
  local f
  for f in "$PIDS"/*.pid; do
    [ -e "$f" ] || continue
    f=${f##*/}
    stop "${f%.pid}"
  done
}
# Every test ends its background processes, however it ends (timeout sends TERM).
trap 'exit 143' TERM INT
trap 'part_abort $?; stop_all; bus_stop; cp "$RUNDIR"/*.status "$TOUT/" 2>/dev/null' EXIT

# ---- kernel modules -----------------------------------------------------------------------------
# The host has no /lib/modules: load from the extracted package with modprobe -d.
# kmod MODULE [PARAM=VALUE...] or kmod -a MODULE...: modules already loaded are not asked for
# again (each modprobe reads its indexes over 9p, about a second under TCG).
kmod() {
  local m wanted=()
  if [ "$1" = -a ]; then
    shift
    for m; do [ -d "/sys/module/${m//-/_}" ] || wanted+=("$m"); done
    [ ${#wanted[@]} -eq 0 ] || modprobe -d "$KROOT" -S "$KV" -a "${wanted[@]}"
  else
    [ -d "/sys/module/${1//-/_}" ] || modprobe -d "$KROOT" -S "$KV" "$@"
  fi
}

# ---- products -----------------------------------------------------------------------------------
# need_product NAME [SUBCOMMAND] -- WORD...: skip the test unless $BIN/NAME exists and its help
# ("NAME --help", or "NAME SUBCOMMAND --help") mentions every WORD. This is what turns the
# product checks on by themselves once orientd and orientcam are built on this branch.
need_product() {
  local name=$1 exe=$BIN/$1 help word sub=()
  shift
  while [ $# -gt 0 ] && [ "$1" != -- ]; do
    sub+=("$1")
    shift
  done
  [ "${1:-}" = -- ] && shift
  [ -x "$exe" ] || skip "product not built yet: $name (no executable $name in the build products)"
  help=$("$exe" "${sub[@]}" --help 2>&1) || true
  for word in "${sub[@]}" "$@"; do
    grep -qF -- "$word" <<<"$help" ||
      skip "product not built yet: '$name${sub[*]:+ ${sub[*]}} --help' does not mention $word"
  done
}

# ---- udev ---------------------------------------------------------------------------------------
# The hwdb entry the tests give the emulated accelerometer (vm/guest/fixtures/61-orientd-vm.hwdb).
HWDB_MATRIX='0, 1, 0; -1, 0, 0; 0, 0, 1'
# udev_start: systemd-udevd for the whole guest, started once. /etc/udev is read-only (the host's
# root): a tmpfs goes over it with a copy of its content, the project's udev/*.rules, the test
# hwdb entry, and hwdb.bin compiled from the host's hwdb sources plus that entry (vm/run.sh runs
# systemd-hwdb update on the host: several seconds faster than here). /etc/udev/hwdb.bin takes
# precedence over the distribution's /lib/udev/hwdb.bin.
udev_start() {
  [ -e $VM/udevd.started ] && return 0
  local copy=$VM/etc-udev rules
  mkdir -p "$copy"
  cp -a /etc/udev/. "$copy/"
  mount -t tmpfs -o mode=755 etc-udev /etc/udev
  cp -a "$copy/." /etc/udev/
  mkdir -p /etc/udev/rules.d /etc/udev/hwdb.d
  for rules in "$PROJECT"/udev/*.rules; do
    [ -e "$rules" ] || continue
    cp "$rules" /etc/udev/rules.d/
    log "udev: project rules ${rules#"$PROJECT"/}"
  done
  cp "$GUEST"/fixtures/*.hwdb /etc/udev/hwdb.d/
  cp $VM/data/hwdb.bin /etc/udev/hwdb.bin
  mkdir -p /run/udev
  /lib/systemd/systemd-udevd --daemon || return 1
  wait_for 20 "udevd control socket" udevadm control --ping || return 1
  touch $VM/udevd.started
}

# ---- the system bus -----------------------------------------------------------------------------
BUS_SOCKET=/run/dbus/system_bus_socket
# bus_start [POLICY_DIR...]: a system bus (the standard socket path, and DBUS_SYSTEM_BUS_ADDRESS
# for every client) with the system bus' default policy (deny owning names and method calls
# unless a policy file allows them) plus the *.conf files of each POLICY_DIR.
bus_start() {
  local conf=$TOUT/system-bus.conf dir
  mkdir -p /run/dbus
  rm -f "$BUS_SOCKET"
  {
    cat <<'EOF'
<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>system</type>
  <listen>unix:path=/run/dbus/system_bus_socket</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow user="*"/>
    <deny own="*"/>
    <deny send_type="method_call"/>
    <allow send_type="signal"/>
    <allow send_requested_reply="true" send_type="method_return"/>
    <allow send_requested_reply="true" send_type="error"/>
    <allow receive_type="method_call"/>
    <allow receive_type="method_return"/>
    <allow receive_type="error"/>
    <allow receive_type="signal"/>
    <allow send_destination="org.freedesktop.DBus" send_interface="org.freedesktop.DBus"/>
    <allow send_destination="org.freedesktop.DBus"
           send_interface="org.freedesktop.DBus.Introspectable"/>
    <allow send_destination="org.freedesktop.DBus" send_interface="org.freedesktop.DBus.Properties"/>
  </policy>
EOF
    for dir in "$@"; do echo "  <includedir>$dir</includedir>"; done
    echo "</busconfig>"
  } >"$conf"
  dbus-daemon --config-file="$conf" --fork --print-pid=3 3>"$TOUT/dbus-daemon.pid" \
    >"$TOUT/dbus-daemon.log" 2>&1 || return 1
  export DBUS_SYSTEM_BUS_ADDRESS=unix:path=$BUS_SOCKET
  wait_for 10 "the system bus socket" test -S "$BUS_SOCKET"
}
bus_stop() {
  [ -f "$TOUT/dbus-daemon.pid" ] || return 0
  kill "$(cat "$TOUT/dbus-daemon.pid")" 2>/dev/null
  rm -f "$TOUT/dbus-daemon.pid" "$BUS_SOCKET"
}
# bus_has_owner NAME: the name is owned on the system bus.
bus_has_owner() {
  dbus-send --system --print-reply=literal --dest=org.freedesktop.DBus /org/freedesktop/DBus \
    org.freedesktop.DBus.NameHasOwner "string:$1" 2>/dev/null | grep -q true
}

# own NAME / own_as_nobody NAME: ask the bus for NAME as root / as uid 65534, as a service would
# (RequestName through busctl, whose connection and name go away when it exits): exit 0 when we
# became the primary owner, 2 when the bus policy refused, 1 otherwise. refused CMD...: CMD
# exited 2.
request_name() {
  local out
  out=$("$@" busctl --system call org.freedesktop.DBus /org/freedesktop/DBus org.freedesktop.DBus \
    RequestName su "$NAME_WANTED" 4 2>&1)
  echo "RequestName $NAME_WANTED: $out"
  case $out in
    "u 1") return 0 ;;
    *"Access denied"*) return 2 ;;
    *) return 1 ;;
  esac
}
own() { NAME_WANTED=$1 request_name; }
own_as_nobody() { NAME_WANTED=$1 request_name setpriv --reuid=65534 --regid=65534 --clear-groups; }
refused() {
  "$@"
  [ $? -eq 2 ]
}

# ---- the emulated accelerometer -----------------------------------------------------------------
ACCEL_CTL=$RUNDIR/accel.control
ACCEL_STATUS=$RUNDIR/accel.status
ACCEL_SENT=0
# accel_start [emulator options]: load the HID sensor drivers, start vm/guest/emu/hid_accel.py and
# wait for the IIO device; IIO_DEV is its sysfs path, IIO_NAME its iio:deviceN name.
accel_start() {
  kmod -a uhid hid-sensor-hub hid-sensor-accel-3d || return 1
  rm -f "$ACCEL_CTL" "$ACCEL_STATUS"
  mkfifo "$ACCEL_CTL"
  spawn accel "$PY" "$GUEST/emu/hid_accel.py" --control "$ACCEL_CTL" --status "$ACCEL_STATUS" \
    --log "$TOUT/accel-events.log" "$@"
  ACCEL_SENT=0
  wait_for 20 "the accel_3d IIO device" iio_find_accel
}
# accel SETTING...: send one command to the emulator and wait until it has handled it.
accel() {
  ACCEL_SENT=$((ACCEL_SENT + 1))
  echo "$*" >"$ACCEL_CTL"
  wait_for 10 "the emulator to handle '$*'" accel_handled "$ACCEL_SENT"
}
# accel_is KEY VALUE: the emulator's status has KEY=VALUE now (a condition for wait_for).
accel_is() { [ "$(accel_get "$1")" = "$2" ]; }
accel_handled() { [ "$(accel_get commands)" -ge "$1" ] 2>/dev/null; }
# accel_get KEY: a value from the emulator's status file (counters, state).
accel_get() { sed -n "s/^$1=//p" "$ACCEL_STATUS" 2>/dev/null; }
iio_find_accel() {
  local d
  for d in /sys/bus/iio/devices/iio:device*; do
    if [ "$(cat "$d/name" 2>/dev/null)" = accel_3d ]; then
      IIO_DEV=$d
      IIO_NAME=${d##*/}
      return 0
    fi
  done
  return 1
}
iio_gone() { ! iio_find_accel; }

# ---- the vivid camera ---------------------------------------------------------------------------
# vivid_start: one vivid instance with a single webcam-type capture input, /dev/video0 (the first
# video node in this guest), showing the 75% colour bars without on-screen text.
VIDEO=/dev/video0
vivid_start() {
  kmod vivid n_devs=1 node_types=0x1 num_inputs=1 input_types=0x0 || return 1
  wait_for 20 "$VIDEO" test -c "$VIDEO" || return 1
  v4l2-ctl -d "$VIDEO" -c test_pattern=0 -c osd_text_mode=2
}
# ORIENTATION -> clockwise rotation of the capture (issue 2's convention).
rotation_of() {
  case $1 in
    normal) echo 0 ;;
    left-up) echo 90 ;;
    bottom-up) echo 180 ;;
    right-up) echo 270 ;;
  esac
}
# not CMD...: succeeds when CMD fails (for check/require).
not() { ! "$@"; }

# ---- the emulated keyboard ----------------------------------------------------------------------
KEYS_CTL=$RUNDIR/keys.control
KEYS_STATUS=$RUNDIR/keys.status
KEYS_SENT=0
# keyboard_start [emulator options]: start emu/uinput_keyboard.py; KEYS_NODE is its event node.
keyboard_start() {
  rm -f "$KEYS_CTL" "$KEYS_STATUS"
  mkfifo "$KEYS_CTL"
  spawn keyboard "$PY" "$GUEST/emu/uinput_keyboard.py" --control "$KEYS_CTL" --status "$KEYS_STATUS" "$@"
  KEYS_SENT=0
  wait_for 20 "the keyboard's event node" test -s "$KEYS_STATUS" || return 1
  KEYS_NODE=$(sed -n 's/^node=//p' "$KEYS_STATUS")
  test -c "$KEYS_NODE"
}
# keys COMMAND: e.g. "press volumeup"; waits until the emulator has sent it.
keys() {
  KEYS_SENT=$((KEYS_SENT + 1))
  echo "$*" >"$KEYS_CTL"
  wait_for 10 "the keyboard to handle '$*'" keys_handled "$KEYS_SENT"
}
keys_handled() { [ "$(sed -n 's/^commands=//p' "$KEYS_STATUS")" -ge "$1" ] 2>/dev/null; }
# key_events FILE CODE N [exactly]: FILE (from evdev_probe.py watch) has at least (or exactly)
# N events for key CODE.
key_events() {
  local n
  n=$(awk -v c="$2" '$4 == c' "$1" 2>/dev/null | wc -l)
  if [ "${4:-}" = exactly ]; then [ "$n" -eq "$3" ]; else [ "$n" -ge "$3" ]; fi
}

# ---- orientd ------------------------------------------------------------------------------------
ORIENTD_NAME=org.orientd.Orientation1
ORIENTD_PATH=/org/orientd/Orientation1
# orientd_stack [emulator options]: what the orientd checks share: udevd with the test hwdb, a
# system bus with the project's dbus/ policies, the emulated accelerometer held upright (normal)
# and mounted with the hwdb matrix, and the daemon itself, which owns its name at the end.
orientd_stack() {
  need_product orientd -- --watch --json
  shopt -s nullglob
  local policies=("$PROJECT"/dbus/*.conf)
  shopt -u nullglob
  [ ${#policies[@]} -gt 0 ] || skip "product not built yet: no dbus/*.conf policy in the project"
  require "systemd-udevd runs with the test hwdb" udev_start
  require "a system bus with the project's policies" bus_start "$PROJECT/dbus"
  require "the emulated accelerometer appears" accel_start --mount-matrix "$HWDB_MATRIX"
  accel orient normal
  require "udev has processed it" udevadm settle --timeout=20
  spawn orientd "$BIN/orientd" --verbose
  require "orientd owns $ORIENTD_NAME" wait_for 30 "orientd on the bus" bus_has_owner "$ORIENTD_NAME"
}
# orientd_prop NAME: print a property of orientd's own interface (dbus-send's literal form).
orientd_prop() {
  dbus-send --system --print-reply=literal --dest="$ORIENTD_NAME" "$ORIENTD_PATH" \
    org.freedesktop.DBus.Properties.Get "string:$ORIENTD_NAME" "string:$1" 2>&1
}
orientd_has_accel() { orientd_prop HasAccelerometer | grep -q 'boolean true'; }
orientd_no_accel() { orientd_prop HasAccelerometer | grep -q 'boolean false'; }
# watch_start: orientd --watch --json, each line stamped on arrival, in $RUNDIR/watch.lines.
WATCH_LINES=$RUNDIR/watch.lines
watch_start() {
  spawn watch "$PY" "$GUEST/tools/stamp_lines.py" "$WATCH_LINES" -- "$BIN/orientd" --watch --json
}
# watch_reports ORIENTATION: the latest line from --watch names ORIENTATION.
watch_reports() {
  grep '"orientation"' "$WATCH_LINES" 2>/dev/null | tail -n 1 |
    grep -Eq "\"orientation\"[[:space:]]*:[[:space:]]*\"$1\""
}
# watch_rotation DEGREES: the latest line has "rotation": DEGREES.
watch_rotation() {
  grep '"orientation"' "$WATCH_LINES" 2>/dev/null | tail -n 1 |
    grep -Eq "\"rotation\"[[:space:]]*:[[:space:]]*$1([^0-9]|\$)"
}
buffer_on() { grep -qx 1 "$IIO_DEV/buffer/enable" 2>/dev/null; }
buffer_off() { grep -qx 0 "$IIO_DEV/buffer/enable" 2>/dev/null; }
