#!/usr/bin/python3
"""A sensor client written the way the desktops write them (mutter, gnome-settings-daemon,
geoclue, phosh): a Gio.DBusProxy made before claiming caches every property (GetAll), and
afterwards the client reads only that cache, refreshed by PropertiesChanged, never Get.

  cached_proxy.py snapshot ADDRESS NAME PATH INTERFACE CLAIM PROPERTY EXPECTED GO
      Makes the proxy and prints `before VALUE` (its cache); once the file GO exists, calls
      CLAIM through the proxy and runs the main loop (PropertiesChanged updates the cache)
      until the cached PROPERTY is EXPECTED, at most 10 s; prints `after VALUE` from the cache
      and `signals N` (how many PropertiesChanged named it); then waits for GO.done and exits
      (leaving the bus releases the claim).
  cached_proxy.py hold ADDRESS NAME PATH INTERFACE CLAIM GO
      Claims, prints `claimed`, and exits (so releases) once the file GO exists.

Values print as GLib.Variant.print does (`'left-up'`, `150.0`, `true`).
"""
import os
import sys
import time

import gi
from gi.repository import Gio, GLib


def connect(address):
    return Gio.DBusConnection.new_for_address_sync(
        address,
        Gio.DBusConnectionFlags.AUTHENTICATION_CLIENT
        | Gio.DBusConnectionFlags.MESSAGE_BUS_CONNECTION, None, None)


def wait_for(path):
    while not os.path.exists(path):
        time.sleep(0.05)


def cached(proxy, name):
    value = proxy.get_cached_property(name)
    return 'none' if value is None else value.print_(False)


def main():
    mode, address, name, path, interface, claim = sys.argv[1:7]
    bus = connect(address)
    proxy = Gio.DBusProxy.new_sync(
        bus, Gio.DBusProxyFlags.DO_NOT_AUTO_START, None, name, path, interface, None)
    if mode == 'hold':
        go = sys.argv[7]
        proxy.call_sync(claim, None, Gio.DBusCallFlags.NONE, 10000, None)
        print('claimed', flush=True)
        wait_for(go)
        return
    prop, expected, go = sys.argv[7:10]
    print('before', cached(proxy, prop), flush=True)
    signals = []
    proxy.connect('g-properties-changed',
                  lambda _p, changed, _inv: signals.append(prop in changed.keys()))
    wait_for(go)
    proxy.call_sync(claim, None, Gio.DBusCallFlags.NONE, 10000, None)
    context = GLib.MainContext.default()
    deadline = time.monotonic() + 10
    while cached(proxy, prop) != expected and time.monotonic() < deadline:
        context.iteration(False) or time.sleep(0.02)
    print('after', cached(proxy, prop), flush=True)
    print('signals', sum(signals), flush=True)
    wait_for(go + '.done')


if __name__ == '__main__':
    main()
