#!/usr/bin/python3
"""Claims net.hadess.SensorProxy sensors as a desktop client does, and says what it got.

usage: sensor_claims.py [--hold SECONDS] KIND...
KIND: accel, light, proximity, compass. For each, one JSON line:
  {"kind": "light", "claim": "ok", "values": {"HasAmbientLight": true, "LightLevel": 123.4}}
  {"kind": "compass", "claim": "refused", "error": "org.freedesktop.DBus.Error.AccessDenied",
   "message": "..."}
The values are read with GetAll right after the claim. With --hold, the claims are kept for
SECONDS (or until SIGTERM) and every PropertiesChanged is printed as
  {"changed": {"LightLevel": 56.7}, "path": "/net/hadess/SensorProxy"}
then each successful claim is released ({"kind": ..., "release": "ok"}). The bus connection is
the claim: when this program exits, orientd drops whatever it still held. Exit status 0 when every
claim succeeded, 1 otherwise. Needs python3-gi (Gio); runs as whatever user starts it, which is
the point (polkit decides from the caller's session).
"""

import json
import signal
import sys

from gi.repository import Gio, GLib

NAME = 'net.hadess.SensorProxy'
KINDS = {
    'accel': ('/net/hadess/SensorProxy', NAME, 'Accelerometer'),
    'light': ('/net/hadess/SensorProxy', NAME, 'Light'),
    'proximity': ('/net/hadess/SensorProxy', NAME, 'Proximity'),
    'compass': ('/net/hadess/SensorProxy/Compass', NAME + '.Compass', 'Compass'),
}


def emit(obj):
    print(json.dumps(obj, sort_keys=True), flush=True)


def call(bus, path, iface, method, args=None):
    return bus.call_sync(NAME, path, iface, method, args, None, Gio.DBusCallFlags.NONE, 20000,
                         None)


def main():
    args = sys.argv[1:]
    hold = None
    if args[:1] == ['--hold']:
        hold, args = float(args[1]), args[2:]
    if not args or any(k not in KINDS for k in args):
        sys.exit(__doc__)
    bus = Gio.bus_get_sync(Gio.BusType.SYSTEM, None)
    claimed = []
    for kind in args:
        path, iface, what = KINDS[kind]
        try:
            call(bus, path, iface, 'Claim' + what)
        except GLib.Error as error:
            emit({'kind': kind, 'claim': 'refused',
                  'error': Gio.DBusError.get_remote_error(error) or str(error.domain),
                  'message': error.message})
            continue
        claimed.append(kind)
        values = {}
        try:
            reply = call(bus, path, 'org.freedesktop.DBus.Properties', 'GetAll',
                         GLib.Variant('(s)', (iface,)))
            values = reply.unpack()[0]
        except GLib.Error as error:
            values = {'error': error.message}
        emit({'kind': kind, 'claim': 'ok', 'values': values})
    if hold is not None and claimed:
        loop = GLib.MainLoop()

        def changed(_conn, _sender, path, _iface, _signal, params, _data):
            _, props, _ = params.unpack()
            emit({'changed': props, 'path': path})

        bus.signal_subscribe(NAME, 'org.freedesktop.DBus.Properties', 'PropertiesChanged', None,
                             None, Gio.DBusSignalFlags.NONE, changed, None)
        GLib.unix_signal_add(GLib.PRIORITY_DEFAULT, signal.SIGTERM, loop.quit)
        GLib.timeout_add(int(hold * 1000), loop.quit)
        emit({'holding': claimed})
        loop.run()
        for kind in claimed:
            path, iface, what = KINDS[kind]
            try:
                call(bus, path, iface, 'Release' + what)
                emit({'kind': kind, 'release': 'ok'})
            except GLib.Error as error:
                emit({'kind': kind, 'release': 'failed', 'message': error.message})
    sys.exit(0 if len(claimed) == len(args) else 1)


if __name__ == '__main__':
    main()
