#!/usr/bin/python3
"""An input-subsystem accelerometer for the test VM, made through /dev/uinput (stdlib only).

Like HP laptops' lis3lv02d: an evdev device with ABS_X, ABS_Y and ABS_Z and the input property
INPUT_PROP_ACCELEROMETER, for which udev's input_id builtin sets ID_INPUT_ACCELEROMETER=1. The
axes report 1000 units per g (the resolution, which the kernel's input ABS documentation
defines as units per g for an accelerometer's main axes), range +-2.3 g.

Control: one command per line on the --control FIFO:
  orient NAME    gravity of a device held in orientation NAME (normal, left-up, bottom-up,
                 right-up, face-up, face-down; the sensor mounted as the display), sent as five
                 reports 50 ms apart with a little noise, as a real sensor keeps reporting
  vector X Y Z   one report with these raw values
  quit
--status gets KEY=VALUE lines (rewritten atomically): node (/dev/input/eventN), sysname (inputN),
commands (number handled), reports, vector (the last raw values).
"""

import argparse
import fcntl
import os
import select
import signal
import struct
import sys
import time

# linux/input.h, linux/uinput.h (_IOW/_IO numbers from the kernel headers' definitions).
EV_SYN, EV_ABS, SYN_REPORT = 0, 3, 0
ABS_X, ABS_Y, ABS_Z = 0, 1, 2
INPUT_PROP_ACCELEROMETER = 6
UI_SET_EVBIT, UI_SET_ABSBIT, UI_SET_PROPBIT = 0x40045564, 0x40045567, 0x4004556E
UI_DEV_SETUP, UI_ABS_SETUP = 0x405C5503, 0x401C5504  # struct uinput_setup / uinput_abs_setup
UI_DEV_CREATE, UI_DEV_DESTROY = 0x5501, 0x5502
UI_GET_SYSNAME_64 = 0x8040552C  # _IOC(_IOC_READ, 'U', 44, 64)
BUS_HOST = 0x19
EVENT = struct.Struct('llHHi')  # struct input_event on 64-bit: timeval, type, code, value
UNITS_PER_G = 1000

# Gravity in the display frame for each orientation (as emu/hid_accel.py): upright reads -y.
ORIENTATIONS = {
    'normal': (0, -1, 0), 'bottom-up': (0, 1, 0), 'left-up': (1, 0, 0), 'right-up': (-1, 0, 0),
    'face-up': (0, 0, -1), 'face-down': (0, 0, 1),
}


class Accelerometer:
    def __init__(self, args):
        self.args = args
        self.fd = os.open('/dev/uinput', os.O_WRONLY | os.O_NONBLOCK | os.O_CLOEXEC)
        fcntl.ioctl(self.fd, UI_SET_EVBIT, EV_ABS)
        fcntl.ioctl(self.fd, UI_SET_PROPBIT, INPUT_PROP_ACCELEROMETER)
        for code in (ABS_X, ABS_Y, ABS_Z):
            fcntl.ioctl(self.fd, UI_SET_ABSBIT, code)
            # struct uinput_abs_setup: code, padding, struct input_absinfo (value, minimum,
            # maximum, fuzz, flat, resolution).
            value = -UNITS_PER_G if code == ABS_Y else 0
            fcntl.ioctl(self.fd, UI_ABS_SETUP,
                        struct.pack('<HH6i', code, 0, value, -2300, 2300, 0, 0, UNITS_PER_G))
        fcntl.ioctl(self.fd, UI_DEV_SETUP,
                    struct.pack('<HHHH80sI', BUS_HOST, 0, 0, 1, args.name.encode(), 0))
        fcntl.ioctl(self.fd, UI_DEV_CREATE)
        buf = bytearray(64)
        fcntl.ioctl(self.fd, UI_GET_SYSNAME_64, buf)
        self.sysname = bytes(buf).split(b'\0')[0].decode()
        self.node = self.find_node()
        self.commands = self.reports = 0
        self.vector = (0, -UNITS_PER_G, 0)

    def find_node(self):
        base = '/sys/devices/virtual/input/' + self.sysname
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            events = [e for e in os.listdir(base) if e.startswith('event')] if os.path.isdir(base) else []
            if events and os.path.exists('/dev/input/' + events[0]):
                return '/dev/input/' + events[0]
            time.sleep(0.02)
        raise SystemExit('no event node for %s after 10 s' % self.sysname)

    def report(self, vector):
        for code, value in zip((ABS_X, ABS_Y, ABS_Z), vector):
            os.write(self.fd, EVENT.pack(0, 0, EV_ABS, code, value))
        os.write(self.fd, EVENT.pack(0, 0, EV_SYN, SYN_REPORT, 0))
        self.vector = vector
        self.reports += 1

    def command(self, line):
        words = line.split()
        try:
            if len(words) == 2 and words[0] == 'orient' and words[1] in ORIENTATIONS:
                g = [UNITS_PER_G * v for v in ORIENTATIONS[words[1]]]
                for i in range(5):
                    noise = 2 if i % 2 else -2
                    self.report(tuple(v + noise if v else v for v in g))
                    time.sleep(0.05)
            elif len(words) == 4 and words[0] == 'vector':
                self.report(tuple(int(v) for v in words[1:]))
            elif words == ['quit']:
                return False
            elif words:
                print('unknown command %r' % line, file=sys.stderr)
        finally:
            self.commands += 1
            self.write_status()
        return True

    def write_status(self):
        tmp = self.args.status + '.tmp'
        with open(tmp, 'w') as f:
            f.write('node=%s\nsysname=%s\ncommands=%d\nreports=%d\nvector=%d,%d,%d\n'
                    % ((self.node, self.sysname, self.commands, self.reports) + self.vector))
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
    parser.add_argument('--name', default='orientd-vm input accelerometer')
    args = parser.parse_args()
    if not os.path.exists(args.control):
        os.mkfifo(args.control)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    device = Accelerometer(args)
    try:
        device.run()
    finally:
        device.close()


if __name__ == '__main__':
    main()
