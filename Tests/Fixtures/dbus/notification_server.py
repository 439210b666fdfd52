#!/usr/bin/python3
"""A stand-in desktop notification server (org.freedesktop.Notifications, Desktop
Notifications Specification 1.2) on a private bus, for orientd rotate --suggest's tests.

Usage: notification_server.py BUS_ADDRESS
Prints "ready" once it owns the name, then one line per call, line-buffered:
  notify ID|SUMMARY|BODY|ACTIONS (comma-separated)|EXPIRE_TIMEOUT
  close ID
A test presses a notification's button with the extra method org.orientd.Test.Invoke(u id,
s action), which emits ActionInvoked as a server does when the user clicks. Notifications
with a positive expire_timeout are closed when it passes (NotificationClosed reason 1).
"""
import sys

from gi.repository import Gio, GLib

XML = """
<node>
  <interface name="org.freedesktop.Notifications">
    <method name="GetCapabilities"><arg type="as" direction="out"/></method>
    <method name="Notify">
      <arg type="s" direction="in"/><arg type="u" direction="in"/>
      <arg type="s" direction="in"/><arg type="s" direction="in"/>
      <arg type="s" direction="in"/><arg type="as" direction="in"/>
      <arg type="a{sv}" direction="in"/><arg type="i" direction="in"/>
      <arg type="u" direction="out"/>
    </method>
    <method name="CloseNotification"><arg type="u" direction="in"/></method>
    <method name="GetServerInformation">
      <arg type="s" direction="out"/><arg type="s" direction="out"/>
      <arg type="s" direction="out"/><arg type="s" direction="out"/>
    </method>
    <signal name="NotificationClosed"><arg type="u"/><arg type="u"/></signal>
    <signal name="ActionInvoked"><arg type="u"/><arg type="s"/></signal>
  </interface>
  <interface name="org.orientd.Test">
    <method name="Invoke"><arg type="u" direction="in"/><arg type="s" direction="in"/></method>
  </interface>
</node>
"""

PATH = '/org/freedesktop/Notifications'
IFACE = 'org.freedesktop.Notifications'


def main():
    address = sys.argv[1]
    loop = GLib.MainLoop()
    connection = Gio.DBusConnection.new_for_address_sync(
        address,
        Gio.DBusConnectionFlags.AUTHENTICATION_CLIENT
        | Gio.DBusConnectionFlags.MESSAGE_BUS_CONNECTION,
        None, None)
    state = {'next': 1, 'open': set()}

    def emit(name, signature, values):
        connection.emit_signal(None, PATH, IFACE, name, GLib.Variant(signature, values))

    def close(number, reason):
        if number in state['open']:
            state['open'].discard(number)
            emit('NotificationClosed', '(uu)', (number, reason))
        return False

    def on_call(conn, sender, path, interface, method, parameters, invocation):
        args = parameters.unpack()
        if method == 'GetCapabilities':
            invocation.return_value(GLib.Variant('(as)', (['body', 'actions'],)))
        elif method == 'GetServerInformation':
            invocation.return_value(GLib.Variant('(ssss)', ('stand-in', 'orientd', '1', '1.2')))
        elif method == 'Notify':
            number = args[1] or state['next']
            if not args[1]:
                state['next'] += 1
            state['open'].add(number)
            print('notify %d|%s|%s|%s|%d' % (number, args[3], args[4], ','.join(args[5]), args[7]),
                  flush=True)
            if args[7] > 0:
                GLib.timeout_add(args[7], close, number, 1)
            invocation.return_value(GLib.Variant('(u)', (number,)))
        elif method == 'CloseNotification':
            print('close %d' % args[0], flush=True)
            close(args[0], 3)
            invocation.return_value(None)
        elif method == 'Invoke':
            emit('ActionInvoked', '(us)', (args[0], args[1]))
            invocation.return_value(None)

    node = Gio.DBusNodeInfo.new_for_xml(XML)
    for info in node.interfaces:
        connection.register_object(PATH, info, on_call, None, None)
    reply = connection.call_sync(
        'org.freedesktop.DBus', '/org/freedesktop/DBus', 'org.freedesktop.DBus', 'RequestName',
        GLib.Variant('(su)', (IFACE, 4)), None, Gio.DBusCallFlags.NONE, -1, None)
    if reply.unpack()[0] != 1:
        print('could not own %s' % IFACE, flush=True)
        sys.exit(1)
    print('ready', flush=True)
    loop.run()


main()
