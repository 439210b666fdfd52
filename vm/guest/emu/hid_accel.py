#!/usr/bin/python3
"""A HID sensor-hub sensor for the test VM, made through /dev/uhid (stdlib only).

The kernel sees a HID device whose report descriptor holds one sensor collection on the Sensors
usage page. hid-sensor-hub binds to it and creates a platform device HID-SENSOR-2000NN, which the
matching IIO driver turns into an IIO device with raw, scale, offset and sampling_frequency
attributes, scan elements, a trigger and /dev/iio:deviceN. --kind picks the sensor:
  accel  Accelerometer 3D (0x200073): hid-sensor-accel-3d, IIO name "accel_3d" (the default)
  als    Ambient Light (0x200041), field Illuminance: hid-sensor-als, IIO name "als"
         (in_illuminance_raw and in_intensity_both_raw, in tenths of lux: scale 0.1)
  prox   Proximity (0x200011), field Human Presence: hid-sensor-prox, IIO name "prox"
  magn   Compass 3D (0x200083), fields Magnetic Flux X/Y/Z and Compensated Magnetic North:
         hid-sensor-magn-3d, IIO name "magn_3d" (in_magn_{x,y,z}_raw in milligauss and
         in_rot_from_north_magnetic_tilt_comp_raw in degrees)
  gyro   Gyrometer 3D (0x200076), fields Angular Velocity X/Y/Z in hundredths of a degree per
         second: hid-sensor-gyro-3d, IIO name "gyro_3d" (in_anglvel_{x,y,z}_raw, in_anglvel_scale
         0.000174532 rad/s per count: the driver's default unit is degrees/s)
  rotation
         Device Orientation (0x20008A), field Orientation Quaternion: four signed 16-bit values
         in the HID order x, y, z, w, in units of 0.0001 (unit exponent -4): hid-sensor-rotation,
         IIO name "dev_rotation" (in_rot_quaternion_raw "x y z w ", in_rot_scale 0.0001; scan
         element in_rot_quaternion, le:s16/32X4>>0)

Behaves like a real sensor: it answers the driver's GET_REPORT/SET_REPORT requests for the
property (feature) report and for polled reads of the input report, and streams input reports at
the report interval the driver set, but only while the driver has the device open and has
switched it to full power with event reporting on. So "no client claims" shows up here as no
input reports sent.

The change sensitivity in the feature report (HID Sensor Usages: the Data Field's Change
Sensitivity Absolute modifier, "the amount by which the field must change before the sensor
reports"; hid-sensor-accel-3d's in_accel_hysteresis, in the fields' unit and exponent) is honoured
as a hub does: with it above 0, an input report (periodic or on a change) is sent only when some
field differs from the last report sent by at least the sensitivity; the first report after the
sensor starts streaming is always sent. Reports held back are counted (suppressed).

Control: one command per line written to the --control FIFO:
  vector X Y Z      (accel) the acceleration the sensor measures, in m/s^2, in the sensor's own frame
  orient NAME       (accel) gravity as seen by a device held in orientation NAME (normal, left-up,
                    bottom-up, right-up, face-up, face-down), in the display frame; turned into the
                    sensor's frame with the inverse of --mount-matrix, the matrix the system is
                    told (hwdb) the sensor is mounted with
  lux L             (als) the illuminance, in lux
  presence N        (prox) the Human Presence field: 0 nothing near, 1 (or a larger level) near
  heading DEG       (magn) the tilt-compensated heading from magnetic north, in whole degrees
  field X Y Z       (magn) the magnetic flux density on the three axes, in gauss
  rate X Y Z        (gyro) the angular velocity about the sensor's axes, in rad/s
  quaternion W X Y Z
                    (rotation) the device's rotation (w first, as orientd writes it; the report
                    carries x, y, z, w); normalised before it is sent
  unplug            destroy the HID device (UHID_DESTROY), as if the sensor hub went away
  plug [timestamps|plain]
                    create it again (with or without the Timestamp field in its input reports;
                    default: as before)
  quit              destroy the device and exit
State and counters are written to --status as KEY=VALUE lines after every change (atomically):
present, opened, opens (how many times the driver opened the device: each power-up), streaming,
power_state, reporting_state, interval_ms, sensitivity (raw counts), reports_sent, suppressed,
polled_reads, feature_gets, feature_sets,
commands (number of commands handled), vector, raw (the input fields' values, comma-separated),
changed_at (guest CLOCK_MONOTONIC seconds of the
last physical change), creates, timestamps.

With --timestamps (or "plug timestamps") the input report also carries a 64-bit Timestamp field
(HID usage 0x200529, microseconds of the hub's clock, which follows the host's CLOCK_BOOTTIME as
Intel ISH hubs' does); hid-sensor-accel-3d then stamps the IIO scans with it (converted to
nanoseconds) instead of the clock current_timestamp_clock selects.
"""

