# A real login session for the systemd guest's client tests (vm/guest/systemd-tests/2x-*, 3x-*),
# sourced after vm/guest/lib.sh. The tests run as root in orientd-vm-tests.service, in no
# session; the programs under test must run in a local, active logind session on seat0, as a
# desktop's do, for polkit's allow_active branch (and gnome-session's SessionIsActive) to mean
# anything. So:
#   packages_ready   the freshly built .debs installed (a test run on its own; after
#                    10-packages they already are), iio-sensor-proxy masked
#   sensor_proxy_purged  iio-sensor-proxy purged (and with it its geoclue-only compass policy)
#   session_start    the user orientd-user (uid 4200) logged in on tty1 by getty's autologin
#                    (getty@tty1.service.d/autologin.conf); its login shell execs
#                    session-agent.sh, which runs the tests' jobs inside the session
#   session_job NAME CMD...        CMD in the session, in the background (its output in
#                                  $TOUT/session-NAME.log at the end)
#   session_run NAME SECONDS CMD   the same, waited for; its exit status
#   session_stop NAME              SIGTERM to its process group, then KILL
#   vt_switch N                    chvt N (the session on tty1 is active only while VT 1 is)
#   sensors_start                  the emulated accelerometer, light sensor, proximity sensor
#                                  and compass (HID sensor hub drivers), shared by the tests,
#                                  orientd on the bus
#   session_watch NAME ARGS...     tools/session_watch.py in the session: names, properties and
#                                  mutter's display state on the session bus, one line each
#                                  change, read with watch_says
# shellcheck shell=bash

SESSION_USER=orientd-user
SESSION_UID=4200
SESSION_HOME=/home/$SESSION_USER
SESSION_DIR=/run/orientd-vm-session
SESSION_JOBS=()
PROXY=net.hadess.SensorProxy
GEOCLUE_USER=geoclue

# packages_ready: orientd's packages installed from the fresh .debs (as deb-install does) unless
# they already are, and iio-sensor-proxy masked so that orientd alone answers its name.
packages_ready() {
  if [ "$(dpkg-query -W -f='${Status}' orientd 2>/dev/null)" != "install ok installed" ]; then
    log "installing the packages (this test runs without 10-packages before it)"
    (cd "$VM_DEBS" && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      ./orientd_*.deb ./orientd-rotate_*.deb ./orientcam_*.deb) >"$TOUT/apt-install.log" 2>&1 ||
      return 1
  fi
  # (Masking reloads systemd: a minute under TCG on a busy host. Not when it is masked already,
  # or purged: sensor-proxy-purge.)
  if [ -e /lib/systemd/system/iio-sensor-proxy.service ] &&
    [ "$(systemctl is-enabled iio-sensor-proxy.service 2>&1)" != masked ]; then
    systemctl mask iio-sensor-proxy.service >/dev/null 2>&1
  fi
  [ "$(dpkg-query -W -f='${Status}' orientd 2>/dev/null)" = "install ok installed" ]
}

# Debian 12's iio-sensor-proxy 3.0 (installed on the host's root the guest runs on) ships
# /etc/dbus-1/system.d/net.hadess.SensorProxy.conf, a conffile whose compass policy is its
# 3.0 one, geoclue's only: its denies are read after orientd's allows
# (/usr/share/dbus-1/system.d/orientd.conf) and win. A removed package keeps its conffiles; a
# purged one does not (docs/packaging.md, "Together with iio-sensor-proxy").
SENSOR_PROXY_POLICY=/etc/dbus-1/system.d/net.hadess.SensorProxy.conf
# sensor_proxy_gone: dpkg knows nothing of iio-sensor-proxy (not even its conffiles) and its
# policy file is gone.
sensor_proxy_gone() {
  local status
  status=$(dpkg-query -W -f='${Status}' iio-sensor-proxy 2>/dev/null)
  [ ! -e "$SENSOR_PROXY_POLICY" ] && { [ -z "$status" ] || [[ $status == *" not-installed" ]]; }
}
# sensor_proxy_purged: apt-get purge iio-sensor-proxy, as a user replacing it with orientd does,
# unless it is gone already (sensor-proxy-purge did it earlier in the stage). Its output in
# $TOUT/apt-purge-iio-sensor-proxy.log.
sensor_proxy_purged() {
  sensor_proxy_gone && return 0
  log "apt-get purge iio-sensor-proxy"
  DEBIAN_FRONTEND=noninteractive apt-get purge -y iio-sensor-proxy \
    >"$TOUT/apt-purge-iio-sensor-proxy.log" 2>&1 || return 1
  sensor_proxy_gone
}

