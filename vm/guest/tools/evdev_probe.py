#!/usr/bin/python3
"""Looks at evdev devices from the outside, for the key-grab checks (stdlib only).

  evdev_probe.py grabbed DEV
      exit 0 when some other reader holds an EVIOCGRAB on DEV (our own grab fails with EBUSY),
      1 when nobody does (our probe grab is released again at once).
  evdev_probe.py watch --out FILE [--grab] [--all] [--switches] [DEV...]
      record key events (with --switches: switch events, EV_SW, instead) until SIGTERM as lines
      "SECONDS NODE DEVICE_NAME CODE VALUE" (the device name with spaces as underscores); the first line is "ready" once every device is open (and
      grabbed with --grab). --all watches every /dev/input/event* and any that appears later, such
      as the device a grabbing program creates to re-emit the keys it does not use.
"""

import errno
import fcntl
import glob
import os
import select
import signal
import struct
import sys
import time

EVIOCGRAB = 0x40044590
EVIOCGNAME_256 = 0x81004506
EV_KEY = 1
EV_SW = 5
EVENT = struct.Struct('llHHi')


def device_name(fd):
    buf = bytearray(256)
    fcntl.ioctl(fd, EVIOCGNAME_256, buf)
    return bytes(buf).split(b'\0')[0].decode(errors='replace').replace(' ', '_')


def grabbed(node):
    fd = os.open(node, os.O_RDONLY | os.O_NONBLOCK)
    try:
        fcntl.ioctl(fd, EVIOCGRAB, 1)
    except OSError as e:
        if e.errno == errno.EBUSY:
            return True
        raise
    fcntl.ioctl(fd, EVIOCGRAB, 0)
    return False


def watch(args):
    out = args[args.index('--out') + 1]
    grab = '--grab' in args
    every = '--all' in args
    wanted = EV_SW if '--switches' in args else EV_KEY
    nodes = [a for a in args if a.startswith('/dev/')]
    opened = {}  # fd -> (node, name)

    def open_node(node):
        try:
            fd = os.open(node, os.O_RDONLY | os.O_NONBLOCK)
        except OSError:
            return
        if grab:
            fcntl.ioctl(fd, EVIOCGRAB, 1)
        opened[fd] = (node, device_name(fd))

    for node in nodes:
        open_node(node)
    if every:
        for node in sorted(glob.glob('/dev/input/event*')):
            if node not in [n for n, _ in opened.values()]:
                open_node(node)
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    with open(out, 'w', buffering=1) as f:
        f.write('ready\n')
        while not stop:
            try:
                ready, _, _ = select.select(list(opened), [], [], 0.05)
            except InterruptedError:
                continue
            for fd in ready:
                try:
                    data = os.read(fd, EVENT.size * 64)
                except OSError:  # the device went away
                    os.close(fd)
                    del opened[fd]
                    continue
                for off in range(0, len(data) - EVENT.size + 1, EVENT.size):
                    _, _, kind, code, value = EVENT.unpack_from(data, off)
                    if kind == wanted:
                        node, name = opened[fd]
                        f.write('%.6f %s %s %d %d\n' % (time.monotonic(), node, name, code, value))
            if every:
                known = {n for n, _ in opened.values()}
                for node in sorted(glob.glob('/dev/input/event*')):
                    if node not in known:
                        open_node(node)


def main():
    if len(sys.argv) == 3 and sys.argv[1] == 'grabbed':
        sys.exit(0 if grabbed(sys.argv[2]) else 1)
    if len(sys.argv) >= 4 and sys.argv[1] == 'watch' and '--out' in sys.argv:
        watch(sys.argv[2:])
        return
    sys.exit(__doc__)


if __name__ == '__main__':
    main()
