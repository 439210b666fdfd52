#!/usr/bin/python3
"""A pen tablet on the screen for the test VM, made through /dev/uinput (stdlib only).

As the pen digitiser of a convertible (an I2C-HID or Wacom AES panel): INPUT_PROP_DIRECT,
BTN_TOOL_PEN and BTN_TOOL_RUBBER (pen and eraser tools), BTN_TOUCH, BTN_STYLUS, ABS_X/Y and
ABS_PRESSURE. udev's input_id builtin tags it ID_INPUT_TABLET=1; libinput takes it as a tablet
with tools, and xf86-input-libinput creates an X device for a tool only when that tool first
comes into proximity.

Control: one command per line on the --control FIFO:
  prox pen|eraser   the tool comes into proximity over the middle of the panel (no pressure)
  out pen|eraser    it leaves proximity
  quit
--status gets KEY=VALUE lines (rewritten atomically): node (/dev/input/eventN), sysname (inputN),
name, commands (number handled).
"""

import argparse
import struct
import sys

from uinput_common import (UI_ABS_SETUP, UI_SET_ABSBIT, UI_SET_EVBIT, UI_SET_KEYBIT,
                           UI_SET_PROPBIT, UInputDevice, serve, write_status)

# linux/input-event-codes.h
EV_KEY, EV_ABS = 1, 3
BTN_TOOL_PEN, BTN_TOOL_RUBBER, BTN_TOUCH, BTN_STYLUS = 0x140, 0x141, 0x14a, 0x14b
ABS_X, ABS_Y, ABS_PRESSURE = 0x00, 0x01, 0x18
INPUT_PROP_DIRECT = 0x01
TOOLS = {'pen': BTN_TOOL_PEN, 'eraser': BTN_TOOL_RUBBER}
BUS_I2C = 0x18
# (code, minimum, maximum, resolution in units/mm): the same 10" panel as uinput_touch.py, at
# the finer resolution pen digitisers have.
AXES = [(ABS_X, 0, 21700, 100), (ABS_Y, 0, 13560, 100), (ABS_PRESSURE, 0, 4095, 0)]


class Pen(UInputDevice):
    def __init__(self, args):
        super().__init__()
        self.args = args
        for bit in (EV_KEY, EV_ABS):
            self.ioctl(UI_SET_EVBIT, bit)
        for key in (BTN_TOOL_PEN, BTN_TOOL_RUBBER, BTN_TOUCH, BTN_STYLUS):
            self.ioctl(UI_SET_KEYBIT, key)
        self.ioctl(UI_SET_PROPBIT, INPUT_PROP_DIRECT)
        for code, low, high, resolution in AXES:
            self.ioctl(UI_SET_ABSBIT, code)
            # struct uinput_abs_setup: __u16 code, padding, struct input_absinfo (six __s32).
            self.ioctl(UI_ABS_SETUP, struct.pack('<Hxx6i', code, 0, low, high, 0, 0, resolution))
        self.create(BUS_I2C, 0x04f3, 0x2c83, args.name)
        self.commands = 0

    def command(self, line):
        words = line.split()
        try:
            if len(words) == 2 and words[0] in ('prox', 'out') and words[1] in TOOLS:
                if words[0] == 'prox':
                    self.emit(EV_ABS, ABS_X, AXES[0][2] // 2)
                    self.emit(EV_ABS, ABS_Y, AXES[1][2] // 2)
                    self.emit(EV_ABS, ABS_PRESSURE, 0)
                self.emit(EV_KEY, TOOLS[words[1]], 1 if words[0] == 'prox' else 0)
                self.sync()
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
                                        ('name', self.args.name), ('commands', self.commands)])


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--control', required=True)
    parser.add_argument('--status', required=True)
    parser.add_argument('--name', default='orientd-vm pen')
    serve(parser.parse_args(), Pen)


if __name__ == '__main__':
    main()
