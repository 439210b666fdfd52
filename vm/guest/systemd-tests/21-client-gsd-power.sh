#!/bin/bash
# client-gsd-power: gnome-settings-daemon 43's power plugin (/usr/libexec/gsd-power) in the test
# user's active session, with what it needs to run: gnome-session 43 (builtin session
# management, a session with one dummy component; its SessionIsActive follows logind), mutter
# --x11 on an Xvfb display (GnomeRRScreen, the idle monitor), upower and logind on the system bus,
# and a panel backlight: a USB PicoLCD made by emu/usb_picolcd.py (dummy_hcd + configfs f_hid),
# for which the kernel's hid-picolcd registers a real backlight class device; gsd-power writes it
# through logind's SetBrightness, and every value reaches the emulated device as a HID report.
#   - the session active: gsd-power claims the light sensor (ClaimLight, polkit allow_active) and
#     orientd polls the emulated HID light sensor;
#   - the lamp off (the light sensor's lux falls to a tenth): the brightness goes down;
#     the lamp on again: it goes back up (sysfs and the device's own reports agree);
#   - chvt 2: the session is inactive, gnome-session says SessionIsActive false, gsd-power
#     releases the light sensor (orientd lets any client release: iio-sensor-proxy 3.9 puts
#     Release* behind polkit too and so refuses it here) and orientd stops reading it;
#   - chvt 1: active again, gsd-power claims it again (polkit allow_active), orientd reads it.
# timeout: 900
# shellcheck source=vm/guest/lib.sh
. /run/vm/project/vm/guest/lib.sh
# shellcheck source=vm/guest/systemd/session.sh
. "$GUEST/systemd/session.sh"

