#!/usr/bin/python3
"""Reads buffered scans from an IIO device through sysfs and /dev/iio:deviceN (stdlib only).

usage: iio_buffer.py DEVICE COUNT [--timeout S] [--elements A,B] [--expect X,Y,Z] [--clock NAME]
                     [--raw]
DEVICE is the sysfs name (iio:device0). Enables the scan elements --elements names (default
in_accel_x,in_accel_y,in_accel_z) and the timestamp when present, attaches the trigger that
belongs to the device when none is set, enables the buffer, decodes COUNT scans with the layout
given by scan_elements/*_type and *_index (each element aligned to its own size, the scan padded
to its largest element), prints one JSON object per scan, and restores the buffer, scan elements
and trigger as they were. Exit 1 when fewer scans came, or when a check fails: --expect, every
scan has these raw values (one per element, in order); --clock (realtime, monotonic, boottime),
every timestamp was taken on that clock in the last 20 s.
"""

import argparse
import json
import os
import re
import select
import struct
import sys
import time

CLOCKS = {'realtime': time.CLOCK_REALTIME, 'monotonic': time.CLOCK_MONOTONIC,
          'boottime': time.CLOCK_BOOTTIME}
TYPE = re.compile(r'^(le|be):([su])(\d+)/(\d+)(?:X(\d+))?>>(\d+)$')


def read(path):
    with open(path) as f:
        return f.read().strip()


def write(path, value):
    with open(path, 'w') as f:
        f.write(str(value))


def layout(scan_dir, names):
    elements = []
    for name in names:
        m = TYPE.match(read('%s/%s_type' % (scan_dir, name)))
        if not m:
            raise SystemExit('unparsable %s/%s_type' % (scan_dir, name))
        endian, sign, bits, storage, repeat, shift = m.groups()
        elements.append((int(read('%s/%s_index' % (scan_dir, name))), name, endian, sign,
                         int(bits), int(storage) // 8, int(shift), int(repeat or 1)))
    elements.sort()
    offset, placed = 0, []
    # As the kernel lays a scan out (iio_compute_scan_bytes): each element aligned to its whole
    # length (storage bytes times its repeat count, e.g. in_rot_quaternion's X4), the scan
    # padded to the longest element.
    for _, name, endian, sign, bits, size, shift, repeat in elements:
        length = size * repeat
        offset = -(-offset // length) * length
        placed.append((name, offset, endian, sign, bits, size, shift, repeat))
        offset += length
    biggest = max(p[5] * p[7] for p in placed)
    return placed, -(-offset // biggest) * biggest


def decode(scan, placed):
    """Each element's value; a repeated element's is the list of its values."""
    values = {}
    for name, offset, endian, sign, bits, size, shift, repeat in placed:
        items = []
        for i in range(repeat):
            at = offset + i * size
            raw = int.from_bytes(scan[at:at + size], 'little' if endian == 'le' else 'big')
            raw = (raw >> shift) & ((1 << bits) - 1)
            if sign == 's' and raw & (1 << (bits - 1)):
                raw -= 1 << bits
            items.append(raw)
        values[name] = items[0] if repeat == 1 else items
    return values


def check(values, args):
    """What is wrong with one decoded scan, given --expect and --clock."""
    problems = []
    if args.expect:
        # A repeated element's values are written A:B:C:D.
        want = [[int(x) for x in v.split(':')] if ':' in v else int(v)
                for v in args.expect.split(',')]
        got = [values.get(name) for name in args.elements.split(',')]
        if got != want:
            problems.append('scan %s, expected %s' % (got, want))
    if args.clock:
        now = time.clock_gettime_ns(CLOCKS[args.clock])
        stamp = values.get('in_timestamp')
        if stamp is None or not now - 20e9 < stamp <= now:
            problems.append('timestamp %s is not %s time of the last 20 s (now %d)'
                            % (stamp, args.clock, now))
    return problems


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('device')
    parser.add_argument('count', type=int)
    parser.add_argument('--timeout', type=float, default=10)
    parser.add_argument('--elements', default='in_accel_x,in_accel_y,in_accel_z',
                        help='the scan elements to enable and check, comma-separated')
    parser.add_argument('--expect', help='X,Y,Z: the raw values every scan must have')
    parser.add_argument('--clock', choices=sorted(CLOCKS), help='the clock of the timestamps')
    parser.add_argument('--raw', action='store_true',
                        help="also print each scan's bytes (hex) as \"raw\"")
    args = parser.parse_args()
    sysfs = '/sys/bus/iio/devices/' + args.device
    scan_dir = sysfs + '/scan_elements'
    wanted = set(args.elements.split(',')) | {'in_timestamp'}
    names = sorted(f[:-3] for f in os.listdir(scan_dir) if f.endswith('_en') and f[:-3] in wanted)
    saved = {n: read('%s/%s_en' % (scan_dir, n)) for n in names}
    saved_trigger = read(sysfs + '/trigger/current_trigger')
    saved_length = read(sysfs + '/buffer/length')
    if not saved_trigger:
        # The trigger that belongs to this device: its name ends with -devN for iio:deviceN.
        number = args.device.split('device')[-1]
        for t in sorted(os.listdir('/sys/bus/iio/devices')):
            if t.startswith('trigger') and read('/sys/bus/iio/devices/%s/name' % t).endswith('-dev' + number):
                write(sysfs + '/trigger/current_trigger', read('/sys/bus/iio/devices/%s/name' % t))
    for n in names:
        write('%s/%s_en' % (scan_dir, n), 1)
    placed, scan_size = layout(scan_dir, names)
    print(json.dumps({'layout': [p[:2] for p in placed], 'scan_bytes': scan_size,
                      'trigger': read(sysfs + '/trigger/current_trigger')}), flush=True)
    write(sysfs + '/buffer/length', 16)
    got, started, problems = 0, time.monotonic(), []
    fd = os.open('/dev/' + args.device, os.O_RDONLY | os.O_NONBLOCK)
    try:
        write(sysfs + '/buffer/enable', 1)
        pending = b''
        while got < args.count:
            left = args.timeout - (time.monotonic() - started)
            if left <= 0:
                break
            ready, _, _ = select.select([fd], [], [], left)
            if not ready:
                continue
            try:
                pending += os.read(fd, scan_size * 16)
            except BlockingIOError:
                continue
            while len(pending) >= scan_size and got < args.count:
                scan, pending = pending[:scan_size], pending[scan_size:]
                got += 1
                values = decode(scan, placed)
                if args.raw:
                    values['raw'] = scan.hex()
                print(json.dumps(values), flush=True)
                problems += check(values, args)
    finally:
        write(sysfs + '/buffer/enable', 0)
        os.close(fd)
        for n, v in saved.items():
            write('%s/%s_en' % (scan_dir, n), v)
        write(sysfs + '/buffer/length', saved_length)
        write(sysfs + '/trigger/current_trigger', saved_trigger or '\n')  # no name: detach
    print(json.dumps({'scans': got, 'wanted': args.count,
                      'seconds': round(time.monotonic() - started, 3), 'problems': problems}),
          flush=True)
    sys.exit(0 if got == args.count and not problems else 1)


if __name__ == '__main__':
    main()
