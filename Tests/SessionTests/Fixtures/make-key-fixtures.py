#!/usr/bin/env python3
"""Writes the umockdev fixtures for the volume-key shutter tests (SessionTests).

No uinput on the build machine, so nothing could be recorded with umockdev-record; these are
written from the formats instead: the .umockdev file (sysfs attributes and udev properties,
as umockdev-record prints them), the .ioctl file (the evdev ioctls libevdev_new_from_fd asks,
answered with the buffer sizes libevdev 1.13 uses, which umockdev matches exactly), and the
.events file in evemu's format ("E: <seconds> <type hex> <code hex> <value>"), which
umockdev-run replays into the device from the time it starts (events before the program opens
the device wait in the device's queue).

  volume-keys.*   a "gpio-keys" device with only KEY_VOLUMEDOWN and KEY_VOLUMEUP (as many
                  phones and tablets have): presses of volume up (with an auto-repeat), then
                  volume down. No uinput copy is needed to grab it.
  keyboard.*      an "AT Translated Set 2 keyboard" with the volume keys and also KEY_POWER
                  and letters: grabbing it needs a uinput copy for the other keys.

Run it from this folder: python3 make-key-fixtures.py
"""

EV_SYN, EV_KEY, EV_MSC = 0, 1, 4
KEY_A, KEY_Q, KEY_POWER, KEY_VOLUMEDOWN, KEY_VOLUMEUP = 30, 16, 116, 114, 115


def hexpad(data, size):
    return (data + bytes(size - len(data))).hex().upper()


def bits(codes, size):
    b = bytearray(size)
    for c in codes:
        b[c // 8] |= 1 << (c % 8)
    return b.hex().upper()


def kernel_bitmap(codes):
    """The sysfs capabilities/key format: 64-bit words, most significant first, as hex."""
    words = [0] * 12
    for c in codes:
        words[c // 64] |= 1 << (c % 64)
    while len(words) > 1 and words[-1] == 0:
        words.pop()
    return " ".join("%x" % w for w in reversed(words))


def ioctl_file(name, types, keys):
    name_bytes = name.encode() + b"\0"
    lines = [
        "EVIOCGVERSION 0 01000100",
        "EVIOCGID 0 1100010001000001",
        "EVIOCGNAME(0) %d %s" % (len(name_bytes), hexpad(name_bytes, 255)),
        "EVIOCGPROP(0) 8 %s" % hexpad(b"", 8),
        "EVIOCGBIT(0) 8 %s" % bits(types, 8),
        "EVIOCGBIT(1) 96 %s" % bits(keys, 96),
    ]
    # REL, ABS, LED, SW, MSC (MSC_SCAN when the device has EV_MSC), FF, SND.
    for kind, size in [(2, 8), (3, 8), (0x11, 8), (5, 8), (4, 8), (0x15, 16), (0x12, 8)]:
        payload = bits([4], size) if kind == 4 and EV_MSC in types else hexpad(b"", size)
        lines.append("EVIOCGBIT(%d) %d %s" % (kind, size, payload))
    lines += [
        "EVIOCGKEY(0) 96 %s" % hexpad(b"", 96),
        "EVIOCGLED(0) 8 %s" % hexpad(b"", 8),
        "EVIOCGSW(0) 8 %s" % hexpad(b"", 8),
    ]
    return "\n".join(lines) + "\n"


def umockdev_file(node, sysfs, name, phys, driver, types, keys):
    number = int(node.replace("event", ""))
    ev = sum(1 << t for t in types)
    return f"""P: {sysfs}/{node}
N: input/{node}
E: DEVNAME=/dev/input/{node}
E: ID_INPUT=1
E: ID_INPUT_KEY=1
E: MAJOR=13
E: MINOR={64 + number}
E: SUBSYSTEM=input
A: dev=13:{64 + number}
L: device=../../{sysfs.rsplit('/', 1)[1]}

P: {sysfs}
E: EV={ev:x}
E: ID_INPUT=1
E: ID_INPUT_KEY=1
E: KEY={kernel_bitmap(keys)}
E: NAME="{name}"
E: PHYS="{phys}"
E: PRODUCT=19/1/1/100
E: PROP=0
E: SUBSYSTEM=input
A: capabilities/ev={ev:x}
A: capabilities/key={kernel_bitmap(keys)}
A: name={name}
A: phys={phys}
A: properties=0
A: uniq=

P: {sysfs.rsplit('/input/', 1)[0]}
E: DRIVER={driver}
E: SUBSYSTEM=platform
"""


def event(t, kind, code, value):
    return "E: %.6f %04x %04x %d\n" % (t, kind, code, value)


def press(t, code, scan=None, repeat=False):
    out = ""
    if scan is not None:
        out += event(t, EV_MSC, 4, scan)
    out += event(t, EV_KEY, code, 1) + event(t, EV_SYN, 0, 0)
    if repeat:
        out += event(t + 0.25, EV_KEY, code, 2) + event(t + 0.25, EV_SYN, 0, 0)
    return out + event(t + 0.3, EV_KEY, code, 0) + event(t + 0.3, EV_SYN, 0, 0)


volume_keys = [KEY_VOLUMEDOWN, KEY_VOLUMEUP]
with open("volume-keys.umockdev", "w") as f:
    f.write(umockdev_file("event3", "/devices/platform/gpio-keys/input/input3", "gpio-keys",
                          "gpio-keys/input0", "gpio-keys", [EV_SYN, EV_KEY], volume_keys))
with open("volume-keys.ioctl", "w") as f:
    f.write(ioctl_file("gpio-keys", [EV_SYN, EV_KEY], volume_keys))
with open("volume-keys.events", "w") as f:
    f.write(press(1.0, KEY_VOLUMEUP, repeat=True) + press(2.0, KEY_VOLUMEDOWN))

keyboard_keys = [KEY_Q, KEY_A, KEY_VOLUMEDOWN, KEY_VOLUMEUP, KEY_POWER]
keyboard = "AT Translated Set 2 keyboard"
with open("keyboard.umockdev", "w") as f:
    f.write(umockdev_file("event2", "/devices/platform/i8042/serio0/input/input2", keyboard,
                          "isa0060/serio0/input0", "atkbd", [EV_SYN, EV_KEY, EV_MSC],
                          keyboard_keys))
with open("keyboard.ioctl", "w") as f:
    f.write(ioctl_file(keyboard, [EV_SYN, EV_KEY, EV_MSC], keyboard_keys))
with open("keyboard.events", "w") as f:
    f.write(press(1.0, KEY_VOLUMEUP, scan=0xB0) + press(1.5, KEY_A, scan=0x1E))
