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
import sys

from uinput_common import UI_SET_EVBIT, UI_SET_KEYBIT, UI_SET_SWBIT, UInputDevice, serve, write_status

# linux/input-event-codes.h, linux/uinput.h
EV_KEY, EV_REL, EV_SW, SW_TABLET_MODE = 1, 2, 5, 1
REL_X, REL_Y, BTN_LEFT, BTN_RIGHT = 0x00, 0x01, 0x110, 0x111
UI_SET_RELBIT = 0x40045566
KEYS = {'a': 30, 'volumedown': 114, 'volumeup': 115}
BUS_USB = 0x03


def key_code(word):
    return KEYS[word] if word in KEYS else int(word)


class Keyboard(UInputDevice):
    def __init__(self, args):
        super().__init__()
        self.args = args
        self.ioctl(UI_SET_EVBIT, EV_KEY)
        for word in filter(None, args.keys.split(',')):
            self.ioctl(UI_SET_KEYBIT, key_code(word))
        if args.mouse:
            self.ioctl(UI_SET_EVBIT, EV_REL)
            for axis in (REL_X, REL_Y):
                self.ioctl(UI_SET_RELBIT, axis)
            for button in (BTN_LEFT, BTN_RIGHT):
                self.ioctl(UI_SET_KEYBIT, button)
        if args.tablet_switch:
            self.ioctl(UI_SET_EVBIT, EV_SW)
            self.ioctl(UI_SET_SWBIT, SW_TABLET_MODE)
        self.create(args.bus, 0x1d6b, 0x0a78, args.name)
        self.commands = self.presses = 0

    def key(self, code, value):
        self.emit(EV_KEY, code, value)
        self.sync()

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
                self.sync()
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
        write_status(self.args.status, [('node', self.node), ('sysname', self.sysname),
                                        ('name', self.args.name), ('commands', self.commands),
                                        ('presses', self.presses)])


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--control', required=True)
    parser.add_argument('--status', required=True)
    parser.add_argument('--name', default='orientd-vm keyboard')
    parser.add_argument('--keys', default='volumeup,volumedown,a')
    parser.add_argument('--bus', type=lambda s: int(s, 0), default=BUS_USB,
                        help='bus type (0x11, i8042: what libinput takes for a built-in keyboard)')
    parser.add_argument('--mouse', action='store_true',
                        help='also a mouse (REL_X/Y, left and right buttons): a keyboard/mouse combo')
    parser.add_argument('--tablet-switch', action='store_true',
                        help='also an SW_TABLET_MODE switch (command "switch on|off")')
    serve(parser.parse_args(), Keyboard)


if __name__ == '__main__':
    main()
