#!/bin/bash
# polkit-session: the installed packages' polkit action (net.hadess.SensorProxy.claim-sensor,
# allow_active yes, inactive and any no) and geoclue rule, decided by the real polkitd from a
# real logind session: the test user logged in on tty1 by getty's autologin (seat0, VT 1, local).
#   - in the active session, a client (tools/sensor_claims.py) claims the accelerometer, the
#     light sensor, the proximity sensor and the compass, and reads their values;
#   - chvt 2: logind marks the session inactive; the same claims are refused (AccessDenied);
#   - the same user in no session (setpriv from the test runner) is refused;
#   - the user geoclue, a system service in no session, is allowed by
#     /usr/share/polkit-1/rules.d/50-orientd-geoclue.rules.
# timeout: 900
# shellcheck source=vm/guest/lib.sh
. /run/vm/project/vm/guest/lib.sh
# shellcheck source=vm/guest/systemd/session.sh
. "$GUEST/systemd/session.sh"

CLAIMS=(/usr/bin/python3 "$GUEST/tools/sensor_claims.py")
ALL=(accel light proximity compass)
# claims_are FILE WANT KIND...: each KIND's claim in FILE was WANT (the tool's lines have sorted
# keys: {"claim": ..., "error": ..., "kind": ...}; bash globs, no process per check).
claims_are() {
  local file=$1 want=$2 kind got
  shift 2
  for kind; do
    got=nothing
    last_line_with "$file" "\"kind\": \"$kind\"" && [[ $LAST_LINE =~ \"claim\":\ \"([a-z]+)\" ]] &&
      got=${BASH_REMATCH[1]}
    [[ $LAST_LINE =~ \"error\":\ \"([^\"]+)\" ]] && got+=", ${BASH_REMATCH[1]}"
    check "  $kind: $want (got $got)" eval '[[ $got == "$want"* ]]'
  done
}

require "systemd is PID 1" test "$(</proc/1/comm)" = systemd
require "orientd's packages are installed" packages_ready
# Debian 12's iio-sensor-proxy (in the guest's image) leaves a geoclue-only compass policy in /etc
# that outlives its masking: purged, as a user replacing it does (docs/clients.md).
require "iio-sensor-proxy purged (its /etc compass policy with it)" sensor_proxy_purged
check "polkit knows the action net.hadess.SensorProxy.claim-sensor (the package's policy)" \
  eval 'pkaction --action-id net.hadess.SensorProxy.claim-sensor --verbose >"$TOUT/pkaction.txt" 2>&1'
check "  with iio-sensor-proxy's defaults: active yes, inactive no, any no" \
  eval 'grep -q "implicit active: *yes" "$TOUT/pkaction.txt" && grep -q "implicit inactive: *no" "$TOUT/pkaction.txt" && grep -q "implicit any: *no" "$TOUT/pkaction.txt"'
require "the emulated accelerometer, light sensor, proximity sensor and compass; orientd reports them" \
  sensors_start
require "getty logs $SESSION_USER in on tty1 (autologin) and its session runs our agent" session_start
loginctl show-session "$SESSION_ID" >"$TOUT/session.txt" 2>&1
log "session $SESSION_ID: $(grep -E '^(Seat|TTY|VTNr|Active|Remote|Type|Class|State)=' "$TOUT/session.txt" | tr '\n' ' ')"
check "the session is on seat0, VT 1, local, a user's x11-type session (as a display manager's)" \
  eval 'grep -qx Seat=seat0 "$TOUT/session.txt" && grep -qx VTNr=1 "$TOUT/session.txt" && grep -qx Remote=no "$TOUT/session.txt" && grep -qx Class=user "$TOUT/session.txt" && grep -qx Type=x11 "$TOUT/session.txt"'
check "and active (logind)" session_is 1

# pkcheck about itself ($$ of the exec'ed shell), from inside the session.
PKCHECK=(bash -c 'exec pkcheck --action-id net.hadess.SensorProxy.claim-sensor --process $$')
session_run pkcheck-active 60 "${PKCHECK[@]}"
check "pkcheck in the session: authorized (exit ${SESSION_RC:-?})" test "${SESSION_RC:-1}" = 0

session_run claims-active 90 "${CLAIMS[@]}" "${ALL[@]}"
session_out claims-active
cp "$SESSION_OUT" "$TOUT/claims-active.jsonl"
log "claims in the active session: $(tr '\n' ' ' <"$TOUT/claims-active.jsonl")"
check "in the active session every claim succeeds:" true
claims_are "$TOUT/claims-active.jsonl" ok "${ALL[@]}"
check "  and the claimed light sensor reads 123.4 lux" \
  has_line "$TOUT/claims-active.jsonl" '*"kind": "light"*"LightLevel": 123.4*"LightLevelUnit": "lux"*'
check "  and the claimed compass reads heading 90" \
  has_line "$TOUT/claims-active.jsonl" '*"kind": "compass"*"CompassHeading": 90.0*'

require "chvt 2: logind marks the session inactive" vt_switch 2
session_run pkcheck-inactive 60 "${PKCHECK[@]}"
check "pkcheck in the inactive session: not authorized (exit ${SESSION_RC:-?})" \
  test "${SESSION_RC:-0}" != 0
session_run claims-inactive 90 "${CLAIMS[@]}" "${ALL[@]}"
session_out claims-inactive
cp "$SESSION_OUT" "$TOUT/claims-inactive.jsonl"
log "claims in the inactive session: $(tr '\n' ' ' <"$TOUT/claims-inactive.jsonl")"
check "in the inactive session every new claim is refused:" true
claims_are "$TOUT/claims-inactive.jsonl" refused "${ALL[@]}"
check "  with AccessDenied" eval '[ "$(grep -c "org.freedesktop.DBus.Error.AccessDenied" "$TOUT/claims-inactive.jsonl")" = ${#ALL[@]} ]'
require "chvt 1: the session is active again" vt_switch 1

as_user_outside "${CLAIMS[@]}" "${ALL[@]}" >"$TOUT/claims-no-session.jsonl" 2>"$TOUT/claims-no-session.err"
log "claims by $SESSION_USER in no session: $(tr '\n' ' ' <"$TOUT/claims-no-session.jsonl")"
check "$SESSION_USER in no session (setpriv from the runner) is refused:" true
claims_are "$TOUT/claims-no-session.jsonl" refused "${ALL[@]}"

as_geoclue "${CLAIMS[@]}" compass accel >"$TOUT/claims-geoclue.jsonl" 2>"$TOUT/claims-geoclue.err"
log "claims by $GEOCLUE_USER: $(tr '\n' ' ' <"$TOUT/claims-geoclue.jsonl")"
check "$GEOCLUE_USER (a system service, no session) is allowed by 50-orientd-geoclue.rules:" true
claims_are "$TOUT/claims-geoclue.jsonl" ok compass accel
journalctl -b --no-pager -o cat -u orientd.service >"$TOUT/orientd-journal.txt" 2>&1
journalctl -b --no-pager -o short-monotonic _COMM=polkitd >"$TOUT/polkitd-journal.txt" 2>&1
finish
