# Helpers for the guest tests, sourced by main.sh and by every vm/guest/tests/*.sh.
# Paths inside the guest: the host root is /, read-only; these come from the host's shares.
# shellcheck shell=bash
VM=/run/vm
PROJECT=$VM/project # the project tree (read-only)
BIN=$VM/bin         # swift's build products (read-only; empty when nothing was built)
KROOT=$VM/kernel    # the extracted kernel package (modules for modprobe -d)
OUT=$VM/out         # results and artefacts, copied back to the host's .build/vm/out
GUEST=$PROJECT/vm/guest
# Debian's python (stdlib only), not whatever a PATH may find first; -S skips site-packages,
# which halves its start-up under TCG (0.3 s instead of 0.85 s here). Use as "${PY[@]}".
PY=(/usr/bin/python3 -S)
# shellcheck source=/dev/null
[ -f "$OUT/vm.env" ] && . "$OUT/vm.env"
KV=${VM_KERNEL_VERSION:-$(uname -r)}
TOUT=${VM_TEST_OUT:-$OUT/manual} # this test's artefact folder (on the host after the run)
# This test's FIFOs, status files and pid files: on tmpfs, as 9p cannot hold FIFOs.
RUNDIR=$VM/work/${TOUT##*/}
PIDS=$RUNDIR/pids # background processes this test started (see spawn)
mkdir -p "$TOUT" "$PIDS"

# Under QEMU's TCG every fork+exec costs 60-200 ms (sed: 180 ms here), so what runs often (the
# conditions wait_for polls, log) uses bash builtins only.
# nap [SECONDS]: sleep 20 ms (or SECONDS) without a fork: a read with a time-out on a FIFO that
# nobody writes to.
[ -p "$RUNDIR/nap" ] || mkfifo "$RUNDIR/nap"
exec {NAP_FD}<>"$RUNDIR/nap"
nap() {
  read -r -t "${1:-0.02}" -u "$NAP_FD" _
  return 0
}
# kv FILE KEY: KV_VALUE is KEY's value in FILE's KEY=VALUE lines (the emulators' status files);
# fails when FILE or KEY is not there.
kv() {
  local k v
  KV_VALUE=
  [ -r "$1" ] || return 1
  while IFS='=' read -r k v; do
    if [ "$k" = "$2" ]; then
      KV_VALUE=$v
      return 0
    fi
  done <"$1"
  return 1
}
# first_line FILE: FIRST_LINE is FILE's first line (sysfs attributes, pid files).
first_line() {
  FIRST_LINE=
  [ -r "$1" ] && IFS= read -r FIRST_LINE <"$1" 2>/dev/null
}
# has_line FILE PATTERN: FILE has a line matching the glob PATTERN (the whole line).
has_line() {
  local line
  [ -r "$1" ] || return 1
  while IFS= read -r line; do
    # shellcheck disable=SC2053 # a glob on purpose
    [[ $line == $2 ]] && return 0
  done <"$1"
  return 1
}
# last_line_with FILE TEXT: LAST_LINE is the last line of FILE containing TEXT.
last_line_with() {
  local line
  LAST_LINE=
  [ -r "$1" ] || return 1
  while IFS= read -r line; do
    [[ $line == *"$2"* ]] && LAST_LINE=$line
  done <"$1"
  [ -n "$LAST_LINE" ]
}

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
log() {
  local up
  read -r up _ </proc/uptime
  echo "[$up] $*"
}
[ -n "${VM_TEST:-}" ] && log "---- $VM_TEST"

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
  # CI builds the products before the VM stage: a product check that cannot run is a failure.
  [ "${VM_CI:-false}" = true ] && fail "CI=true and this test would be skipped: $*"
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
    nap
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
  first_line "$PIDS/$name.pid"
  pid=$FIRST_LINE
  rm -f "$PIDS/$name.pid"
  kill -"$sig" "$pid" 2>/dev/null || return 0
  if ! wait_for 5 "$name (pid $pid) to exit" not_running "$pid"; then
    kill -KILL "$pid" 2>/dev/null
  fi
  wait "$pid" 2>/dev/null
  return 0
}
not_running() { ! kill -0 "$1" 2>/dev/null; }
running() { first_line "$PIDS/$1.pid" && kill -0 "$FIRST_LINE" 2>/dev/null; }
# pid_of NAME: the pid of a spawned process, in PID.
pid_of() {
  first_line "$PIDS/$1.pid"
  PID=$FIRST_LINE
}
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

