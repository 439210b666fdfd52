#!/usr/bin/python3
"""A stand-in for GNOME Calls on the session bus: one ongoing call, for phosh's calls manager.

usage: calls_standin.py [STATE]
Owns org.gnome.Calls and serves, under the object manager /org/gnome/Calls
(org.freedesktop.DBus.ObjectManager), one object /org/gnome/Calls/Call/1 with the interface
phosh 0.24 reads (src/dbus/org.gnome.Calls.Call.xml): Inbound false, State STATE (default 1,
active; phosh also counts 3 dialing and 4 alerting as ongoing), Id "+1555000100",
DisplayName "orientd VM", ImagePath "", Protocol "tel", Encrypted false; Accept, Hangup and
SendDtmf do nothing. The call lasts as long as this program: on SIGTERM the name goes away and
phosh sees no call. Prints "ready" once the name is owned. Needs python3-gi.
"""

import signal
import sys

from gi.repository import Gio, GLib

NAME, ROOT, CALL = 'org.gnome.Calls', '/org/gnome/Calls', '/org/gnome/Calls/Call/1'
XML = '''
<node>
  <interface name="org.freedesktop.DBus.ObjectManager">
    <method name="GetManagedObjects">
      <arg name="objects" type="a{oa{sa{sv}}}" direction="out"/>
    </method>
    <signal name="InterfacesAdded">
      <arg name="object" type="o"/><arg name="interfaces" type="a{sa{sv}}"/>
    </signal>
    <signal name="InterfacesRemoved">
      <arg name="object" type="o"/><arg name="interfaces" type="as"/>
    </signal>
  </interface>
  <interface name="org.gnome.Calls.Call">
    <method name="Accept"/>
    <method name="Hangup"/>
    <method name="SendDtmf"><arg name="Tone" type="s" direction="in"/></method>
    <property name="Inbound" type="b" access="read"/>
    <property name="State" type="u" access="read"/>
    <property name="Id" type="s" access="read"/>
    <property name="DisplayName" type="s" access="read"/>
    <property name="ImagePath" type="s" access="read"/>
    <property name="Protocol" type="s" access="read"/>
    <property name="Encrypted" type="b" access="read"/>
  </interface>
</node>'''


def main():
    state = int(sys.argv[1]) if len(sys.argv) > 1 else 1
    props = {
        'Inbound': GLib.Variant('b', False), 'State': GLib.Variant('u', state),
        'Id': GLib.Variant('s', '+1555000100'), 'DisplayName': GLib.Variant('s', 'orientd VM'),
        'ImagePath': GLib.Variant('s', ''), 'Protocol': GLib.Variant('s', 'tel'),
        'Encrypted': GLib.Variant('b', False),
    }
    node = Gio.DBusNodeInfo.new_for_xml(XML)
    manager, call = node.interfaces
    bus = Gio.bus_get_sync(Gio.BusType.SESSION, None)
    loop = GLib.MainLoop()

    def manager_call(_conn, _sender, _path, _iface, method, _params, invocation):
        if method == 'GetManagedObjects':
            invocation.return_value(GLib.Variant('(a{oa{sa{sv}}})',
                                                 ({CALL: {'org.gnome.Calls.Call': props}},)))
        else:
            invocation.return_dbus_error('org.freedesktop.DBus.Error.UnknownMethod', method)

    def call_method(_conn, _sender, _path, _iface, method, _params, invocation):
        print('call method %s' % method, flush=True)
        invocation.return_value(None)

    def get_property(_conn, _sender, _path, _iface, name):
        return props[name]

    bus.register_object(ROOT, manager, manager_call, None, None)
    bus.register_object(CALL, call, call_method, get_property, None)

    owned = []

    def acquired(*_):
        owned.append(True)
        print('ready', flush=True)

    def lost(*_):
        if not owned:
            print('could not own %s' % NAME, flush=True)
        loop.quit()

    Gio.bus_own_name_on_connection(bus, NAME, Gio.BusNameOwnerFlags.NONE, acquired, lost)
    GLib.unix_signal_add(GLib.PRIORITY_DEFAULT, signal.SIGTERM, loop.quit)
    loop.run()


if __name__ == '__main__':
    main()
