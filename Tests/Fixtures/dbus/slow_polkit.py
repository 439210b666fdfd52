#!/usr/bin/python3
"""A stand-in for polkitd on a private bus, for orientd's ClaimGate tests: answers
CheckAuthorization "authorized" for everyone, but holds the first call for DELAY seconds.

Usage: slow_polkit.py BUS_ADDRESS DELAY
Prints "ready" once it owns org.freedesktop.PolicyKit1, then "call N SENDER" as each check
arrives and "answer N" as it is answered (line-buffered), so a test can order its clients.
"""
import sys

from gi.repository import Gio, GLib

XML = """
<node>
  <interface name="org.freedesktop.PolicyKit1.Authority">
    <method name="CheckAuthorization">
      <arg type="(sa{sv})" name="subject" direction="in"/>
      <arg type="s" name="action_id" direction="in"/>
      <arg type="a{ss}" name="details" direction="in"/>
      <arg type="u" name="flags" direction="in"/>
      <arg type="s" name="cancellation_id" direction="in"/>
      <arg type="(bba{ss})" name="result" direction="out"/>
    </method>
  </interface>
</node>
"""


def main():
    address, delay = sys.argv[1], float(sys.argv[2])
    loop = GLib.MainLoop()
    connection = Gio.DBusConnection.new_for_address_sync(
        address,
        Gio.DBusConnectionFlags.AUTHENTICATION_CLIENT
        | Gio.DBusConnectionFlags.MESSAGE_BUS_CONNECTION,
        None, None)
    calls = [0]

    def answer(invocation, number):
        invocation.return_value(GLib.Variant('((bba{ss}))', ((True, False, {}),)))
        print('answer %d' % number, flush=True)
        return False

    def on_call(conn, sender, path, interface, method, parameters, invocation):
        calls[0] += 1
        number = calls[0]
        subject = parameters.unpack()[0][1].get('name', '?')
        print('call %d %s' % (number, subject), flush=True)
        if number == 1:
            GLib.timeout_add(int(delay * 1000), answer, invocation, number)
        else:
            answer(invocation, number)

    info = Gio.DBusNodeInfo.new_for_xml(XML).interfaces[0]
    connection.register_object('/org/freedesktop/PolicyKit1/Authority', info, on_call, None, None)
    reply = connection.call_sync(
        'org.freedesktop.DBus', '/org/freedesktop/DBus', 'org.freedesktop.DBus', 'RequestName',
        GLib.Variant('(su)', ('org.freedesktop.PolicyKit1', 4)), None,
        Gio.DBusCallFlags.NONE, -1, None)
    if reply.unpack()[0] != 1:
        print('cannot own org.freedesktop.PolicyKit1', file=sys.stderr, flush=True)
        sys.exit(1)
    print('ready', flush=True)
    loop.run()


if __name__ == '__main__':
    main()
