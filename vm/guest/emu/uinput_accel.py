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
import struct
import sys
import time

from uinput_common import (UI_ABS_SETUP, UI_SET_ABSBIT, UI_SET_EVBIT, UI_SET_PROPBIT,
                           UInputDevice, serve, write_status)

# linux/input-event-codes.h
EV_ABS = 3
ABS_X, ABS_Y, ABS_Z = 0, 1, 2
INPUT_PROP_ACCELEROMETER = 6
BUS_HOST = 0x19
UNITS_PER_G = 1000

# Gravity in the display frame for each orientation (as emu/hid_accel.py): upright reads -y.
ORIENTATIONS = {
    'normal': (0, -1, 0), 'bottom-up': (0, 1, 0), 'left-up': (1, 0, 0), 'right-up': (-1, 0, 0),
    'face-up': (0, 0, -1), 'face-down': (0, 0, 1),
}


class Accelerometer(UInputDevice):
    def __init__(self, args):
        super().__init__()
        self.args = args
        self.ioctl(UI_SET_EVBIT, EV_ABS)
        self.ioctl(UI_SET_PROPBIT, INPUT_PROP_ACCELEROMETER)
        for code in (ABS_X, ABS_Y, ABS_Z):
            self.ioctl(UI_SET_ABSBIT, code)
            # struct uinput_abs_setup: code, padding, struct input_absinfo (value, minimum,
            # maximum, fuzz, flat, resolution).
            value = -UNITS_PER_G if code == ABS_Y else 0
            self.ioctl(UI_ABS_SETUP,
                       struct.pack('<HH6i', code, 0, value, -2300, 2300, 0, 0, UNITS_PER_G))
        self.create(BUS_HOST, 0, 0, args.name)
        self.commands = self.reports = 0
        self.vector = (0, -UNITS_PER_G, 0)

    def report(self, vector):
        for code, value in zip((ABS_X, ABS_Y, ABS_Z), vector):
            self.emit(EV_ABS, code, value)
        self.sync()
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
        write_status(self.args.status, [('node', self.node), ('sysname', self.sysname),
                                        ('commands', self.commands), ('reports', self.reports),
                                        ('vector', '%d,%d,%d' % self.vector)])


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--control', required=True)
    parser.add_argument('--status', required=True)
    parser.add_argument('--name', default='orientd-vm input accelerometer')
    serve(parser.parse_args(), Accelerometer)


if __name__ == '__main__':
    main()
