#!/usr/bin/python3
"""A multitouch touchscreen for the test VM, made through /dev/uinput (stdlib only).

INPUT_PROP_DIRECT, BTN_TOUCH, ABS_X/Y and the ABS_MT_* slots, as an I2C-HID panel has: udev's
input_id builtin tags it ID_INPUT_TOUCHSCREEN=1 and libinput (inside sway) takes it as a touch
device. It only has to exist for the mapping test; it sends no events. It stays until SIGTERM.
--status gets KEY=VALUE lines: node (/dev/input/eventN), sysname (inputN), name.
"""

import argparse
import fcntl
import os
import signal
import struct
import sys
import time

# linux/input-event-codes.h, linux/uinput.h (_IOW numbers: dir 1 << 30, size << 16, 'U' << 8, nr).
EV_SYN, EV_KEY, EV_ABS = 0, 1, 3
BTN_TOUCH = 0x14a
ABS_X, ABS_Y, ABS_MT_SLOT, ABS_MT_POSITION_X, ABS_MT_POSITION_Y, ABS_MT_TRACKING_ID = (
    0x00, 0x01, 0x2f, 0x35, 0x36, 0x39)
INPUT_PROP_DIRECT = 0x01
UI_SET_EVBIT, UI_SET_KEYBIT, UI_SET_ABSBIT, UI_SET_PROPBIT = (
    0x40045564, 0x40045565, 0x40045567, 0x4004556E)
UI_DEV_SETUP, UI_ABS_SETUP = 0x405C5503, 0x401C5504
UI_DEV_CREATE, UI_DEV_DESTROY = 0x5501, 0x5502
UI_GET_SYSNAME_64 = 0x8040552C
BUS_I2C = 0x18
# (code, minimum, maximum, resolution in units/mm): a 10" panel, 4096 x 2560 units.
AXES = [(ABS_X, 0, 4095, 16), (ABS_Y, 0, 2559, 16), (ABS_MT_SLOT, 0, 9, 0),
        (ABS_MT_POSITION_X, 0, 4095, 16), (ABS_MT_POSITION_Y, 0, 2559, 16),
        (ABS_MT_TRACKING_ID, 0, 65535, 0)]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--status', required=True)
    parser.add_argument('--name', default='orientd-vm touchscreen')
    args = parser.parse_args()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    fd = os.open('/dev/uinput', os.O_WRONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    for bit in (EV_SYN, EV_KEY, EV_ABS):
        fcntl.ioctl(fd, UI_SET_EVBIT, bit)
    fcntl.ioctl(fd, UI_SET_KEYBIT, BTN_TOUCH)
    fcntl.ioctl(fd, UI_SET_PROPBIT, INPUT_PROP_DIRECT)
    for code, low, high, resolution in AXES:
        fcntl.ioctl(fd, UI_SET_ABSBIT, code)
        # struct uinput_abs_setup: __u16 code, (2 bytes padding), struct input_absinfo (value,
        # minimum, maximum, fuzz, flat, resolution: six __s32).
        fcntl.ioctl(fd, UI_ABS_SETUP, struct.pack('<Hxx6i', code, 0, low, high, 0, 0, resolution))
    fcntl.ioctl(fd, UI_DEV_SETUP,
                struct.pack('<HHHH80sI', BUS_I2C, 0x04f3, 0x2c82, 1, args.name.encode(), 0))
    fcntl.ioctl(fd, UI_DEV_CREATE)
    buf = bytearray(64)
    fcntl.ioctl(fd, UI_GET_SYSNAME_64, buf)
    sysname = bytes(buf).split(b'\0')[0].decode()
    base = '/sys/devices/virtual/input/' + sysname
    node = None
    deadline = time.monotonic() + 10
    while node is None and time.monotonic() < deadline:
        events = [e for e in os.listdir(base) if e.startswith('event')] if os.path.isdir(base) else []
        if events and os.path.exists('/dev/input/' + events[0]):
            node = '/dev/input/' + events[0]
        else:
            time.sleep(0.02)
    if node is None:
        raise SystemExit('no event node for %s after 10 s' % sysname)
    with open(args.status + '.tmp', 'w') as f:
        f.write('node=%s\nsysname=%s\nname=%s\n' % (node, sysname, args.name))
    os.rename(args.status + '.tmp', args.status)
    try:
        while True:
            signal.pause()
    finally:
        fcntl.ioctl(fd, UI_DEV_DESTROY)
        os.close(fd)


if __name__ == '__main__':
    main()
