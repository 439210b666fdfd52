#!/usr/bin/python3
"""Watches names, properties and mutter's display state on the session bus, one line per change.

usage: session_watch.py [--name NAME]... [--prop NAME PATH INTERFACE PROPERTY]... [--mutter]
Prints, at start and on every change, flushed (the VM's client tests read the lines with bash
builtins: one Python start per test instead of a gdbus, setpriv and env per poll, each of which
takes a fraction of a second under TCG):
  owner NAME yes|no
  prop PROPERTY VALUE          (GVariant text form: true, false, 'text', 12; once NAME has an
                                owner, then on each PropertiesChanged of it)
  transform CONNECTOR N        (--mutter: org.gnome.Mutter.DisplayConfig.GetCurrentState, the
                                transform of the logical monitor that shows CONNECTOR; again
                                at each MonitorsChanged)
  builtin CONNECTOR true|false (--mutter: the monitor's is-builtin)
  error TEXT                   (a call that failed)
Runs until SIGTERM. Needs python3-gi.
"""

import signal
import sys

from gi.repository import Gio, GLib

MUTTER = ('org.gnome.Mutter.DisplayConfig', '/org/gnome/Mutter/DisplayConfig',
          'org.gnome.Mutter.DisplayConfig')


def emit(*words):
    print(' '.join(str(w) for w in words), flush=True)


def parse(args):
    names, props, mutter = [], [], False
    while args:
        if args[0] == '--name' and len(args) >= 2:
            names.append(args[1])
            args = args[2:]
        elif args[0] == '--prop' and len(args) >= 5:
            props.append(tuple(args[1:5]))
            args = args[5:]
        elif args[0] == '--mutter':
            mutter = True
            args = args[1:]
        else:
            sys.exit(__doc__)
    return names, props, mutter


def main():
    names, props, mutter = parse(sys.argv[1:])
    if not (names or props or mutter):
        sys.exit(__doc__)
    bus = Gio.bus_get_sync(Gio.BusType.SESSION, None)
    loop = GLib.MainLoop()
    watches = []

    def get_prop(name, path, iface, prop):
        def done(conn, result):
            try:
                value = conn.call_finish(result).unpack()[0]
                emit('prop', prop, _text(value))
            except GLib.Error as error:
                emit('error', 'Get', prop, error.message)
        bus.call(name, path, 'org.freedesktop.DBus.Properties', 'Get',
                 GLib.Variant('(ss)', (iface, prop)), None, Gio.DBusCallFlags.NONE, 20000, None,
                 done)

    def mutter_state():
        def done(conn, result):
            try:
                _serial, monitors, logical, _props = conn.call_finish(result).unpack()
            except GLib.Error as error:
                emit('error', 'GetCurrentState', error.message)
                return
            for (connector, _v, _p, _s), _modes, mprops in monitors:
                emit('builtin', connector, 'true' if mprops.get('is-builtin') else 'false')
            for _x, _y, _scale, transform, _primary, shown, _lprops in logical:
                for connector, _v, _p, _s in shown:
                    emit('transform', connector, transform)
        bus.call(MUTTER[0], MUTTER[1], MUTTER[2], 'GetCurrentState', None, None,
                 Gio.DBusCallFlags.NONE, 20000, None, done)

    for name in names:
        watches.append(Gio.bus_watch_name_on_connection(
            bus, name, Gio.BusNameWatcherFlags.NONE,
            lambda _c, n, _o: emit('owner', n, 'yes'), lambda _c, n: emit('owner', n, 'no')))
    for name, path, iface, prop in props:
        def changed(_c, _sender, _path, _iface, _signal, params, key=(name, path, iface, prop)):
            changed_iface, values, invalidated = params.unpack()
            if changed_iface != key[2]:
                return
            if key[3] in values:
                emit('prop', key[3], _text(values[key[3]]))
            elif key[3] in invalidated:
                get_prop(*key)
        bus.signal_subscribe(name, 'org.freedesktop.DBus.Properties', 'PropertiesChanged', path,
                             None, Gio.DBusSignalFlags.NONE, changed)
        watches.append(Gio.bus_watch_name_on_connection(
            bus, name, Gio.BusNameWatcherFlags.NONE,
            lambda _c, _n, _o, key=(name, path, iface, prop): get_prop(*key), None))
    if mutter:
        bus.signal_subscribe(MUTTER[0], MUTTER[2], 'MonitorsChanged', MUTTER[1], None,
                             Gio.DBusSignalFlags.NONE, lambda *_: mutter_state())
        watches.append(Gio.bus_watch_name_on_connection(
            bus, MUTTER[0], Gio.BusNameWatcherFlags.NONE, lambda *_: mutter_state(), None))
    GLib.unix_signal_add(GLib.PRIORITY_DEFAULT, signal.SIGTERM, loop.quit)
    loop.run()


def _text(value):
    """A property's value as GVariant text (true, 'text', 12), from what unpack() gave."""
    if isinstance(value, bool):
        return 'true' if value else 'false'
    if isinstance(value, str):
        return "'%s'" % value
    return str(value)


if __name__ == '__main__':
    main()
