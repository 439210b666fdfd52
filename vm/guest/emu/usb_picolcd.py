#!/usr/bin/python3
"""A laptop panel's backlight for the test VM: a USB PicoLCD made with the kernel's USB gadget
stack (dummy_hcd + configfs + f_hid), stdlib only.

The guest has no display hardware with a backlight, and no kernel driver makes a backlight device
out of nothing. The kernel's hid-picolcd driver registers a real backlight class device (type
raw, 0-255) for a Minibox PicoLCD, a USB HID device (04d8:c002); this program is that device:
the dummy_hcd module gives the guest a virtual USB host and device controller joined by a virtual
cable, configfs describes a USB device with one HID function whose report descriptor has the
reports hid-picolcd needs (key state in; LED state, brightness, LCD command/data out), and
/dev/hidgN delivers every output report the host side's usbhid sends to "the device". So a
write to /sys/class/backlight/*/brightness (by logind's SetBrightness, as gsd-power asks) goes
through the real backlight class, hid-picolcd, usbhid, the USB core and the gadget stack, and
arrives here as report 0x91 with the brightness byte.

usage: usb_picolcd.py --status FILE [--log FILE]
--status gets KEY=VALUE lines (rewritten atomically): hidg (/dev/hidgN), brightness (the last
brightness report's value, -1 before any), brightness_reports (count), reports (all output
reports). --log gets one line per brightness report. SIGTERM detaches the gadget and removes it.
Needs root, the modules dummy_hcd, libcomposite and usb_f_hid, and configfs.
"""

import argparse
import glob
import os
import signal
import subprocess
import sys
import time

GADGET = '/sys/kernel/config/usb_gadget/orientd-picolcd'
# Report IDs from drivers/hid/hid-picolcd.h.
KEY_STATE, LED_STATE, BRIGHTNESS, LCD_CMD, LCD_DATA, LCD_CMD_DATA = (
    0x11, 0x81, 0x91, 0x94, 0x95, 0x96)


def report(report_id, count, usage, main):
    # Report ID, Report Count, Usage (vendor page), Input (0x81) / Output (0x91) Data,Var,Abs.
    return bytes([0x85, report_id, 0x95, count, 0x09, usage, main, 0x02])


DESCRIPTOR = (
    bytes([0x06, 0x00, 0xFF,  # Usage Page (Vendor 0xFF00)
           0x09, 0x01,        # Usage (1)
           0xA1, 0x01,        # Collection (Application)
           0x15, 0x00,        # Logical Minimum 0
           0x26, 0xFF, 0x00,  # Logical Maximum 255
           0x75, 0x08])       # Report Size 8
    + report(KEY_STATE, 2, 0x02, 0x81)
    + report(LED_STATE, 1, 0x03, 0x91)
    + report(BRIGHTNESS, 1, 0x04, 0x91)
    + report(LCD_CMD, 63, 0x05, 0x91)
    + report(LCD_DATA, 63, 0x06, 0x91)
    + report(LCD_CMD_DATA, 63, 0x07, 0x91)
    + bytes([0xC0]))          # End Collection


def write(path, value):
    with open(path, 'wb' if isinstance(value, bytes) else 'w') as f:
        f.write(value)


def write_status(path, fields):
    tmp = path + '.tmp'
    with open(tmp, 'w') as f:
        for key, value in fields.items():
            f.write('%s=%s\n' % (key, value))
    os.rename(tmp, path)


def create():
    if not os.path.isdir('/sys/kernel/config/usb_gadget'):
        if not os.path.ismount('/sys/kernel/config'):
            subprocess.run(['mount', '-t', 'configfs', 'configfs', '/sys/kernel/config'], check=True)
    udcs = os.listdir('/sys/class/udc')
    if not udcs:
        sys.exit('usb_picolcd: no USB device controller (load dummy_hcd)')
    os.makedirs(GADGET + '/strings/0x409')
    write(GADGET + '/idVendor', '0x04d8')
    write(GADGET + '/idProduct', '0xc002')
    write(GADGET + '/bcdUSB', '0x0200')
    write(GADGET + '/bcdDevice', '0x0100')
    write(GADGET + '/strings/0x409/manufacturer', 'orientd VM')
    write(GADGET + '/strings/0x409/product', 'picoLCD 256x64 (emulated backlight)')
    write(GADGET + '/strings/0x409/serialnumber', 'orientd-vm-0001')
    os.makedirs(GADGET + '/configs/c.1')
    write(GADGET + '/configs/c.1/MaxPower', '100')
    function = GADGET + '/functions/hid.usb0'
    os.makedirs(function)
    write(function + '/protocol', '0')
    write(function + '/subclass', '0')
    write(function + '/report_length', '64')
    write(function + '/report_desc', DESCRIPTOR)
    os.symlink(function, GADGET + '/configs/c.1/hid.usb0')
    before = set(glob.glob('/dev/hidg*'))
    write(GADGET + '/UDC', sorted(udcs)[0])
    for _ in range(200):
        major_minor = open(function + '/dev').read().strip() if os.path.exists(function + '/dev') else ''
        nodes = [n for n in glob.glob('/dev/hidg*') if n not in before] or sorted(glob.glob('/dev/hidg*'))
        if major_minor and nodes:
            return nodes[0]
        time.sleep(0.05)
    sys.exit('usb_picolcd: no /dev/hidgN appeared')


def remove():
    if not os.path.isdir(GADGET):
        return
    try:
        write(GADGET + '/UDC', '\n')
    except OSError:
        pass
    for path in (GADGET + '/configs/c.1/hid.usb0',):
        if os.path.islink(path):
            os.unlink(path)
    for path in (GADGET + '/configs/c.1', GADGET + '/functions/hid.usb0',
                 GADGET + '/strings/0x409', GADGET):
        if os.path.isdir(path):
            os.rmdir(path)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--status', required=True)
    parser.add_argument('--log')
    args = parser.parse_args()
    remove()
    node = create()
    log = open(args.log, 'a', buffering=1) if args.log else None
    state = dict(hidg=node, brightness=-1, brightness_reports=0, reports=0)
    write_status(args.status, state)

    def stop(*_):
        remove()
        sys.exit(0)

    signal.signal(signal.SIGTERM, stop)
    fd = os.open(node, os.O_RDONLY)
    while True:
        data = os.read(fd, 64)
        if not data:
            continue
        state['reports'] += 1
        if data[0] == BRIGHTNESS and len(data) >= 2:
            state['brightness'] = data[1]
            state['brightness_reports'] += 1
            if log:
                log.write('%.3f brightness %d\n' % (time.monotonic(), data[1]))
        write_status(args.status, state)


if __name__ == '__main__':
    main()