USER_BUS=unix:path=/run/user/$SESSION_UID/bus
as_session_user() {
  as_user_outside env XDG_RUNTIME_DIR="/run/user/$SESSION_UID" DBUS_SESSION_BUS_ADDRESS="$USER_BUS" "$@"
}
# What gnome-session, mutter and gsd-power say on the session bus, from one watcher
# (session_watch: tools/session_watch.py): their names, gnome-session's SessionIsActive.
session_bus_has() { watch_says "owner $1 yes"; }
session_manager_says() { watch_says "prop SessionIsActive $1"; }
PICO_STATUS=$RUNDIR/picolcd.status
backlight_find() {
  local d
  for d in /sys/class/backlight/*; do
    [ -e "$d/device/driver" ] || continue
    [[ $(readlink "$d/device/driver") == *hid-picolcd ]] || continue
    BACKLIGHT=$d
    return 0
  done
  return 1
}
# brightness: BRIGHTNESS is the backlight's sysfs brightness, DEVICE_BRIGHTNESS the last value
# the emulated PicoLCD received.
brightness() {
  first_line "$BACKLIGHT/brightness" && BRIGHTNESS=$FIRST_LINE &&
    kv "$PICO_STATUS" brightness && DEVICE_BRIGHTNESS=$KV_VALUE
}
brightness_below() { brightness && [ "$BRIGHTNESS" -lt "$1" ] && [ "$DEVICE_BRIGHTNESS" = "$BRIGHTNESS" ]; }
brightness_above() { brightness && [ "$BRIGHTNESS" -gt "$1" ] && [ "$DEVICE_BRIGHTNESS" = "$BRIGHTNESS" ]; }
# light_reads: READS is the emulated light sensor's count of polled reads (orientd polls it only
# while a client holds the light claim).
light_reads() { kv "$SENSORS_DIR/als.status" polled_reads && READS=$KV_VALUE; }
light_read_since() { light_reads && [ "$READS" -gt "$1" ]; }
# light_quiet SECONDS: no polled read of the light sensor for SECONDS.
light_quiet() {
  local before
  light_reads && before=$READS
  nap "$1"
  light_reads && [ "$READS" = "$before" ]
}
GSD_LOG=$SESSION_DIR/gsd-power.out

require "systemd is PID 1" test "$(</proc/1/comm)" = systemd
require "orientd's packages are installed" packages_ready
for exe in /usr/libexec/gsd-power /usr/libexec/gnome-session-binary /usr/bin/mutter /usr/bin/Xvfb /usr/libexec/upowerd; do
  [ -x "$exe" ] || fail "$exe is missing (vm/run.sh's package list)"
done
require "the emulated sensors (the light sensor at 123.4 lux); orientd reports them" sensors_start
require "the test user's session on tty1 is active" session_start

# ---- the backlight ------------------------------------------------------------------------------
require "the USB gadget stack loads (dummy_hcd, libcomposite, usb_f_hid)" \
  kmod -a dummy_hcd libcomposite usb_f_hid
spawn picolcd /usr/bin/python3 -S "$GUEST/emu/usb_picolcd.py" --status "$PICO_STATUS" \
  --log "$TOUT/picolcd-events.log"
require "the emulated PicoLCD is attached" wait_for 60 "its /dev/hidgN" kv "$PICO_STATUS" hidg
# The host side's drivers: udev in this guest does not load usbhid for the new interface by its
# modalias (seen: the interface stays without a driver), so they are loaded here; hid-picolcd
# then binds by its id table (04d8:c002), as on a machine with the real display.
require "usbhid and hid-picolcd load" kmod -a usbhid hid-picolcd
require "hid-picolcd registers its backlight" wait_for 60 "a picolcd backlight" backlight_find
udevadm settle --timeout=30
log "backlight: $BACKLIGHT (type $(<"$BACKLIGHT/type"), max $(<"$BACKLIGHT/max_brightness"), brightness $(<"$BACKLIGHT/brightness"))"
check "the device got hid-picolcd's first brightness report (255)" \
  wait_for 20 "brightness 255" eval 'kv "$PICO_STATUS" brightness && [ "$KV_VALUE" = 255 ]'

# ---- the desktop around gsd-power -----------------------------------------------------------------
systemctl start upower.service
spawn xvfb /usr/bin/Xvfb :1 -screen 0 1024x768x24 -nolisten tcp -ac
require "Xvfb :1" wait_for 60 "the X socket" test -S /tmp/.X11-unix/X1
mkdir -p "$SESSION_HOME/.config/gnome-session/sessions" "$SESSION_HOME/.local/share/applications" \
  "$SESSION_HOME/.config/orientd-vm-autostart"
cat >"$SESSION_HOME/.config/gnome-session/sessions/orientd-vm.session" <<'EOF'
[GNOME Session]
Name=orientd-vm
RequiredComponents=orientd-vm-app
DesktopName=orientd-vm
EOF
cat >"$SESSION_HOME/.local/share/applications/orientd-vm-app.desktop" <<'EOF'
[Desktop Entry]
Name=orientd-vm-app
Type=Application
Exec=sleep 3600
EOF
chown -R "$SESSION_USER:" "$SESSION_HOME/.config" "$SESSION_HOME/.local"
DESKTOP_ENV=(env DISPLAY=:1 XDG_SESSION_TYPE=x11 XDG_CURRENT_DESKTOP=orientd-vm)
session_watch desktop --name org.gnome.SessionManager --name org.gnome.Mutter.IdleMonitor \
  --name org.gnome.Mutter.DisplayConfig --name org.gnome.SettingsDaemon.Power \
  --prop org.gnome.SessionManager /org/gnome/SessionManager org.gnome.SessionManager SessionIsActive
session_job gnome-session "${DESKTOP_ENV[@]}" /usr/libexec/gnome-session-binary --builtin \
  --session=orientd-vm --autostart="$SESSION_HOME/.config/orientd-vm-autostart" \
  --disable-acceleration-check --debug
require "gnome-session owns org.gnome.SessionManager" wait_for 120 "gnome-session" \
  session_bus_has org.gnome.SessionManager
check "gnome-session: SessionIsActive true (logind)" wait_for 30 "SessionIsActive" session_manager_says true
session_job mutter "${DESKTOP_ENV[@]}" LIBGL_ALWAYS_SOFTWARE=1 mutter --x11 --replace --sm-disable
require "mutter (X11) serves its idle monitor and display configuration" wait_for 180 "mutter" \
  eval 'session_bus_has org.gnome.Mutter.IdleMonitor && session_bus_has org.gnome.Mutter.DisplayConfig'

# ---- gsd-power ----------------------------------------------------------------------------------
light_reads
reads_before=$READS
check "before gsd-power, no one reads the light sensor" light_quiet 2
# Nobody touches Xvfb's input: gsd-power would take the session for idle and dim the panel to
# 30% (seen: 255 -> 78 at its start); the lamp, not idleness, is what this test is about.
as_session_user gsettings set org.gnome.settings-daemon.plugins.power idle-dim false
session_job gsd-power "${DESKTOP_ENV[@]}" G_MESSAGES_DEBUG=all /usr/libexec/gsd-power --verbose
require "gsd-power on the session bus (org.gnome.SettingsDaemon.Power)" wait_for 120 "gsd-power" \
  session_bus_has org.gnome.SettingsDaemon.Power
check "gsd-power uses the udev backlight (its log: up to 255)" wait_for 60 "the backlight in its log" \
  has_line "$GSD_LOG" "*Using udev device with brightness from * to 255.*"
light_reads
check "gsd-power claimed the light sensor: orientd reads it (polled reads $reads_before -> more)" \
  wait_for 60 "polled reads of the light sensor" light_read_since "$READS"
check "gsd-power read the light level (123.4)" wait_for 60 "the light level in its log" \
  has_line "$GSD_LOG" "*Read last absolute light level: 123.4*"
brightness
start=$BRIGHTNESS
log "brightness with the lamp on: $BRIGHTNESS (device: $DEVICE_BRIGHTNESS)"
nap 3
hid als lux 12.3
check "the lamp off (12.3 lux): the brightness goes down from $start" \
  wait_for 60 "brightness below $start" brightness_below "$start"
nap 5
brightness
low=$BRIGHTNESS
log "brightness with the lamp off: $BRIGHTNESS (device: $DEVICE_BRIGHTNESS)"
hid als lux 123.4
check "the lamp on again (123.4 lux): the brightness goes up from $low" \
  wait_for 60 "brightness above $low" brightness_above "$low"
nap 3
brightness
log "brightness with the lamp on again: $BRIGHTNESS (device: $DEVICE_BRIGHTNESS)"
kv "$PICO_STATUS" brightness_reports
log "the emulated PicoLCD received $KV_VALUE brightness reports"

# ---- the session goes inactive ------------------------------------------------------------------
require "chvt 2: the session is inactive" vt_switch 2
check "gnome-session: SessionIsActive false" wait_for 30 "SessionIsActive false" session_manager_says false
check "gsd-power heard it (its log)" wait_for 30 "the change in its log" \
  has_line "$GSD_LOG" "*Received session is active change: now inactive*"
# gsd-power calls ReleaseLight now (iio_proxy_claim_light (manager, FALSE) on the change). The
# session is inactive: polkit would refuse a claim (allow_active), but a release needs no
# authorization in orientd (iio-sensor-proxy 3.9 checks Release* too and refuses it here, so it
# keeps reading for a client that asked it to stop).
check "gsd-power releases the light sensor in the inactive session: orientd stops reading it" \
  wait_for 30 "no polled read for 3 s" light_quiet 3
check "  and gsd-power's release was not refused" \
  eval '! has_line "$GSD_LOG" "*Call to iio-proxy failed*"'
brightness
held=$BRIGHTNESS
hid als lux 12.3
nap 5
check "the lamp off while inactive: the brightness stays ($held)" eval 'brightness && [ "$BRIGHTNESS" = "$held" ]'
require "chvt 1: the session is active again" vt_switch 1
check "gnome-session: SessionIsActive true" wait_for 30 "SessionIsActive true" session_manager_says true
light_reads
check "active again: gsd-power claims the light sensor again, orientd reads it" \
  wait_for 60 "polled reads again" light_read_since "$READS"
session_stop gsd-power
session_stop mutter
session_stop gnome-session
cp "$WATCH_OUT" "$TOUT/desktop-bus.txt"
finish
