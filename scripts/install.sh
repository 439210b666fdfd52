#!/usr/bin/env bash
# Builds release binaries and installs orientd, orientcam and their system files where Debian
# expects them.
#
#   sudo scripts/install.sh                    # into /usr, then reloads udev/dbus/systemd
#   DESTDIR=/tmp/stage PREFIX=/usr scripts/install.sh   # staged (packaging); nothing reloaded
#
# PREFIX   installation prefix (default /usr); binaries go to $PREFIX/bin
# DESTDIR  staging root prepended to every path (default empty)
# UNITDIR  systemd system unit directory (default $PREFIX/lib/systemd/system)
# UDEVDIR  udev directory (default $PREFIX/lib/udev)
set -euo pipefail
cd "$(dirname "$0")/.."
PREFIX=${PREFIX:-/usr}
DESTDIR=${DESTDIR:-}
UNITDIR=${UNITDIR:-$PREFIX/lib/systemd/system}
UDEVDIR=${UDEVDIR:-$PREFIX/lib/udev}
SYSCONFDIR=${SYSCONFDIR:-/etc}

if [ -z "${SKIP_BUILD:-}" ]; then
  scripts/deps.sh
  # Static Swift runtime: no Swift shared libraries needed on the device, lower resident memory.
  swift build -c release --static-swift-stdlib --product orientd
  if grep -q '"orientcam"' Package.swift; then
    swift build -c release --static-swift-stdlib --product orientcam
  fi
fi
bin=$(swift build -c release --show-bin-path)

install -d "$DESTDIR$PREFIX/bin"
install -m 0755 "$bin/orientd" "$DESTDIR$PREFIX/bin/orientd"
[ -x "$bin/orientcam" ] && install -m 0755 "$bin/orientcam" "$DESTDIR$PREFIX/bin/orientcam"

install -d "$DESTDIR$PREFIX/share/dbus-1/system.d" "$DESTDIR$PREFIX/share/dbus-1/system-services" \
  "$DESTDIR$PREFIX/share/dbus-1/interfaces"
install -m 0644 dbus/orientd.conf "$DESTDIR$PREFIX/share/dbus-1/system.d/orientd.conf"
sed "s|^Exec=.*|Exec=$PREFIX/bin/orientd|" dbus/org.orientd.Orientation1.service \
  > "$DESTDIR$PREFIX/share/dbus-1/system-services/org.orientd.Orientation1.service"
for xml in dbus/*.xml; do
  install -m 0644 "$xml" "$DESTDIR$PREFIX/share/dbus-1/interfaces/$(basename "$xml")"
done

install -d "$DESTDIR$UNITDIR"
sed "s|^ExecStart=.*|ExecStart=$PREFIX/bin/orientd|" systemd/orientd.service \
  > "$DESTDIR$UNITDIR/orientd.service"

install -d "$DESTDIR$UDEVDIR/rules.d"
install -m 0644 udev/80-orientd.rules "$DESTDIR$UDEVDIR/rules.d/80-orientd.rules"

install -d "$DESTDIR$PREFIX/share/doc/orientd"
for f in udev/*.example docs/orientd.conf.example; do
  [ -f "$f" ] && install -m 0644 "$f" "$DESTDIR$PREFIX/share/doc/orientd/$(basename "$f")"
done

echo "installed into ${DESTDIR:-/}${PREFIX}"
if [ -z "$DESTDIR" ] && [ "$(id -u)" -eq 0 ]; then
  command -v udevadm >/dev/null && udevadm control --reload && udevadm trigger -s iio -c add || true
  command -v systemctl >/dev/null && systemctl daemon-reload 2>/dev/null || true
  # The system bus rereads policy files on its own (inotify); ask it anyway where it runs.
  busctl call org.freedesktop.DBus / org.freedesktop.DBus ReloadConfig 2>/dev/null || true
fi