import argparse
import math
import os
import select
import signal
import struct
import sys
import time

# linux/uhid.h: event types and sizes (sizeof(struct uhid_event) is 4380 on x86_64, checked
# with gcc against the kernel header).
UHID_DESTROY, UHID_START, UHID_STOP, UHID_OPEN, UHID_CLOSE, UHID_OUTPUT = 1, 2, 3, 4, 5, 6
UHID_GET_REPORT, UHID_GET_REPORT_REPLY, UHID_CREATE2, UHID_INPUT2 = 9, 10, 11, 12
UHID_SET_REPORT, UHID_SET_REPORT_REPLY = 13, 14
UHID_EVENT_SIZE = 4380
UHID_FEATURE_REPORT, UHID_OUTPUT_REPORT, UHID_INPUT_REPORT = 0, 1, 2
BUS_USB = 0x03
EIO = 5

# HID Usage Tables, Sensors page (0x20).
SENSORS_PAGE = 0x20
ACCELEROMETER_3D, AMBIENT_LIGHT, PROXIMITY, COMPASS_3D = 0x73, 0x41, 0x11, 0x83
GYROMETER_3D, DEVICE_ORIENTATION = 0x76, 0x8A
ANGULAR_VELOCITY, ANGVEL_X, ANGVEL_Y, ANGVEL_Z = 0x0456, 0x0457, 0x0458, 0x0459
ORIENT_QUATERNION = 0x0483  # Data Field: Orientation Quaternion (x, y, z, w)
SENSOR_STATE, SENSOR_EVENT = 0x0201, 0x0202
STATE_SELECTORS, EVENT_SELECTORS = 0x0800, 0x0810  # Unknown, Ready, ... / Unknown, ..., Data Updated
CONNECTION_TYPE, CONNECTION_SELECTORS = 0x0309, 0x0830  # integrated, attached, external
REPORTING_STATE, REPORTING_SELECTORS = 0x0316, 0x0840  # no events, all events, threshold, +wake
POWER_STATE, POWER_SELECTORS = 0x0319, 0x0850  # undefined, D0 full power, D1, D2, D3, D4 off
REPORT_INTERVAL = 0x030E
ACCELERATION, CHANGE_SENSITIVITY_ABS = 0x0452, 0x1000
ACCEL_X, ACCEL_Y, ACCEL_Z = 0x0453, 0x0454, 0x0455
TIMESTAMP = 0x0529  # Data Field: Timestamp (HID_USAGE_SENSOR_TIME_TIMESTAMP)
LIGHT, ILLUMINANCE = 0x04D0, 0x04D1  # Data Field: Light / Illuminance (HID_USAGE_SENSOR_LIGHT_ILLUM)
PRESENCE, HUMAN_PRESENCE = 0x04B0, 0x04B1  # Data Field: Presence / Human Presence
ORIENTATION, COMP_MAGN_NORTH = 0x0470, 0x0475  # Data Field: Orientation / Compensated Magnetic North
MAGN_FLUX_X, MAGN_FLUX_Y, MAGN_FLUX_Z = 0x0485, 0x0486, 0x0487


class Kind:
    """One sensor type: its collection usage, the data usage whose change sensitivity is the
    feature property the drivers look for, and its input fields (usage, signed, unit exponent,
    and optionally the counts per unit of the value commands set, before the exponent)."""

    def __init__(self, usage, sensitivity, fields, default_name, array=1, bits=32):
        self.usage, self.sensitivity, self.fields = usage, sensitivity, fields
        self.default_name = default_name
        # Values per field (the quaternion is one field of four) and their size in bits.
        self.array, self.bits = array, bits

    @property
    def count(self):
        """Raw values in the input report."""
        return len(self.fields) * self.array


