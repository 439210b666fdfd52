#!/bin/bash
# client-qt: Qt 5's QtSensors (libqt5sensors5's iio-sensor-proxy backends, through PyQt5:
# tools/qt_sensors.py) in the test user's active session, against the installed orientd: the
# plugin registers its backends because net.hadess.SensorProxy is on the bus when it loads, then
# QOrientationSensor follows the emulated accelerometer (TopUp, LeftUp, TopDown, RightUp, TopUp),
# QLightSensor the light sensor (123.4 then 56.7 lux) and QCompass the compass (90 then 271).
# The claims go through polkit's allow_active branch (the session is active, on seat0).
# timeout: 900
# shellcheck source=vm/guest/lib.sh
. /run/vm/project/vm/guest/lib.sh
# shellcheck source=vm/guest/systemd/session.sh
. "$GUEST/systemd/session.sh"

QT_LINES=$SESSION_DIR/qt.out
# qt_saw PATTERN: a line of the Qt client's output matches the glob PATTERN.
qt_saw() { has_line "$QT_LINES" "$1"; }
# qt_last SENSOR PATTERN: the latest reading line of SENSOR matches PATTERN.
qt_last() { last_line_with "$QT_LINES" "\"sensor\": \"$1\"" && [[ $LAST_LINE == $2 ]]; }

require "systemd is PID 1" test "$(</proc/1/comm)" = systemd
require "orientd's packages are installed" packages_ready
require "iio-sensor-proxy purged (its /etc compass policy with it: docs/clients.md)" sensor_proxy_purged
[ -e /usr/lib/x86_64-linux-gnu/qt5/plugins/sensors/libqtsensors_iio-sensor-proxy.so ] ||
  fail "libqt5sensors5's iio-sensor-proxy plugin is missing (python3-pyqt5.qtsensors, vm/run.sh)"
require "the emulated sensors; orientd reports them" sensors_start
require "the test user's session on tty1 is active" session_start
check "  (logind: active)" session_is 1

session_job qt /usr/bin/python3 "$GUEST/tools/qt_sensors.py" 150
require "QtSensors registered its iio-sensor-proxy backends" wait_for 60 "the backends line" \
  qt_saw '*"backends"*iio-sensor-proxy.orientationsensor*'
log "Qt: $(head -1 "$QT_LINES")"
check "  the light sensor's and the compass's too" \
  eval 'qt_saw "*iio-sensor-proxy.lightsensor*" && qt_saw "*iio-sensor-proxy.compass*"'
for sensor in orientation light compass; do
  check "QtSensors: the $sensor sensor started" wait_for 60 "$sensor started" \
    qt_saw "*\"sensor\": \"$sensor\", \"started\": true*"
done
check "QOrientationSensor: TopUp (normal)" wait_for 30 "TopUp" qt_last orientation '*"name": "TopUp"*'
for turn in left-up:LeftUp bottom-up:TopDown right-up:RightUp normal:TopUp; do
  accel orient "${turn%%:*}"
  check "QOrientationSensor: ${turn#*:} (${turn%%:*})" wait_for 30 "${turn#*:}" \
    qt_last orientation "*\"name\": \"${turn#*:}\"*"
done
check "QLightSensor: 123.4 lux" wait_for 30 "123.4 lux" qt_last light '*"lux": 123.4*'
hid als lux 56.7
check "QLightSensor: 56.7 lux" wait_for 30 "56.7 lux" qt_last light '*"lux": 56.7*'
check "QCompass: azimuth 90" wait_for 30 "azimuth 90" qt_last compass '*"azimuth": 90.0*'
hid magn heading 271
check "QCompass: azimuth 271" wait_for 30 "azimuth 271" qt_last compass '*"azimuth": 271.0*'
session_stop qt
journalctl -b --no-pager -o cat -u orientd.service >"$TOUT/orientd-journal.txt" 2>&1
finish