# session_file: SESSION_FILE is logind's state file of the session (ACTIVE=, SEAT=, TTY=...).
session_state() {
  kv "$SESSION_DIR/env" XDG_SESSION_ID || return 1
  SESSION_ID=$KV_VALUE
  SESSION_FILE=/run/systemd/sessions/$SESSION_ID
}
# session_is VALUE: logind's ACTIVE= for the session is VALUE (1 or 0); bash builtins only.
session_is() {
  session_state && kv "$SESSION_FILE" ACTIVE && [ "$KV_VALUE" = "$1" ]
}
agent_alive() {
  first_line "$SESSION_DIR/agent-pid" && kill -0 "$FIRST_LINE" 2>/dev/null && [ -s "$SESSION_DIR/env" ]
}

# session_start: the user, logged in on tty1 by getty, its agent ready. Idempotent: a session
# an earlier test started is reused (and made active again).
session_start() {
  if agent_alive; then
    session_state
    vt_switch 1
    return 0
  fi
  if ! getent passwd "$SESSION_USER" >/dev/null; then
    useradd --create-home --uid "$SESSION_UID" --user-group --shell /bin/bash \
      --comment "orientd VM session user" "$SESSION_USER" || return 1
  fi
  # The login shell hands the session to the agent.
  echo "exec /bin/bash $GUEST/systemd/session-agent.sh" >"$SESSION_HOME/.bash_profile"
  chown "$SESSION_USER:" "$SESSION_HOME/.bash_profile"
  # The session's type: pam_systemd registers it from XDG_SESSION_TYPE in the PAM environment,
  # which login's pam_env fills from /etc/environment (the guest's throw-away copy; no other
  # login happens in it). A display manager registers its sessions as x11 or wayland, and
  # gnome-session 43 follows only such a graphical session of its user (gsm-systemd.c,
  # gsm_systemd_find_session): in a tty session its SessionIsActive never changes (seen: still
  # true after chvt 2), and gsd-power would never see the session go inactive. (Environment= on
  # getty@tty1 does not reach pam_systemd: seen, the session stayed Type=tty.)
  grep -qx 'XDG_SESSION_TYPE=x11' /etc/environment 2>/dev/null ||
    echo 'XDG_SESSION_TYPE=x11' >>/etc/environment
  rm -rf "$SESSION_DIR"
  mkdir -p "$SESSION_DIR"
  mkfifo "$SESSION_DIR/jobs"
  chown -R "$SESSION_USER:" "$SESSION_DIR"
  # Not started by orientd-vm.target: logind, the removal of /run/nologin (pam_nologin refuses
  # users until then), polkit.
  systemctl start systemd-logind.service systemd-user-sessions.service polkit.service || return 1
  systemctl start getty@tty1.service || return 1
  wait_for 120 "the autologin session's agent" agent_alive || return 1
  session_state
}

