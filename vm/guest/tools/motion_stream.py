#!/usr/bin/python3
"""A stream client of org.orientd.Motion1 (docs/motion.md, "The stream"), for the VM's tests
and the daemon benchmark.

usage: motion_stream.py [--batch N] [--rate HZ] [--seconds S] [--clients N]
Each client is its own process with its own bus connection: it claims Motion1, opens a stream
with {"rate": HZ, "batch": N}, and reads batches for S seconds. It measures, per record, the
latency from the record's timestamp (CLOCK_MONOTONIC, the kernel's scan time) to the moment its
batch was decoded here, and counts its wakeups (one recv each) and the sequence gaps. One JSON
line per client:
  {"client": 0, "records": 998, "batches": 998, "gaps": 0, "wakeups_per_s": 99.8,
   "latency_ms": {"p50": .., "p95": .., "p99": ..}, "last": {"angular_velocity": [..],
   "rotation": [..], "flags": 11}, "granted": {..}}
Exit status 0 when every client got records without gaps. Needs python3-dbus (dbus-python),
which passes Unix file descriptors.
"""

import argparse
import json
import os
import socket
import struct
import sys
import time

sys.path.append('/usr/lib/python3/dist-packages')
import dbus  # noqa: E402

NAME = 'org.orientd.Orientation1'
PATH = '/org/orientd/Motion1'
IFACE = 'org.orientd.Motion1'


def percentile(values, p):
    if not values:
        return None
    values = sorted(values)
    return values[min(len(values) - 1, int(round(p / 100 * (len(values) - 1))))]


def client(index, args, out):
    bus = dbus.SystemBus()
    motion = dbus.Interface(bus.get_object(NAME, PATH), IFACE)
    motion.Claim(timeout=20)
    fd, granted = motion.OpenStream(
        {'rate': dbus.Double(args.rate), 'batch': dbus.UInt32(args.batch)}, timeout=20)
    sock = socket.socket(fileno=fd.take())
    sock.settimeout(2)
    latencies, records, batches, gaps, last_seq, last = [], 0, 0, 0, None, None
    end = time.monotonic() + args.seconds
    while time.monotonic() < end:
        try:
            packet = sock.recv(65536)
        except socket.timeout:
            continue
        now = time.clock_gettime_ns(time.CLOCK_MONOTONIC)
        if not packet:
            break
        magic, version, header, size, count, _ = struct.unpack_from('<4sHHHHI', packet)
        if magic != b'OMOT' or version != 1:
            raise SystemExit('not a motion batch')
        batches += 1
        for i in range(count):
            t, seq, flags, _, wx, wy, wz, qw, qx, qy, qz = struct.unpack_from(
                '<QIHH3f4f', packet, header + i * size)
            if last_seq is not None and seq != (last_seq + 1) & 0xffffffff:
                gaps += 1
            last_seq = seq
            latencies.append((now - t) / 1e6)
            records += 1
            last = {'angular_velocity': [round(v, 4) for v in (wx, wy, wz)],
                    'rotation': [round(v, 4) for v in (qw, qx, qy, qz)], 'flags': flags}
    sock.close()
    motion.Release(timeout=20)
    out.write(json.dumps({
        'client': index, 'records': records, 'batches': batches, 'gaps': gaps,
        'wakeups_per_s': round(batches / args.seconds, 1),
        'latency_ms': {p: round(percentile(latencies, n), 2) if latencies else None
                       for p, n in (('p50', 50), ('p95', 95), ('p99', 99))},
        'last': last, 'granted': {k: float(v) if isinstance(v, (dbus.Double, float)) else
                                  int(v) if isinstance(v, (int,)) else str(v)
                                  for k, v in granted.items()},
    }, sort_keys=True) + '\n')
    out.flush()
    return records > 0 and gaps == 0


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--batch', type=int, default=1)
    parser.add_argument('--rate', type=float, default=100.0)
    parser.add_argument('--seconds', type=float, default=10.0)
    parser.add_argument('--clients', type=int, default=1)
    args = parser.parse_args()
    children = []
    for index in range(args.clients):
        pid = os.fork()
        if pid == 0:
            ok = client(index, args, sys.stdout)
            os._exit(0 if ok else 1)
        children.append(pid)
    status = 0
    for pid in children:
        _, code = os.waitpid(pid, 0)
        status |= code
    return 1 if status else 0


if __name__ == '__main__':
    sys.exit(main())