# ---- JSON -----------------------------------------------------------------------------------------
# json_fields FILE [--match KEY=VALUE] PATH...: read members of the JSON in FILE (one Python
# start, tools/json_fields.py); field_is PATH VALUE then checks one, FIELD holds the last looked up.
json_fields() { "${PY[@]}" "$GUEST/tools/json_fields.py" "$@" >"$RUNDIR/fields"; }
field_is() {
  kv "$RUNDIR/fields" "$1"
  FIELD=$KV_VALUE
  [ "$FIELD" = "$2" ]
}
field() {
  kv "$RUNDIR/fields" "$1"
  FIELD=$KV_VALUE
}

# ---- kernel modules -----------------------------------------------------------------------------
# The host has no /lib/modules: load from the extracted package with modprobe -d.
# kmod MODULE [PARAM=VALUE...] or kmod -a MODULE...: modules already loaded are not asked for
# again (each modprobe reads its indexes over 9p, about a second under TCG).
# Modules Debian's kernel does not build (vm/kmods.table) are there only when the test's header
# asks for them ("# kmods: NAME..."): vm/run.sh then builds them into the kernel tree.
kmod() {
  local m wanted=()
  if [ "$1" = -a ]; then
    shift
    for m; do [ -d "/sys/module/${m//-/_}" ] || wanted+=("$m"); done
    [ ${#wanted[@]} -eq 0 ] || modprobe -d "$KROOT" -S "$KV" -a "${wanted[@]}" || kmod_hint "${wanted[@]}"
  else
    [ -d "/sys/module/${1//-/_}" ] || modprobe -d "$KROOT" -S "$KV" "$@" || kmod_hint "$1"
  fi
}
# kmod_hint MODULE...: after a failed modprobe, say which out-of-tree module was not built; fails.
kmod_hint() {
  local m name _
  for m; do
    [ -e "$KROOT/lib/modules/$KV/updates/orientd-vm/$m.ko" ] && continue
    while read -r name _; do
      [ "$name" = "$m" ] &&
        log "kmod: $m is built out of tree (vm/kmods.table) only for tests whose header has '# kmods: $m'"
    done <"$PROJECT/vm/kmods.table"
  done
  return 1
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
  # One help text per command for the whole run (a Swift debug binary takes 1-2 s to start
  # under TCG): kept on the guest's tmpfs.
  local cache="$VM/work/help-$name${sub[*]:+-${sub[*]// /-}}.txt"
  [ -s "$cache" ] || "$exe" "${sub[@]}" --help >"$cache" 2>&1
  IFS= read -r -d '' help <"$cache"
  for word in "${sub[@]}" "$@"; do
    [[ $help == *"$word"* ]] ||
      skip "product not built yet: '$name${sub[*]:+ ${sub[*]}} --help' does not mention $word"
  done
  log "product: $name${sub[*]:+ ${sub[*]}} has ${*:-what the test needs}"
}

# ---- udev ---------------------------------------------------------------------------------------
# The hwdb entry the tests give the emulated accelerometer (vm/guest/fixtures/61-orientd-vm.hwdb).
HWDB_MATRIX='0, 1, 0; -1, 0, 0; 0, 0, 1'
# udev_start: systemd-udevd for the whole guest, started once. /etc/udev is read-only (the host's
# root): a tmpfs copy of it, plus the project's udev/*.rules and hwdb.bin compiled from the host's
# hwdb sources and the test entry (vm/run.sh runs systemd-hwdb update on the host: several seconds
# faster than here; bound in from the data share rather than copied, 13 MB), is bound over it.
# /etc/udev/hwdb.bin takes precedence over the distribution's /lib/udev/hwdb.bin.
udev_start() {
  [ -e $VM/udevd.started ] && return 0
  local etc=$VM/etc-udev rules project_rules=()
  mkdir -p "$etc" /run/udev
  cp -a /etc/udev/. "$etc/" || return 1
  [ -d "$etc/rules.d" ] || mkdir "$etc/rules.d"
  for rules in "$PROJECT"/udev/*.rules; do
    [ -e "$rules" ] || continue
    log "udev: project rules ${rules#"$PROJECT"/}"
    project_rules+=("$rules")
  done
  [ ${#project_rules[@]} -eq 0 ] || cp "${project_rules[@]}" "$etc/rules.d/" || return 1
  : >"$etc/hwdb.bin"
  mount --bind $VM/data/hwdb.bin "$etc/hwdb.bin" || return 1
  mount --rbind "$etc" /etc/udev || return 1
  /lib/systemd/systemd-udevd --daemon || return 1
  wait_for 20 "udevd's control socket" test -S /run/udev/control || return 1
  touch $VM/udevd.started
}

# ---- the system bus -----------------------------------------------------------------------------
BUS_SOCKET=/run/dbus/system_bus_socket
# bus_start [POLICY_DIR...]: a system bus (the standard socket path, and DBUS_SYSTEM_BUS_ADDRESS
# for every client) with the system bus' default policy (deny owning names and method calls
# unless a policy file allows them; Tests/Fixtures/dbus/private-system-bus.conf.in, the tests'
# and scripts' too) plus the *.conf files of each POLICY_DIR.
bus_start() {
  local conf=$TOUT/system-bus.conf dir template includes=""
  mkdir -p /run/dbus
  rm -f "$BUS_SOCKET"
  template=$(<"$PROJECT/Tests/Fixtures/dbus/private-system-bus.conf.in") || return 1
  for dir in "$@"; do includes+="  <includedir>$dir</includedir>"$'\n'; done
  template=${template//@LISTEN@/"unix:path=$BUS_SOCKET"}
  printf '%s\n' "${template//@EXTRA@/"$includes"}" >"$conf"
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
  spawn accel "${PY[@]}" "$GUEST/emu/hid_accel.py" --control "$ACCEL_CTL" --status "$ACCEL_STATUS" \
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
accel_is() { kv "$ACCEL_STATUS" "$1" && [ "$KV_VALUE" = "$2" ]; }
accel_handled() { kv "$ACCEL_STATUS" commands && [ "$KV_VALUE" -ge "$1" ]; }
# accel_get KEY: print a value from the emulator's status file (counters, state).
accel_get() { kv "$ACCEL_STATUS" "$1" && echo "$KV_VALUE"; }
# accel_at_least KEY N: the emulator's counter KEY is N or more.
accel_at_least() { kv "$ACCEL_STATUS" "$1" && [ "$KV_VALUE" -ge "$2" ]; }
iio_find_accel() {
  local d
  for d in /sys/bus/iio/devices/iio:device*; do
    first_line "$d/name"
    if [ "$FIRST_LINE" = accel_3d ]; then
      IIO_DEV=$d
      IIO_NAME=${d##*/}
      return 0
    fi
  done
  return 1
}
iio_gone() { ! iio_find_accel; }
# accel_idle: the emulated sensor is not streaming (the driver powered it down or switched its
# reporting off). hid-sensor-trigger powers a sensor down through runtime PM 3 s after its last
# user (autosuspend); the attribute that sets that delay can be written once the driver has used
# autosuspend (after its first power-down request), so each poll tries to cut it to 100 ms: the
# tests then wait 0.1 s instead of 3 s for what a real device does, with the same outcome.
accel_idle() {
  echo 100 2>/dev/null >"$IIO_DEV/../power/autosuspend_delay_ms"
  accel_is streaming 0
}
# ---- the other emulated HID sensors (emu/hid_accel.py --kind) ------------------------------------
# Each kind is its own uhid device and emulator process; KIND's control FIFO and status file are
# $HID_DIR/KIND.control and KIND.status (HID_DIR: this test's RUNDIR unless a test shares its
# emulators with others), its event log $TOUT/KIND-events.log.
# The hinge's driver is built out of tree: a test using it has "# kmods: hid-sensor-custom-intel-hinge".
# The motion sensors (issue 26): hid-sensor-gyro-3d and hid-sensor-rotation.
HID_DIR=$RUNDIR
declare -A HID_DRIVER=([accel]=hid-sensor-accel-3d [als]=hid-sensor-als [prox]=hid-sensor-prox
  [magn]=hid-sensor-magn-3d [hinge]=hid-sensor-custom-intel-hinge [gyro]=hid-sensor-gyro-3d
  [rotation]=hid-sensor-rotation)
declare -A HID_IIO=([accel]=accel_3d [als]=als [prox]=prox [magn]=magn_3d [hinge]=hinge
  [gyro]=gyro_3d [rotation]=dev_rotation)
declare -A HID_SENT=()
# hid_custom_late: load hid-sensor-custom once a hub has made its custom collection's platform
# device, as udev does on a real system. hid-sensor-custom reads the collection's Manufacturer
# and LUID (GET_REPORT) in its probe; loaded before the hub appears, that probe runs inside
# hid-sensor-hub's, while the HID core still holds the device's driver_input_lock, so the reply
# is dropped (hid_input_report: -EBUSY), the LUID reads empty and no HID-SENSOR-INT-020b (no
# hinge) is made: the generic custom sensor instead (vm/guest/tests/14-hinge-driver.sh shows it).
# When the module is loaded already (an earlier hub), such a generic device is unbound and bound
# again: the probe then runs on its own and reads the LUID.
hid_custom_late() {
  local dev
  wait_for 20 "the custom sensor's platform device HID-SENSOR-2000e1" \
    compgen -G '/sys/bus/platform/devices/HID-SENSOR-2000e1.*' >/dev/null || return 1
  if [ ! -d /sys/module/hid_sensor_custom ]; then
    kmod hid-sensor-custom
    return
  fi
  for dev in /sys/bus/platform/devices/HID-SENSOR-2000e1.*; do
    dev=$(readlink -f "$dev")
    # Probed either way: the generic sensor's attributes, or the hinge's device beside it.
    wait_for 10 "${dev##*/}'s probe" \
      eval '[ -e "$dev/enable_sensor" ] || compgen -G "${dev%/*}/HID-SENSOR-INT-*" >/dev/null' ||
      return 1
    [ -e "$dev/enable_sensor" ] || continue # recognised: not the generic custom sensor
    log "hid-sensor-custom: rebinding ${dev##*/} (its LUID read raced the hub's probe)"
    echo "${dev##*/}" >/sys/bus/platform/drivers/hid_sensor_custom/unbind &&
      echo "${dev##*/}" >/sys/bus/platform/drivers/hid_sensor_custom/bind || return 1
  done
}
# hid_start KIND [emulator options]: load KIND's driver, start its emulator and wait for its IIO
# device; IIO_DEV and IIO_NAME are then that device's (as accel_start sets them).
hid_start() {
  local kind=$1
  shift
  kmod -a uhid hid-sensor-hub "${HID_DRIVER[$kind]}" || return 1
  rm -f "$HID_DIR/$kind.control" "$HID_DIR/$kind.status"
  mkfifo "$HID_DIR/$kind.control"
  spawn "hid-$kind" "${PY[@]}" "$GUEST/emu/hid_accel.py" --kind "$kind" \
    --control "$HID_DIR/$kind.control" --status "$HID_DIR/$kind.status" --log "$TOUT/$kind-events.log" "$@"
  HID_SENT[$kind]=0
  if [ "$kind" = hinge ]; then hid_custom_late || return 1; fi
  wait_for 30 "the ${HID_IIO[$kind]} IIO device" iio_find "${HID_IIO[$kind]}"
}
# hub_start NAME KIND... -- [emulator options]: an emulated hub under the name NAME (its control,
# status and log as hid_start's for a kind; drive it with "hid NAME ..."), after loading the
# drivers of the KINDs it holds; waits only for the emulator's status, not for IIO devices (e.g.
# hub_start convertible accel hinge -- --sensors lid=accel,base=accel,hinge=hinge).
hub_start() {
  local name=$1 modules=(uhid hid-sensor-hub) custom=false
  shift
  while [ $# -gt 0 ] && [ "$1" != -- ]; do
    modules+=("${HID_DRIVER[$1]}")
    [ "$1" = hinge ] && custom=true
    shift
  done
  [ "${1:-}" = -- ] && shift
  kmod -a "${modules[@]}" || return 1
  rm -f "$HID_DIR/$name.control" "$HID_DIR/$name.status"
  mkfifo "$HID_DIR/$name.control"
  spawn "hid-$name" "${PY[@]}" "$GUEST/emu/hid_accel.py" --control "$HID_DIR/$name.control" \
    --status "$HID_DIR/$name.status" --log "$TOUT/$name-events.log" "$@"
  HID_SENT[$name]=0
  wait_for 20 "the $name emulator's status" test -s "$HID_DIR/$name.status" || return 1
  if $custom; then hid_custom_late; fi
}
# fold_hubs DEGREES NAME...: the same fold (emu/hid_accel.py's "fold") to each named emulator, for a
# convertible whose sensors sit on separate hubs.
fold_hubs() {
  local degrees=$1 name
  shift
  for name; do hid "$name" fold "$degrees" || return 1; done
}
# hid KIND COMMAND...: send one command to KIND's emulator and wait until it has handled it.
hid() {
  local kind=$1
  shift
  HID_SENT[$kind]=$((HID_SENT[$kind] + 1))
  echo "$*" >"$HID_DIR/$kind.control"
  wait_for 10 "the $kind emulator to handle '$*'" hid_at_least "$kind" commands "${HID_SENT[$kind]}"
}
# hid_get KIND KEY: print a value from KIND's status; hid_at_least KIND KEY N: it is N or more.
hid_get() { kv "$HID_DIR/$1.status" "$2" && echo "$KV_VALUE"; }
hid_at_least() { kv "$HID_DIR/$1.status" "$2" && [ "$KV_VALUE" -ge "$3" ]; }
# iio_find NAME: the IIO device whose name is NAME, in IIO_DEV (sysfs path) and IIO_NAME.
iio_find() {
  local d
  for d in /sys/bus/iio/devices/iio:device*; do
    first_line "$d/name"
    if [ "$FIRST_LINE" = "$1" ]; then
      IIO_DEV=$d
      IIO_NAME=${d##*/}
      return 0
    fi
  done
  return 1
}

# raw_orientation: RAW_ORIENTATION is what the emulator's current vector (the sensor's own frame,
# status key "vector") would mean with no mount matrix: the orientation a daemon that ignores the
# hwdb entry would report.
raw_orientation() {
  local x y
  kv "$ACCEL_STATUS" vector || return 1
  IFS=, read -r x y _ <<<"$KV_VALUE"
  x=${x%%.*} y=${y%%.*}
  if [ "$x" -ge 5 ]; then RAW_ORIENTATION=left-up
  elif [ "$x" -le -5 ]; then RAW_ORIENTATION=right-up
  elif [ "$y" -ge 5 ]; then RAW_ORIENTATION=bottom-up
  elif [ "$y" -le -5 ]; then RAW_ORIENTATION=normal
  else RAW_ORIENTATION=flat
  fi
}

# ---- the vivid camera ---------------------------------------------------------------------------
# vivid_start: one vivid instance with a single webcam-type capture input, /dev/video0 (the first
# video node in this guest), showing the 75% colour bars without on-screen text over the top 60%
# of the frame, one colour below (the part of the buffer vivid leaves unwritten): a picture that
# no turn or mirror maps onto itself, so tools/check_upright.py can tell which of the eight a
# photo is.
VIDEO=/dev/video0
vivid_start() {
  kmod vivid n_devs=1 node_types=0x1 num_inputs=1 input_types=0x0 || return 1
  wait_for 20 "$VIDEO" test -c "$VIDEO" || return 1
  v4l2-ctl -d "$VIDEO" -c test_pattern=0 -c osd_text_mode=2 -c fill_percentage_of_frame=60
}
# vivid_frame FORMAT FILE: one raw 640x480 frame (the second one streamed) in FORMAT through mmap
# streaming with v4l2-ctl, independently of orientcam.
vivid_frame() {
  local per_frame=$((640 * 480 * 2))
  [ "$1" = NV12 ] && per_frame=$((640 * 480 * 3 / 2))
  v4l2-ctl -d "$VIDEO" --set-fmt-video=width=640,height=480,pixelformat="$1" \
    --stream-mmap=3 --stream-count=2 --stream-to="$2.both" || return 1
  [ "$(stat -c %s "$2.both")" -eq $((2 * per_frame)) ] || return 1
  tail -c "$per_frame" "$2.both" >"$2" && rm -f "$2.both"
}
# upright_results FILE: the checks from a check_upright.py output, one per photo.
upright_results() {
  local verdict rest
  while read -r verdict rest; do
    if [ "$verdict" = ok ]; then
      log "ok: ${rest%%:*} is upright (${rest#*: })"
    else
      log "FAIL: ${rest%%:*}: ${rest#*: }"
      FAILURES=$((FAILURES + 1))
    fi
  done <"$1"
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
  spawn keyboard "${PY[@]}" "$GUEST/emu/uinput_keyboard.py" --control "$KEYS_CTL" --status "$KEYS_STATUS" "$@"
  KEYS_SENT=0
  wait_for 20 "the keyboard's event node" test -s "$KEYS_STATUS" || return 1
  kv "$KEYS_STATUS" node
  KEYS_NODE=$KV_VALUE
  test -c "$KEYS_NODE"
}
# keys COMMAND: e.g. "press volumeup"; waits until the emulator has sent it.
keys() {
  KEYS_SENT=$((KEYS_SENT + 1))
  echo "$*" >"$KEYS_CTL"
  wait_for 10 "the keyboard to handle '$*'" keys_handled "$KEYS_SENT"
}
keys_handled() { kv "$KEYS_STATUS" commands && [ "$KV_VALUE" -ge "$1" ]; }
# key_events FILE CODE N [exactly]: FILE (from evdev_probe.py watch) has at least (or exactly)
# N events for key CODE.
key_events() {
  local n=0 stamp node name code value
  if [ -r "$1" ]; then
    while read -r stamp node name code value; do
      [ "$code" = "$2" ] && n=$((n + 1))
    done <"$1"
  fi
  if [ "${4:-}" = exactly ]; then [ "$n" -eq "$3" ]; else [ "$n" -ge "$3" ]; fi
}

# ---- orientd ------------------------------------------------------------------------------------
ORIENTD_NAME=org.orientd.Orientation1
ORIENTD_PATH=/org/orientd/Orientation1
# orientd_stack [emulator options]: what the orientd checks share: udevd with the test hwdb, a
# system bus with the project's dbus/ policies, the emulated accelerometer held upright (normal)
# and mounted with the hwdb matrix, and the daemon itself, which owns its name at the end.
# ORIENTD_BUS_POLICIES: more policy folders for the bus (a stand-in service's).
orientd_stack() {
  need_product orientd -- --watch --json
  shopt -s nullglob
  local policies=("$PROJECT"/dbus/*.conf)
  shopt -u nullglob
  [ ${#policies[@]} -gt 0 ] || skip "product not built yet: no dbus/*.conf policy in the project"
  require "systemd-udevd runs with the test hwdb" udev_start
  # shellcheck disable=SC2086 # folders without spaces, none when unset
  require "a system bus with the project's policies" bus_start "$PROJECT/dbus" ${ORIENTD_BUS_POLICIES:-}
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
# orientd_sensor: orientd's Sensor property (a{sv}) in busctl's form, in SENSOR.
orientd_sensor() {
  SENSOR=$(busctl --system get-property "$ORIENTD_NAME" "$ORIENTD_PATH" "$ORIENTD_NAME" Sensor 2>&1)
}
# sensor_has KEY VALUE: the last orientd_sensor has the string KEY = VALUE.
sensor_has() { [[ $SENSOR == *"\"$1\" s \"$2\""* ]]; }
# orientd_open_files: what the daemon holds open, in OPEN_FILES ("ls -l /proc/PID/fd").
orientd_open_files() {
  pid_of orientd
  OPEN_FILES=$(ls -l "/proc/$PID/fd" 2>&1)
}
# orientd_holds FILE: the daemon has FILE open.
orientd_holds() {
  orientd_open_files
  [[ $OPEN_FILES == *" -> $1"$'\n'* || $OPEN_FILES == *" -> $1" ]]
}
# orientd_holds_iio: the daemon has an IIO device node or an IIO device's attribute open.
orientd_holds_iio() {
  orientd_open_files
  [[ $OPEN_FILES == *" -> /dev/iio:"* || $OPEN_FILES =~ " -> /sys/"[^$'\n']*"/iio:device" ]]
}
orientd_no_accel() { orientd_prop HasAccelerometer | grep -q 'boolean false'; }
# watch_start: orientd --watch --json, each line stamped on arrival, in $RUNDIR/watch.lines.
WATCH_LINES=$RUNDIR/watch.lines
watch_start() {
  spawn watch "${PY[@]}" "$GUEST/tools/stamp_lines.py" "$WATCH_LINES" -- "$BIN/orientd" --watch --json
}
# watch_reports ORIENTATION: the latest line from --watch names ORIENTATION.
watch_reports() {
  last_line_with "$WATCH_LINES" '"orientation"' &&
    [[ $LAST_LINE =~ \"orientation\"[[:space:]]*:[[:space:]]*\"$1\" ]]
}
# watch_rotation DEGREES: the latest line has "rotation": DEGREES.
watch_rotation() {
  last_line_with "$WATCH_LINES" '"orientation"' &&
    [[ $LAST_LINE =~ \"rotation\"[[:space:]]*:[[:space:]]*$1([^0-9]|$) ]]
}
buffer_on() { first_line "$IIO_DEV/buffer/enable" && [ "$FIRST_LINE" = 1 ]; }
buffer_off() { first_line "$IIO_DEV/buffer/enable" && [ "$FIRST_LINE" = 0 ]; }

# ---- system suspend ------------------------------------------------------------------------------
# A real suspend to idle (s2idle) of the guest, woken by the CMOS RTC's alarm. It needs the test
# harness's module orientd-vm-sleep (the test's header: "# kmods: orientd-vm-sleep"; source in
# vm/kmod/orientd-vm-sleep): QEMU's PC machine cannot otherwise come back (its RTC alarm raises no
# wake event in s2idle, and virtio-9p, the guest's root, does not survive device suspend).
# Everything a sensor goes through is the kernel's own: the freezer stops every process (the
# emulators too: the drivers' suspend-time requests to a uhid hub each wait uhid's 5 s for an
# answer), the drivers' suspend and resume callbacks run, the RTC alarm ends the s2idle.
SUSPENDS=/sys/power/suspend_stats/success
SUSPEND_N=0
# suspend_ready: the module is loaded and the kernel offers s2idle.
suspend_ready() {
  kmod orientd-vm-sleep || return 1
  # The PM core's debug lines (suspend-to-idle, which interrupt woke it, each phase's time).
  echo 1 >/sys/power/pm_debug_messages
  has_line /sys/power/state '*freeze*'
}
# suspend_count: SUSPEND_COUNT is how many suspends the kernel has completed.
suspend_count() {
  first_line $SUSPENDS
  SUSPEND_COUNT=$FIRST_LINE
}
# suspend_and_wake SECONDS: suspend to idle now (rtcwake -m freeze), the RTC alarm set SECONDS
# ahead; returns when the guest is back, and fails unless the kernel counted one more successful
# suspend. The alarm must come after the devices have suspended (else rtc-cmos handles it as an
# ordinary interrupt before s2idle starts and the kernel aborts the suspend: "wakeup pending"):
# allow 15 s for each HID sensor streaming through a uhid emulator. Sets SUSPEND_SECONDS (how
# long it took), and leaves the kernel's PM lines in $TOUT/suspend-N.log (SUSPEND_LOG).
suspend_and_wake() {
  local before t0
  SUSPEND_N=$((SUSPEND_N + 1))
  SUSPEND_LOG=$TOUT/suspend-$SUSPEND_N.log
  suspend_count
  before=$SUSPEND_COUNT
  echo "orientd-vm: suspend $SUSPEND_N (${VM_TEST:-}) for ${1}s" >/dev/kmsg
  now_cs
  t0=$NOW_CS
  rtcwake -m freeze -s "$1" >"$TOUT/rtcwake-$SUSPEND_N.log" 2>&1
  local rc=$?
  now_cs
  SUSPEND_SECONDS=$(((NOW_CS - t0) / 100)).$(((NOW_CS - t0) % 100 / 10))
  dmesg | sed -n "/orientd-vm: suspend $SUSPEND_N (/,\$p" >"$SUSPEND_LOG"
  suspend_count
  log "suspend $SUSPEND_N: rtcwake exit $rc after ${SUSPEND_SECONDS}s; suspends $before -> $SUSPEND_COUNT"
  [ "$rc" -eq 0 ] && [ "$SUSPEND_COUNT" -gt "$before" ]
}
# suspend_log_has PATTERN: the last suspend's kernel log has a line matching the glob PATTERN.
suspend_log_has() { has_line "$SUSPEND_LOG" "$1"; }