# session_job NAME CMD...: CMD in the session, in its own process group, in the background; the
# session's environment plus its bus (DBUS_SESSION_BUS_ADDRESS). SESSION_PID is its pid.
session_job() {
  local name=$1 script
  shift
  rm -f "$SESSION_DIR/$name".{pid,rc,out}
  script="echo \$\$ >$SESSION_DIR/$name.pid"$'\n'
  script+='export DBUS_SESSION_BUS_ADDRESS=unix:path=$XDG_RUNTIME_DIR/bus'$'\n'
  script+="cd \"\$HOME\"; $(printf '%q ' "$@")"$'\n'
  script+="echo \$? >$SESSION_DIR/$name.rc.partial && mv $SESSION_DIR/$name.rc.partial $SESSION_DIR/$name.rc"$'\n'
  printf '%s' "$script" >"$SESSION_DIR/$name.sh"
  echo "$name" >"$SESSION_DIR/jobs"
  SESSION_JOBS+=("$name")
  wait_for 30 "the session to start $name" test -s "$SESSION_DIR/$name.pid" || return 1
  first_line "$SESSION_DIR/$name.pid"
  SESSION_PID=$FIRST_LINE
}
# session_done NAME: the job has ended (its exit status in SESSION_RC).
session_done() {
  first_line "$SESSION_DIR/$1.rc" || return 1
  SESSION_RC=$FIRST_LINE
}
# session_run NAME SECONDS CMD...: a job waited for; returns its exit status (124 on time-out).
session_run() {
  local name=$1 limit=$2
  shift 2
  session_job "$name" "$@" || return 1
  if ! wait_for "$limit" "$name in the session" session_done "$name"; then
    session_stop "$name"
    return 124
  fi
  return "$SESSION_RC"
}
# session_out NAME: SESSION_OUT is the job's output file.
session_out() { SESSION_OUT=$SESSION_DIR/$1.out; }
# session_watch NAME ARGS...: tools/session_watch.py ARGS as the session job NAME (one Python
# start, where polling with gdbus would start setpriv, env and gdbus each time); WATCH_OUT is its
# output. watch_says LINE: its latest line starting with LINE's first two words is LINE
# ("owner org.gnome.SessionManager yes", "prop SessionIsActive false", "transform LVDS1 1").
session_watch() {
  local name=$1
  shift
  session_job "$name" /usr/bin/python3 "$GUEST/tools/session_watch.py" "$@" || return 1
  WATCH_OUT=$SESSION_DIR/$name.out
}
watch_says() {
  local words=($1)
  last_line_with "$WATCH_OUT" "${words[0]} ${words[1]} " && [ "$LAST_LINE" = "$1" ]
}
session_stop() {
  local pid
  first_line "$SESSION_DIR/$1.pid" || return 0
  pid=$FIRST_LINE
  session_done "$1" && return 0
  kill -TERM -- "-$pid" 2>/dev/null
  wait_for 10 "$1 (process group $pid) to end" not_running "$pid" || kill -KILL -- "-$pid" 2>/dev/null
  return 0
}
session_cleanup() {
  local name
  for name in "${SESSION_JOBS[@]}"; do
    session_stop "$name"
    cp "$SESSION_DIR/$name.out" "$TOUT/session-$name.log" 2>/dev/null
  done
  # The next test finds the session active, as a user at the desk would leave it.
  [ -n "${SESSION_ID:-}" ] && chvt 1 2>/dev/null
  return 0
}
trap 'part_abort $?; session_cleanup; stop_all; cp "$RUNDIR"/*.status "$TOUT/" 2>/dev/null' EXIT

# vt_switch N: the foreground VT is N (chvt), and logind has seen it: the tty1 session is active
# exactly when N is 1.
vt_switch() {
  chvt "$1" || return 1
  if [ "$1" = 1 ]; then
    wait_for 20 "the session to become active" session_is 1
  else
    wait_for 20 "the session to become inactive" session_is 0
  fi
}

# as_user_outside CMD...: CMD as the session's user, but from here: in no session at all.
as_user_outside() {
  setpriv --reuid="$SESSION_UID" --regid="$SESSION_UID" --init-groups \
    env HOME="$SESSION_HOME" "$@"
}
as_geoclue() {
  local uid gid
  uid=$(id -u "$GEOCLUE_USER") gid=$(id -g "$GEOCLUE_USER")
  setpriv --reuid="$uid" --regid="$gid" --init-groups "$@"
}

