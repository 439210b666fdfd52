"""What the test VM's uinput emulators share (stdlib only): the uinput ioctls, creating the
device and finding its event node, writing events, the --status file and the --control FIFO loop.
"""

import fcntl
import os
import select
import signal
import struct
import sys
import time

# linux/input.h, linux/uinput.h (_IOW/_IO numbers checked with gcc against the headers).
EV_SYN, SYN_REPORT = 0, 0
UI_SET_EVBIT, UI_SET_KEYBIT, UI_SET_ABSBIT = 0x40045564, 0x40045565, 0x40045567
UI_SET_SWBIT, UI_SET_PROPBIT = 0x4004556D, 0x4004556E
UI_DEV_SETUP, UI_ABS_SETUP = 0x405C5503, 0x401C5504  # struct uinput_setup / uinput_abs_setup
UI_DEV_CREATE, UI_DEV_DESTROY = 0x5501, 0x5502
UI_GET_SYSNAME_64 = 0x8040552C  # _IOC(_IOC_READ, 'U', 44, 64)
EVENT = struct.Struct('llHHi')  # struct input_event on 64-bit: timeval, type, code, value


class UInputDevice:
    """A /dev/uinput device: set its bits with ioctl(), then create(); then emit()."""

    def __init__(self):
        self.fd = os.open('/dev/uinput', os.O_WRONLY | os.O_NONBLOCK | os.O_CLOEXEC)
        self.sysname = self.node = None

    def ioctl(self, request, arg):
        fcntl.ioctl(self.fd, request, arg)

    def create(self, bus, vendor, product, name):
        # struct uinput_setup: struct input_id (bustype, vendor, product, version), name[80],
        # ff_effects_max.
        self.ioctl(UI_DEV_SETUP, struct.pack('<HHHH80sI', bus, vendor, product, 1, name.encode(), 0))
        fcntl.ioctl(self.fd, UI_DEV_CREATE)
        buf = bytearray(64)
        fcntl.ioctl(self.fd, UI_GET_SYSNAME_64, buf)
        self.sysname = bytes(buf).split(b'\0')[0].decode()
        self.node = self.find_node()

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

    def sync(self):
        self.emit(EV_SYN, SYN_REPORT, 0)

    def close(self):
        fcntl.ioctl(self.fd, UI_DEV_DESTROY)
        os.close(self.fd)


def write_status(path, fields):
    """Rewrites the KEY=VALUE status file atomically (readers never see half of it)."""
    tmp = path + '.tmp'
    with open(tmp, 'w') as f:
        f.write(''.join('%s=%s\n' % item for item in fields))
    os.rename(tmp, path)


def serve(args, make):
    """Makes the FIFO --control and the device (make(args)), then runs its command(line) for each
    line until it returns False or SIGTERM; the device is destroyed however it ends."""
    if not os.path.exists(args.control):
        os.mkfifo(args.control)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    device = make(args)
    try:
        control = os.open(args.control, os.O_RDWR | os.O_NONBLOCK)
        device.write_status()
        pending, running = b'', True
        while running:
            ready, _, _ = select.select([control], [], [], 1.0)
            if ready:
                pending += os.read(control, 4096)
                while b'\n' in pending and running:
                    line, pending = pending.split(b'\n', 1)
                    running = device.command(line.decode(errors='replace'))
    finally:
        device.close()
