#!/usr/bin/python3
"""A keyboard with a few keys for the test VM, made through /dev/uinput (stdlib only).

The kernel's evdev driver gives it a /dev/input/eventN node like any USB keyboard. By default it
has KEY_VOLUMEUP, KEY_VOLUMEDOWN and KEY_A: the volume keys are what orientcam's shutter grabs,
KEY_A stands for "any other key" that must keep working while the device is grabbed.

Control: one command per line on the --control FIFO:
  press KEY      key down, sync, key up, sync (KEY: volumeup, volumedown, a, or a number)
  down KEY / up KEY
  switch on|off  SW_TABLET_MODE (with --tablet-switch: a firmware tablet-mode switch such as
                 intel-vbtn's), then sync
  quit
--status gets KEY=VALUE lines (rewritten atomically): node (/dev/input/eventN), sysname (inputN),
name, commands (number handled), presses.
"""

import argparse
import fcntl
import os
import select
import signal
import struct
import sys
import time

# linux/input.h, linux/uinput.h (_IOW/_IO numbers checked with gcc against the headers).
EV_SYN, EV_KEY, EV_SW, SYN_REPORT, SW_TABLET_MODE = 0, 1, 5, 0, 1
UI_SET_SWBIT = 0x4004556D  # _IOW('U', 109, int)
KEYS = {'a': 30, 'volumedown': 114, 'volumeup': 115}
UI_SET_EVBIT, UI_SET_KEYBIT = 0x40045564, 0x40045565
UI_DEV_SETUP, UI_DEV_CREATE, UI_DEV_DESTROY = 0x405C5503, 0x5501, 0x5502
UI_GET_SYSNAME_64 = 0x8040552C  # _IOC(_IOC_READ, 'U', 44, 64)
BUS_USB = 0x03
EVENT = struct.Struct('llHHi')  # struct input_event on 64-bit: timeval, type, code, value


def key_code(word):
    return KEYS[word] if word in KEYS else int(word)


class Keyboard:
    def __init__(self, args):
        self.args = args
        self.fd = os.open('/dev/uinput', os.O_WRONLY | os.O_NONBLOCK | os.O_CLOEXEC)
        fcntl.ioctl(self.fd, UI_SET_EVBIT, EV_KEY)
        for word in filter(None, args.keys.split(',')):
            fcntl.ioctl(self.fd, UI_SET_KEYBIT, key_code(word))
        if args.tablet_switch:
            fcntl.ioctl(self.fd, UI_SET_EVBIT, EV_SW)
            fcntl.ioctl(self.fd, UI_SET_SWBIT, SW_TABLET_MODE)
        # struct uinput_setup: struct input_id (bustype, vendor, product, version), name[80],
        # ff_effects_max.
        fcntl.ioctl(self.fd, UI_DEV_SETUP,
                    struct.pack('<HHHH80sI', args.bus, 0x1d6b, 0x0a78, 1, args.name.encode(), 0))
        fcntl.ioctl(self.fd, UI_DEV_CREATE)
        buf = bytearray(64)
        fcntl.ioctl(self.fd, UI_GET_SYSNAME_64, buf)
        self.sysname = bytes(buf).split(b'\0')[0].decode()
        self.node = self.find_node()
        self.commands = self.presses = 0

    def find_node(self):
        # The event node appears under the input device a moment after UI_DEV_CREATE.
        base = '/sys/devices/virtual/input/' + self.sysname
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            events = [e for e in os.listdir(base) if e.startswith('event')] if os.path.isdir(base) else []
            if events and os.path.exists('/dev/input/' + events[0]):
                return '/dev/input/' + events[0]
            time.sleep(0.02)
        raise SystemExit('no event node for %s after 10 s' % self.sysname)

    def emit(self, kind, code, value):
        os.write(self.fd, EVENT.pack(0, 0, kind, code, value))

    def key(self, code, value):
        self.emit(EV_KEY, code, value)
        self.emit(EV_SYN, SYN_REPORT, 0)

    def command(self, line):
        words = line.split()
        try:
            if len(words) == 2 and words[0] == 'press':
                self.key(key_code(words[1]), 1)
                self.key(key_code(words[1]), 0)
                self.presses += 1
            elif len(words) == 2 and words[0] in ('down', 'up'):
                self.key(key_code(words[1]), 1 if words[0] == 'down' else 0)
            elif len(words) == 2 and words[0] == 'switch' and words[1] in ('on', 'off'):
                self.emit(EV_SW, SW_TABLET_MODE, 1 if words[1] == 'on' else 0)
                self.emit(EV_SYN, SYN_REPORT, 0)
            elif words == ['quit']:
                return False
            elif words:
                print('unknown command %r' % line, file=sys.stderr)
        except (KeyError, ValueError):
            print('unknown key in %r' % line, file=sys.stderr)
        finally:
            self.commands += 1
            self.write_status()
        return True

    def write_status(self):
        tmp = self.args.status + '.tmp'
        with open(tmp, 'w') as f:
            f.write('node=%s\nsysname=%s\nname=%s\ncommands=%d\npresses=%d\n'
                    % (self.node, self.sysname, self.args.name, self.commands, self.presses))
        os.rename(tmp, self.args.status)

    def run(self):
        control = os.open(self.args.control, os.O_RDWR | os.O_NONBLOCK)
        self.write_status()
        pending, running = b'', True
        while running:
            ready, _, _ = select.select([control], [], [], 1.0)
            if ready:
                pending += os.read(control, 4096)
                while b'\n' in pending and running:
                    line, pending = pending.split(b'\n', 1)
                    running = self.command(line.decode(errors='replace'))

    def close(self):
        fcntl.ioctl(self.fd, UI_DEV_DESTROY)
        os.close(self.fd)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--control', required=True)
    parser.add_argument('--status', required=True)
    parser.add_argument('--name', default='orientd-vm keyboard')
    parser.add_argument('--keys', default='volumeup,volumedown,a')
    parser.add_argument('--bus', type=lambda s: int(s, 0), default=BUS_USB,
                        help='bus type (0x11, i8042: what libinput takes for a built-in keyboard)')
    parser.add_argument('--tablet-switch', action='store_true',
                        help='also an SW_TABLET_MODE switch (command "switch on|off")')
    args = parser.parse_args()
    if not os.path.exists(args.control):
        os.mkfifo(args.control)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    keyboard = Keyboard(args)
    try:
        keyboard.run()
    finally:
        keyboard.close()


if __name__ == '__main__':
    main()