# proxy_prop NAME [PATH INTERFACE]: a net.hadess.SensorProxy property (busctl's form) in PROP.
proxy_prop() {
  PROP=$(busctl --system get-property "$PROXY" "${2:-/net/hadess/SensorProxy}" "${3:-$PROXY}" \
    "$1" 2>&1)
}
proxy_has() { proxy_prop "$@" && [ "$PROP" = "b true" ]; }
compass_present() {
  PROP=$(as_geoclue busctl --system get-property "$PROXY" /net/hadess/SensorProxy/Compass \
    "$PROXY.Compass" HasCompass 2>&1) && [ "$PROP" = "b true" ]
}

# ---- the emulated sensors, shared by the client tests ---------------------------------------------
# One accelerometer, light sensor, proximity sensor and compass (HID sensor hub drivers) for all
# the client tests: started by the first test that needs them, kept running for the next (each
# start is a uhid device, the drivers' probe, udev and orientd finding it: 10-70 s under TCG on a
# busy host). Their control FIFOs, status files and pid files are in SENSORS_DIR (tmpfs, outside
# every test's pid folder: main.sh and the tests' EXIT traps leave them running), their logs in
# $OUT/client-sensors.
SENSORS_DIR=$VM/work/client-sensors
SENSORS_OUT=$OUT/client-sensors
HID_DIR=$SENSORS_DIR
ACCEL_CTL=$SENSORS_DIR/accel.control
ACCEL_STATUS=$SENSORS_DIR/accel.status
# sensor_running NAME: the shared emulator NAME (accel, hid-als, hid-prox, hid-magn) is alive.
sensor_running() { first_line "$SENSORS_DIR/pids/$1.pid" && kill -0 "$FIRST_LINE" 2>/dev/null; }

# sensors_start: the four emulated sensors, udev's SYSTEMD_WANTS starting orientd, which reports
# each of them; each set to what every test starts from (upright, 123.4 lux, far, heading 90).
# ACCEL_DEV, ALS_DEV, PROX_DEV and MAGN_DEV are their IIO devices.
sensors_start() {
  local kind started=0
  mkdir -p "$SENSORS_DIR/pids" "$SENSORS_OUT"
  if sensor_running accel; then
    kv "$ACCEL_STATUS" commands && ACCEL_SENT=$KV_VALUE
  else
    PIDS=$SENSORS_DIR/pids TOUT=$SENSORS_OUT accel_start --mount-matrix "$HWDB_MATRIX" || return 1
    started=1
  fi
  iio_find_accel || return 1
  ACCEL_DEV=$IIO_DEV
  accel orient normal || return 1
  for kind in als prox magn; do
    if sensor_running "hid-$kind"; then
      kv "$SENSORS_DIR/$kind.status" commands && HID_SENT[$kind]=$KV_VALUE
    else
      PIDS=$SENSORS_DIR/pids TOUT=$SENSORS_OUT hid_start "$kind" || return 1
      started=1
    fi
    iio_find "${HID_IIO[$kind]}" || return 1
    case $kind in
      als)
        ALS_DEV=$IIO_DEV
        hid als lux 123.4 || return 1
        ;;
      prox)
        PROX_DEV=$IIO_DEV
        hid prox presence 0 || return 1
        ;;
      magn)
        MAGN_DEV=$IIO_DEV
        hid magn heading 90 || return 1
        ;;
    esac
  done
  IIO_DEV=$ACCEL_DEV
  if [ $started = 1 ]; then
    udevadm settle --timeout=30 || return 1
  fi
  wait_for 60 "orientd on the bus ($PROXY)" bus_has_owner "$PROXY" || return 1
  if [ $started = 1 ]; then
    wait_for 30 "HasAccelerometer" proxy_has HasAccelerometer || return 1
    wait_for 30 "HasAmbientLight" proxy_has HasAmbientLight || return 1
    wait_for 30 "HasProximity" proxy_has HasProximity || return 1
    # Asked as geoclue: Debian 12's iio-sensor-proxy policy, while installed, lets no one else
    # (root included) read the compass's properties.
    wait_for 30 "HasCompass" compass_present || return 1
  fi
}
