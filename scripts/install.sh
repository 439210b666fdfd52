#!/usr/bin/env bash
# Builds release binaries (Swift runtime linked statically) and installs orientd, orientcam and
# their system files where Debian expects them; orientd-rotate, the program `orientd rotate`
# runs, goes to $PREFIX/libexec/orientd (orientd looks there, relative to its own directory);
# orientcam's libcamera plugin to $PREFIX/lib/orientcam (orientcam loads it from ../lib/orientcam
# relative to its own directory when a libcamera camera is asked for).
#
#   sudo scripts/install.sh                              # into /usr, then reloads udev/dbus/systemd
#   DESTDIR=/tmp/stage scripts/install.sh                # staged (packaging); nothing reloaded
#   sudo PREFIX=/usr/local scripts/install.sh            # binaries in /usr/local/bin
#
# PREFIX      installation prefix (default /usr); binaries go to $PREFIX/bin
# DESTDIR     staging root prepended to every path (default empty)
# UNITDIR     systemd system units (default $PREFIX/lib/systemd/system; systemd reads
#             /usr/lib/... and /usr/local/lib/...)
# UDEVDIR     udev rules directory (default /usr/lib/udev/rules.d for PREFIX=/usr, otherwise
#             /etc/udev/rules.d: udev does not read $PREFIX/lib/udev)
# DBUSPOLICYDIR  system bus policy (default /usr/share/dbus-1/system.d for PREFIX=/usr,
#             otherwise /etc/dbus-1/system.d: the bus reads only those two)
# DBUSSERVICEDIR bus activation files (default $PREFIX/share/dbus-1/system-services)
# POLKITACTIONDIR polkit actions (default /usr/share/polkit-1/actions whatever PREFIX is: the
#             only directory polkitd reads them from)
# POLKITRULESDIR polkit rules (default /usr/share/polkit-1/rules.d, likewise)
# MANDIR      manual pages (default $PREFIX/share/man; built from man/*.scd with scdoc)
# COMPLETIONDIR bash completions (default $PREFIX/share/bash-completion/completions)
# SKIP_BUILD  use the build already there
# BUILD_DIR   take the binaries from this directory (default: the release build)
set -euo pipefail
cd "$(dirname "$0")/.."
PREFIX=${PREFIX:-/usr}
DESTDIR=${DESTDIR:-}
if [ "$PREFIX" = /usr ]; then
  udev_default=/usr/lib/udev/rules.d
  policy_default=/usr/share/dbus-1/system.d
else
  udev_default=/etc/udev/rules.d
  policy_default=/etc/dbus-1/system.d
fi
UNITDIR=${UNITDIR:-$PREFIX/lib/systemd/system}
UDEVDIR=${UDEVDIR:-$udev_default}
DBUSPOLICYDIR=${DBUSPOLICYDIR:-$policy_default}
DBUSSERVICEDIR=${DBUSSERVICEDIR:-$PREFIX/share/dbus-1/system-services}
POLKITACTIONDIR=${POLKITACTIONDIR:-/usr/share/polkit-1/actions}
POLKITRULESDIR=${POLKITRULESDIR:-/usr/share/polkit-1/rules.d}
DOCDIR=$PREFIX/share/doc/orientd
MANDIR=${MANDIR:-$PREFIX/share/man}
COMPLETIONDIR=${COMPLETIONDIR:-$PREFIX/share/bash-completion/completions}

if [ -z "${SKIP_BUILD:-}" ]; then
  scripts/deps.sh
  # Static Swift runtime, lld with packed relocations and the daemon's function order.
  scripts/build-release.sh orientd orientd-rotate orientcam orientcam-libcamera orientd-face
fi
bin=${BUILD_DIR:-$(swift build -c release --show-bin-path)}
[ -x "$bin/orientd" ] || { echo "install: $bin/orientd is missing; build first" >&2; exit 66; }