KINDS = {
    'accel': Kind(ACCELEROMETER_3D, ACCELERATION,
                  [(ACCEL_X, True, -3), (ACCEL_Y, True, -3), (ACCEL_Z, True, -3)],
                  'orientd-vm HID sensor hub accelerometer'),
    # Illuminance in tenths of lux: hid-sensor-als then reports in_illuminance_scale 0.1.
    'als': Kind(AMBIENT_LIGHT, LIGHT, [(ILLUMINANCE, False, -1)], 'orientd-vm HID sensor hub light'),
    'prox': Kind(PROXIMITY, PRESENCE, [(HUMAN_PRESENCE, False, 0)],
                 'orientd-vm HID sensor hub proximity'),
    # Fields without a HID unit: the driver takes the flux as milligauss (in_magn_scale 0.001)
    # and has no conversion for the heading usages in Linux 6.1 (in_rot_scale 1 whatever the
    # unit exponent says), so exponent 0 for all of them, with the flux counted in milligauss.
    'magn': Kind(COMPASS_3D, ORIENTATION,
                 [(MAGN_FLUX_X, True, 0, 1000), (MAGN_FLUX_Y, True, 0, 1000),
                  (MAGN_FLUX_Z, True, 0, 1000), (COMP_MAGN_NORTH, False, 0)],
                 'orientd-vm HID sensor hub compass'),
    # Hundredths of a degree per second: hid-sensor-gyro-3d's unit without a HID unit item is
    # degrees/s (scale 0.017453293 x 10^exponent rad/s per count).
    'gyro': Kind(GYROMETER_3D, ANGULAR_VELOCITY,
                 [(ANGVEL_X, True, -2), (ANGVEL_Y, True, -2), (ANGVEL_Z, True, -2)],
                 'orientd-vm HID sensor hub gyroscope'),
    # One field of four signed 16-bit values, as Intel's ISH firmware sends it (the driver
    # widens them to s32); unit exponent -4, so in_rot_scale is 0.0001.
    'rotation': Kind(DEVICE_ORIENTATION, ORIENTATION, [(ORIENT_QUATERNION, True, -4)],
                     'orientd-vm HID sensor hub device rotation', array=4, bits=16),
}

FEATURE_ID, INPUT_ID = 1, 2
UNIT_EXPONENT = -3  # raw 1000 is 1 g: the driver's scale for "no unit" is 9.80665 x 10^exponent
STANDARD_GRAVITY = 9.80665
# Selector values as the drivers write them (seen in the SET_REPORTs): the position of the
# selector in the field's usage list, which starts with the property's own usage, so the first
# selector is 1. Reporting: 1 no events, 2 all events, 5 all events with wake; power: 2 is D0
# (full power), 6 is D4 (off).
REPORTING_NONE, REPORTING_ALL_EVENTS = 1, {2, 5}
POWER_D0, POWER_OFF = 2, 6
SENSOR_READY, EVENT_DATA_UPDATED = 2, 4


