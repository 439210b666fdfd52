#!/usr/bin/python3
"""Asks the system bus (DBUS_SYSTEM_BUS_ADDRESS) for a well-known name, as a service would.

usage: bus_name.py NAME [--hold]
Exit 0 when the bus made us the primary owner, 2 when its policy refused (AccessDenied), 1 for
anything else. With --hold, keep the name until SIGTERM (prints "owned" once it is ours).
"""

import signal
import sys

import gi

gi.require_version('Gio', '2.0')
from gi.repository import Gio, GLib  # noqa: E402

DBUS_REQUEST_NAME_REPLY_PRIMARY_OWNER = 1
DBUS_NAME_FLAG_DO_NOT_QUEUE = 4


def main():
    name = sys.argv[1]
    try:
        bus = Gio.bus_get_sync(Gio.BusType.SYSTEM, None)
        reply = bus.call_sync('org.freedesktop.DBus', '/org/freedesktop/DBus', 'org.freedesktop.DBus',
                              'RequestName', GLib.Variant('(su)', (name, DBUS_NAME_FLAG_DO_NOT_QUEUE)),
                              GLib.VariantType('(u)'), Gio.DBusCallFlags.NONE, 10000, None)
    except GLib.Error as e:
        print('%s: %s' % (name, e.message))
        sys.exit(2 if 'AccessDenied' in e.message else 1)
    if reply.unpack()[0] != DBUS_REQUEST_NAME_REPLY_PRIMARY_OWNER:
        print('%s: not the primary owner (reply %d)' % (name, reply.unpack()[0]))
        sys.exit(1)
    print('owned', flush=True)
    if '--hold' in sys.argv:
        signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
        signal.pause()


if __name__ == '__main__':
    main()