put() {  # mode source destination
  install -D -m "$1" "$2" "$DESTDIR$3"
  echo "  $3"
}
echo "installing into ${DESTDIR:-/} (PREFIX=$PREFIX):"
put 0755 "$bin/orientd" "$PREFIX/bin/orientd"
if [ -x "$bin/orientd-rotate" ]; then
  put 0755 "$bin/orientd-rotate" "$PREFIX/libexec/orientd/orientd-rotate"
fi
if [ -x "$bin/orientcam" ]; then put 0755 "$bin/orientcam" "$PREFIX/bin/orientcam"; fi
if [ -f "$bin/liborientcam-libcamera.so" ]; then
  put 0644 "$bin/liborientcam-libcamera.so" "$PREFIX/lib/orientcam/liborientcam-libcamera.so"
fi
# orientd-face: face-aware rotation's helper (dlib); orientd runs it per proposal, never links it.
if [ -x "$bin/orientd-face" ]; then put 0755 "$bin/orientd-face" "$PREFIX/bin/orientd-face"; fi

put 0644 dbus/orientd.conf "$DBUSPOLICYDIR/orientd.conf"
# The claim action net.hadess.SensorProxy.claim-sensor (polkitd notices new files by itself).
put 0644 polkit/org.orientd.SensorProxy.policy "$POLKITACTIONDIR/org.orientd.SensorProxy.policy"
# geoclue, a system service in no session, may claim (it puts the compass's heading into locations).
put 0644 polkit/50-orientd-geoclue.rules "$POLKITRULESDIR/50-orientd-geoclue.rules"
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
sed "s|^Exec=.*|Exec=$PREFIX/bin/orientd|" dbus/org.orientd.Orientation1.service > "$tmp"
put 0644 "$tmp" "$DBUSSERVICEDIR/org.orientd.Orientation1.service"
for xml in dbus/*.xml; do
  put 0644 "$xml" "$PREFIX/share/dbus-1/interfaces/$(basename "$xml")"
done
sed "s|^ExecStart=.*|ExecStart=$PREFIX/bin/orientd|" systemd/orientd.service > "$tmp"
put 0644 "$tmp" "$UNITDIR/orientd.service"
put 0644 udev/80-orientd.rules "$UDEVDIR/80-orientd.rules"
for f in udev/61-sensor-local.hwdb.example docs/orientd.conf.example; do
  put 0644 "$f" "$DOCDIR/$(basename "$f")"
done
# Manual pages: man/NAME.SECTION.scd -> man SECTION/NAME.SECTION (scdoc, from scripts/deps.sh).
command -v scdoc >/dev/null || { echo "install: scdoc is missing (apt-get install scdoc)" >&2; exit 69; }
for scd in man/*.scd; do
  page=$(basename "$scd" .scd)
  scdoc <"$scd" >"$tmp" || { echo "install: scdoc failed on $scd" >&2; exit 65; }
  put 0644 "$tmp" "$MANDIR/man${page##*.}/$page"
done
for completion in completion/*.bash; do
  put 0644 "$completion" "$COMPLETIONDIR/$(basename "$completion" .bash)"
done

if [ -z "$DESTDIR" ] && [ "$(id -u)" -eq 0 ]; then
  echo "reloading udev rules, systemd units and the bus policy"
  if command -v systemctl >/dev/null; then systemctl daemon-reload 2>/dev/null || true; fi
  # The system bus also notices new policy files by itself (inotify).
  busctl call org.freedesktop.DBus /org/freedesktop/DBus org.freedesktop.DBus ReloadConfig \
    2>/dev/null || true
  if command -v udevadm >/dev/null; then
    # Re-run the rules for IIO devices: an accelerometer now pulls orientd.service in.
    udevadm control --reload 2>/dev/null || true
    udevadm trigger --subsystem-match=iio --action=add 2>/dev/null || true
  fi
  echo "done; orientd starts when an accelerometer is present (or on the first D-Bus call):"
  echo "  systemctl status orientd; orientd --get"
fi