class Descriptor:
    """Builds a HID report descriptor from short items (HID 1.11, section 6.2.2)."""

    def __init__(self):
        self.data = bytearray()

    def item(self, tag, kind, value, size=None):
        if size is None:
            size = 0 if value == 0 else 1 if -128 <= value <= 255 else 2 if -32768 <= value <= 65535 else 4
        code = {0: 0, 1: 1, 2: 2, 4: 3}[size]
        self.data.append((tag << 4) | (kind << 2) | code)
        if size:
            self.data += (value & ((1 << (8 * size)) - 1)).to_bytes(size, 'little')
        return self

    # Main items (kind 0), global items (kind 1), local items (kind 2).
    def input(self, flags=0x02): return self.item(0x8, 0, flags, 1)
    def feature(self, flags=0x02): return self.item(0xB, 0, flags, 1)
    def collection(self, kind): return self.item(0xA, 0, kind, 1)
    def end_collection(self): return self.item(0xC, 0, 0)
    def usage_page(self, page): return self.item(0x0, 1, page)
    def logical(self, lo, hi, size): return self.item(0x1, 1, lo, size).item(0x2, 1, hi, size)
    def unit_exponent(self, e): return self.item(0x5, 1, e & 0xF, 1)
    def report_size(self, bits): return self.item(0x7, 1, bits, 1)
    def report_id(self, rid): return self.item(0x8, 1, rid, 1)
    def report_count(self, n): return self.item(0x9, 1, n, 1)
    def usage(self, u): return self.item(0x0, 2, u, 2)

    def selector(self, prop, first, count, main):
        """A named-array property: one byte holding the index of one of `count` selectors."""
        self.usage(prop).logical(0, count - 1, 1).report_size(8).report_count(1)
        self.collection(0x02)  # Logical
        for i in range(count):
            self.usage(first + i)
        main(0x00)  # Data, Array, Absolute
        return self.end_collection()

    def value(self, usage, bits, main, signed=False, exponent=0, count=1):
        lo, hi = (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if signed else (0, (1 << (bits - 1)) - 1)
        hi = min(hi, 0x7FFFFFFF)  # logical items hold at most 32 bits; a 64-bit field stays wider
        self.usage(usage).logical(lo, hi, 4 if bits >= 32 else 2)
        self.report_size(bits).report_count(count).unit_exponent(exponent)
        return main(0x02)  # Data, Variable, Absolute


def report_descriptor(kind, timestamps=False):
    d = Descriptor()
    d.usage_page(SENSORS_PAGE).item(0x0, 2, kind.usage, 1).collection(0x00)  # Physical
    # Feature report: the properties hid-sensor-hub and hid-sensor-accel-3d look up.
    d.report_id(FEATURE_ID)
    d.selector(CONNECTION_TYPE, CONNECTION_SELECTORS, 3, d.feature)
    d.selector(REPORTING_STATE, REPORTING_SELECTORS, 6, d.feature)
    d.selector(POWER_STATE, POWER_SELECTORS, 6, d.feature)
    d.selector(SENSOR_STATE, STATE_SELECTORS, 7, d.feature)
    d.value(REPORT_INTERVAL, 32, d.feature)
    d.value(kind.sensitivity | CHANGE_SENSITIVITY_ABS, 16, d.feature, exponent=kind.fields[0][2])
    # Input report: state, event and the sensor's fields (for the accelerometer the three axes).
    d.report_id(INPUT_ID)
    d.selector(SENSOR_STATE, STATE_SELECTORS, 7, d.input)
    d.selector(SENSOR_EVENT, EVENT_SELECTORS, 6, d.input)
    for usage, signed, exponent, *_ in kind.fields:
        d.value(usage, kind.bits, d.input, signed=signed, exponent=exponent, count=kind.array)
    if timestamps:
        # The hub's clock in microseconds (no unit item: seconds, exponent -6), which
        # hid-sensor-accel-3d stamps the scan with instead of the kernel's clock.
        d.value(TIMESTAMP, 64, d.input, exponent=-6)
    d.end_collection()
    return bytes(d.data)


FEATURE_FORMAT = '<BBBBBIH'  # id, connection, reporting, power, state, interval ms, sensitivity
INPUT_HEADER = '<BBB'  # id, state, event; then one 32-bit value per field
TIMESTAMP_FORMAT = '<q'  # appended with --timestamps: the hub's clock in microseconds

# Gravity in the display frame for each orientation (Linux IIO convention, as systemd's
# 60-sensor.hwdb and iio-sensor-proxy use it): upright "normal" reads (0, -g, 0).
ORIENTATIONS = {
    'normal': (0, -1, 0), 'bottom-up': (0, 1, 0), 'left-up': (1, 0, 0), 'right-up': (-1, 0, 0),
    'face-up': (0, 0, -1), 'face-down': (0, 0, 1),
}


def parse_matrix(text):
    rows = [[float(v) for v in row.split(',')] for row in text.split(';')]
    if len(rows) != 3 or any(len(r) != 3 for r in rows):
        raise ValueError('mount matrix needs 3 rows of 3 values: %r' % text)
    return rows


def inverse(m):
    (a, b, c), (d, e, f), (g, h, i) = m
    det = a * (e * i - f * h) - b * (d * i - f * g) + c * (d * h - e * g)
    if abs(det) < 1e-9:
        raise ValueError('mount matrix is singular')
    adj = [[e * i - f * h, c * h - b * i, b * f - c * e],
           [f * g - d * i, a * i - c * g, c * d - a * f],
           [d * h - e * g, b * g - a * h, a * e - b * d]]
    return [[v / det for v in row] for row in adj]


class Sensor:
    def __init__(self, args):
        self.args = args
        self.kind = KINDS[args.kind]
        # The input fields' raw values; for the accelerometer they follow self.vector.
        self.physical = [0.0] * self.kind.count
        self.values = [0] * self.kind.count
        if args.kind == 'rotation':
            self.set_quaternion((1.0, 0.0, 0.0, 0.0), log=False)
        self.unmount = inverse(parse_matrix(args.mount_matrix))
        self.logf = open(args.log, 'a', buffering=1) if args.log else sys.stderr
        self.fd = None
        self.counters = dict(reports_sent=0, suppressed=0, polled_reads=0, feature_gets=0,
                             feature_sets=0, commands=0, creates=0, opens=0)
        # The fields' raw values in the last input report sent (None: report the next one).
        self.last_sent = None
        self.timestamps = args.timestamps
        self.opened = False
        self.vector = (0.0, -STANDARD_GRAVITY, 0.0)
        self.changed_at = time.monotonic()
        # connection integrated, no events, power off (D4), ready, 100 ms, sensitivity 0
        self.feature = [FEATURE_ID, 1, REPORTING_NONE, POWER_OFF, SENSOR_READY, args.interval_ms, 0]
        self.next_report = None
        self.dirty = True

    def log(self, text):
        self.logf.write('%.3f %s\n' % (time.monotonic(), text))

    # ---- uhid
    def send(self, kind, payload=b''):
        event = struct.pack('<I', kind) + payload
        os.write(self.fd, event + bytes(UHID_EVENT_SIZE - len(event)))

    def plug(self, timestamps=None):
        if self.fd is not None:
            return
        if timestamps is not None:
            self.timestamps = timestamps
        self.fd = os.open('/dev/uhid', os.O_RDWR | os.O_CLOEXEC)
        rdesc = report_descriptor(self.kind, self.timestamps)
        name = self.args.name or self.kind.default_name
        self.send(UHID_CREATE2, struct.pack('<128s64s64sHHIIII', name.encode(),
                                            b'orientd-vm/uhid', b'', len(rdesc), BUS_USB,
                                            0x1d6b, self.args.product, 1, 0) + rdesc)
        self.counters['creates'] += 1
        self.log('plugged: CREATE2 with a %d-byte report descriptor %s' % (len(rdesc), rdesc.hex()))
        self.dirty = True

    def unplug(self):
        if self.fd is None:
            return
        self.send(UHID_DESTROY)
        os.close(self.fd)
        self.fd, self.opened, self.next_report = None, False, None
        self.log('unplugged: DESTROY')
        self.dirty = True

    @property
    def streaming(self):
        power, reporting = self.feature[3], self.feature[2]
        return self.opened and power == POWER_D0 and reporting in REPORTING_ALL_EVENTS

    def raw(self):
        if self.args.kind != 'accel':
            return tuple(self.values)
        scale = STANDARD_GRAVITY * 10 ** UNIT_EXPONENT
        return tuple(int(round(v / scale)) for v in self.vector)

    def input_report(self):
        report = struct.pack(INPUT_HEADER, INPUT_ID, SENSOR_READY, EVENT_DATA_UPDATED)
        if self.kind.array > 1:
            for value in self.raw():
                report += struct.pack('<h' if self.kind.bits == 16 else '<i', value)
        else:
            for (_, signed, *_), value in zip(self.kind.fields, self.raw()):
                report += struct.pack('<i' if signed else '<I', value)
        if self.timestamps:
            report += struct.pack(TIMESTAMP_FORMAT, self.hub_microseconds())
        return report

    @staticmethod
    def hub_microseconds():
        # Intel's ISH driver keeps the hub's clock in step with the host's CLOCK_BOOTTIME
        # (it sends it to the firmware), so its timestamps are boot time in microseconds.
        return int(time.clock_gettime(time.CLOCK_BOOTTIME) * 1e6)

    def due(self):
        """Whether a report is due by the change sensitivity: some field moved by at least it
        since the last report sent (always with sensitivity 0 or no report sent yet)."""
        sensitivity = self.feature[6]
        if sensitivity == 0 or self.last_sent is None:
            return True
        return any(abs(a - b) >= sensitivity for a, b in zip(self.raw(), self.last_sent))

    def report_if_due(self):
        if self.due():
            self.send_input()
        else:
            self.counters['suppressed'] += 1
            self.dirty = True

    def send_input(self):
        self.last_sent = self.raw()
        report = self.input_report()
        self.send(UHID_INPUT2, struct.pack('<H', len(report)) + report)
        self.counters['reports_sent'] += 1
        self.dirty = True

    def handle_kernel(self):
        event = os.read(self.fd, UHID_EVENT_SIZE)
        kind = struct.unpack_from('<I', event)[0]
        if kind == UHID_GET_REPORT:
            rid, rnum, rtype = struct.unpack_from('<IBB', event, 4)
            if rtype == UHID_FEATURE_REPORT and rnum == FEATURE_ID:
                data, err = struct.pack(FEATURE_FORMAT, *self.feature), 0
                self.counters['feature_gets'] += 1
            elif rtype == UHID_INPUT_REPORT and rnum == INPUT_ID:
                data, err = self.input_report(), 0
                self.counters['polled_reads'] += 1
            else:
                data, err = b'', EIO
            self.send(UHID_GET_REPORT_REPLY, struct.pack('<IHH', rid, err, len(data)) + data)
            self.log('GET_REPORT type %d id %d -> %s' % (rtype, rnum, data.hex() or 'EIO'))
        elif kind == UHID_SET_REPORT:
            rid, rnum, rtype, size = struct.unpack_from('<IBBH', event, 4)
            data = event[12:12 + size]
            err = EIO
            if rtype == UHID_FEATURE_REPORT and rnum == FEATURE_ID and size == struct.calcsize(FEATURE_FORMAT):
                was_streaming = self.streaming
                self.feature = list(struct.unpack(FEATURE_FORMAT, data))
                self.counters['feature_sets'] += 1
                err = 0
                if self.streaming and not was_streaming:
                    self.next_report = time.monotonic()
                    self.last_sent = None
            self.send(UHID_SET_REPORT_REPLY, struct.pack('<IH', rid, err))
            self.log('SET_REPORT type %d id %d %s -> reporting %d power %d interval %d ms '
                     'sensitivity %d%s'
                     % (rtype, rnum, data.hex(), self.feature[2], self.feature[3], self.feature[5],
                        self.feature[6], '' if err == 0 else ' (refused)'))
        elif kind in (UHID_OPEN, UHID_CLOSE):
            self.opened = kind == UHID_OPEN
            self.counters['opens'] += self.opened
            self.next_report = time.monotonic() if self.streaming else None
            self.last_sent = None
            self.log('OPEN' if self.opened else 'CLOSE')
        else:
            self.log('event %d' % kind)
        self.dirty = True

    # ---- control
    def command(self, line):
        words = line.split()
        if not words:
            return True
        name, rest = words[0], words[1:]
        kind = self.args.kind
        try:
            if kind == 'accel' and name == 'vector' and len(rest) == 3:
                self.set_vector(tuple(float(v) for v in rest))
            elif kind == 'als' and name == 'lux' and len(rest) == 1:
                self.set_values([float(rest[0])])
            elif kind == 'prox' and name == 'presence' and len(rest) == 1 and rest[0].isdigit():
                self.set_values([int(rest[0])])
            elif kind == 'magn' and name == 'heading' and len(rest) == 1:
                self.set_values(self.physical[:3] + [float(rest[0]) % 360])
            elif kind == 'magn' and name == 'field' and len(rest) == 3:
                self.set_values([float(v) for v in rest] + self.physical[3:])
            elif kind == 'gyro' and name == 'rate' and len(rest) == 3:
                # rad/s to hundredths of a degree per second.
                self.set_values([float(v) * 180 / math.pi for v in rest])
            elif kind == 'rotation' and name == 'quaternion' and len(rest) == 4:
                self.set_quaternion(tuple(float(v) for v in rest))
            elif kind == 'accel' and name == 'orient' and len(rest) == 1 and rest[0] in ORIENTATIONS:
                g = [STANDARD_GRAVITY * v for v in ORIENTATIONS[rest[0]]]
                self.set_vector(tuple(sum(self.unmount[r][c] * g[c] for c in range(3)) for r in range(3)))
            elif name == 'unplug' and not rest:
                self.unplug()
            elif name == 'plug' and rest in ([], ['timestamps'], ['plain']):
                self.plug(None if not rest else rest[0] == 'timestamps')
            elif name == 'quit':
                return False
            else:
                self.log('unknown command %r' % line)
        finally:
            self.counters['commands'] += 1
            self.dirty = True
        return True

    def set_vector(self, vector):
        self.vector = vector
        self.log('vector %.3f %.3f %.3f (raw %d %d %d)' % (vector + self.raw()))
        self.changed()

    def set_values(self, values):
        """The fields' physical values, turned into raw counts with each field's exponent."""
        self.physical = values
        fields = [f for f in self.kind.fields for _ in range(self.kind.array)]
        self.values = [int(round(v * (field[3] if len(field) > 3 else 1) / 10 ** field[2]))
                       for v, field in zip(values, fields)]
        self.log('values %s (raw %s)' % (' '.join('%g' % v for v in values),
                                          ' '.join(str(v) for v in self.values)))
        self.changed()

    def set_quaternion(self, wxyz, log=True):
        """The rotation (w, x, y, z), normalised, sent in the HID order x, y, z, w."""
        norm = math.sqrt(sum(v * v for v in wxyz)) or 1.0
        w, x, y, z = (v / norm for v in wxyz)
        if log:
            self.set_values([x, y, z, w])
        else:
            self.physical = [x, y, z, w]
            self.values = [int(round(v / 10 ** self.kind.fields[0][2])) for v in self.physical]

    def changed(self):
        self.changed_at = time.monotonic()
        # A real sensor reports a change right away, not at its next tick.
        if self.streaming:
            self.report_if_due()
            self.next_report = time.monotonic() + self.interval()

    def interval(self):
        ms = self.feature[5] or self.args.interval_ms
        return min(max(ms, 5), 1000) / 1000.0

    def write_status(self):
        fields = dict(self.counters, present=int(self.fd is not None), opened=int(self.opened),
                      streaming=int(self.streaming), reporting_state=self.feature[2],
                      power_state=self.feature[3], interval_ms=self.feature[5],
                      sensitivity=self.feature[6],
                      timestamps=int(self.timestamps),
                      vector='%.4f,%.4f,%.4f' % self.vector,
                      raw=','.join(str(v) for v in self.raw()), changed_at='%.6f' % self.changed_at)
        tmp = self.args.status + '.tmp'
        with open(tmp, 'w') as f:
            f.write(''.join('%s=%s\n' % kv for kv in sorted(fields.items())))
        os.rename(tmp, self.args.status)
        self.dirty = False

    def run(self):
        # O_RDWR keeps the FIFO open, so writers come and go without an end of file here.
        control = os.open(self.args.control, os.O_RDWR | os.O_NONBLOCK)
        pending = b''
        self.plug()
        running = True
        while running:
            now = time.monotonic()
            if self.streaming and self.next_report is not None and now >= self.next_report:
                self.report_if_due()
                self.next_report = max(self.next_report + self.interval(), now)
            if self.dirty:
                self.write_status()
            timeout = max(0.0, self.next_report - time.monotonic()) if (
                self.streaming and self.next_report is not None) else 1.0
            fds = [control] + ([self.fd] if self.fd is not None else [])
            try:
                ready, _, _ = select.select(fds, [], [], timeout)
            except InterruptedError:
                continue
            if self.fd is not None and self.fd in ready:
                self.handle_kernel()
            if control in ready:
                pending += os.read(control, 4096)
                while b'\n' in pending and running:
                    line, pending = pending.split(b'\n', 1)
                    self.log('command: %s' % line.decode(errors='replace'))
                    running = self.command(line.decode(errors='replace'))
        self.unplug()
        self.write_status()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--control', required=True, help='FIFO to read commands from')
    parser.add_argument('--status', required=True, help='KEY=VALUE state file, rewritten on change')
    parser.add_argument('--log', help='event log (default stderr)')
    parser.add_argument('--kind', choices=sorted(KINDS), default='accel', help='the sensor type')
    parser.add_argument('--name', help='the HID device name (default: one naming the kind)')
    parser.add_argument('--product', type=lambda s: int(s, 0), default=0x0a77,
                        help='USB product id (a second hub, e.g. the base sensor, takes another)')
    parser.add_argument('--mount-matrix', default='1,0,0;0,1,0;0,0,1',
                        help='the matrix hwdb gives the system for this sensor ("a,b,c;d,e,f;g,h,i")')
    parser.add_argument('--interval-ms', type=int, default=100, help='initial report interval')
    parser.add_argument('--timestamps', action='store_true',
                        help="input reports carry the hub's own clock (HID usage Timestamp, us)")
    args = parser.parse_args()
    if not os.path.exists(args.control):
        os.mkfifo(args.control)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    device = Sensor(args)
    try:
        device.run()
    finally:
        device.unplug()


if __name__ == '__main__':
    main()
