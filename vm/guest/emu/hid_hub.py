"""The HID sensor hub emulator behind emu/hid_accel.py (see its docstring for what it does and
its commands). A module of its own so that its bytecode is compiled once, on the host
(vm/run.sh runs compileall), instead of at every start of the emulator under TCG."""

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
CUSTOM = 0xE1  # Other: Custom (HID_USAGE_SENSOR_TYPE_OTHER_CUSTOM; hid-sensor-custom's 2000e1)
SENSOR_STATE, SENSOR_EVENT = 0x0201, 0x0202
STATE_SELECTORS, EVENT_SELECTORS = 0x0800, 0x0810  # Unknown, Ready, ... / Unknown, ..., Data Updated
CONNECTION_TYPE, CONNECTION_SELECTORS = 0x0309, 0x0830  # integrated, attached, external
REPORTING_STATE, REPORTING_SELECTORS = 0x0316, 0x0840  # no events, all events, threshold, +wake
POWER_STATE, POWER_SELECTORS = 0x0319, 0x0850  # undefined, D0 full power, D1, D2, D3, D4 off
REPORT_INTERVAL = 0x030E
MANUFACTURER, SERIAL_NUMBER = 0x0305, 0x0307  # Property: Sensor Manufacturer / Serial Number
ACCELERATION, CHANGE_SENSITIVITY_ABS = 0x0452, 0x1000
ACCEL_X, ACCEL_Y, ACCEL_Z = 0x0453, 0x0454, 0x0455
TIMESTAMP = 0x0529  # Data Field: Timestamp (HID_USAGE_SENSOR_TIME_TIMESTAMP)
LIGHT, ILLUMINANCE = 0x04D0, 0x04D1  # Data Field: Light / Illuminance (HID_USAGE_SENSOR_LIGHT_ILLUM)
PRESENCE, HUMAN_PRESENCE = 0x04B0, 0x04B1  # Data Field: Presence / Human Presence
ORIENTATION, COMP_MAGN_NORTH = 0x0470, 0x0475  # Data Field: Orientation / Compensated Magnetic North
MAGN_FLUX_X, MAGN_FLUX_Y, MAGN_FLUX_Z = 0x0485, 0x0486, 0x0487
# Data Field: Custom Value N is 0x200543 + N (HID_USAGE_SENSOR_DATA_FIELD_CUSTOM_VALUE(N)).
CUSTOM_VALUE_1, CUSTOM_VALUE_2, CUSTOM_VALUE_3 = 0x0544, 0x0545, 0x0546
# What hid-sensor-custom recognises as Intel's hinge sensor (known_sensor_luid in Linux 6.1):
# the Manufacturer property starts with INTEL and the Serial Number is "LUID:" and 16 characters.
HINGE_STRINGS = [(MANUFACTURER, 16, 'INTEL'), (SERIAL_NUMBER, 32, 'LUID:020B000000000000')]


class Kind:
    """One sensor type: its collection usage, the data usage whose change sensitivity is the
    feature property the drivers look for, its input fields (usage, signed, unit exponent, and
    optionally the counts per unit of the value commands set, before the exponent) and constant
    string properties of its feature report (usage, characters, text)."""

    def __init__(self, usage, sensitivity, fields, default_name, strings=()):
        self.usage, self.sensitivity, self.fields = usage, sensitivity, fields
        self.default_name, self.strings = default_name, list(strings)


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
    # Angles in tenths of a degree without a HID unit: the driver's scale for the hinge
    # (unit_conversion in hid-sensor-attributes.c: no unit is degrees) is then
    # 0.017453293 x 10^-1 radians per count. The change sensitivity is Custom Value 1's.
    'hinge': Kind(CUSTOM, CUSTOM_VALUE_1,
                  [(CUSTOM_VALUE_1, True, -1), (CUSTOM_VALUE_2, True, -1),
                   (CUSTOM_VALUE_3, True, -1)],
                  'orientd-vm HID sensor hub hinge', HINGE_STRINGS),
}

UNIT_EXPONENT = -3  # raw 1000 is 1 g: the driver's scale for "no unit" is 9.80665 x 10^exponent
STANDARD_GRAVITY = 9.80665
# Selector values as the drivers write them (seen in the SET_REPORTs): the position of the
# selector in the field's usage list, which starts with the property's own usage, so the first
# selector is 1. Reporting: 1 no events, 2 all events, 5 all events with wake; power: 2 is D0
# (full power), 6 is D4 (off).
REPORTING_NONE, REPORTING_ALL_EVENTS = 1, {2, 5}
POWER_D0, POWER_OFF = 2, 6
SENSOR_READY, EVENT_DATA_UPDATED = 2, 4
RESUME_FAULTS = ('none', 'silent', 'forget')
SUSPEND_COUNT = '/sys/power/suspend_stats/success'


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

    def value(self, usage, bits, main, signed=False, exponent=0):
        lo, hi = (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if signed else (0, (1 << (bits - 1)) - 1)
        hi = min(hi, 0x7FFFFFFF)  # logical items hold at most 32 bits; a 64-bit field stays wider
        self.usage(usage).logical(lo, hi, 4 if bits >= 32 else 2)
        self.report_size(bits).report_count(1).unit_exponent(exponent)
        return main(0x02)  # Data, Variable, Absolute


def collection(d, kind, feature_id, input_id, timestamps):
    """One sensor's physical collection with its feature and input reports."""
    d.usage_page(SENSORS_PAGE).item(0x0, 2, kind.usage, 1).collection(0x00)  # Physical
    # Feature report: the properties hid-sensor-hub and the IIO drivers look up.
    d.report_id(feature_id)
    d.selector(CONNECTION_TYPE, CONNECTION_SELECTORS, 3, d.feature)
    d.selector(REPORTING_STATE, REPORTING_SELECTORS, 6, d.feature)
    d.selector(POWER_STATE, POWER_SELECTORS, 6, d.feature)
    d.selector(SENSOR_STATE, STATE_SELECTORS, 7, d.feature)
    d.value(REPORT_INTERVAL, 32, d.feature)
    d.value(kind.sensitivity | CHANGE_SENSITIVITY_ABS, 16, d.feature, exponent=kind.fields[0][2])
    for usage, count, _ in kind.strings:
        # A string property: one 16-bit character per value (hid-sensor-custom reads them so).
        d.usage(usage).logical(0, 0xFFFF, 4).report_size(16).report_count(count).unit_exponent(0)
        d.feature(0x02)
    # Input report: state, event and the sensor's fields (for the accelerometer the three axes).
    d.report_id(input_id)
    d.selector(SENSOR_STATE, STATE_SELECTORS, 7, d.input)
    d.selector(SENSOR_EVENT, EVENT_SELECTORS, 6, d.input)
    for usage, signed, exponent, *_ in kind.fields:
        d.value(usage, 32, d.input, signed=signed, exponent=exponent)
    if timestamps:
        # The hub's clock in microseconds (no unit item: seconds, exponent -6), which the
        # drivers stamp the scan with instead of the kernel's clock.
        d.value(TIMESTAMP, 64, d.input, exponent=-6)
    d.end_collection()


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
    """One sensor of the hub: its collection's reports, its physical state and its counters."""

    def __init__(self, hub, name, kind_name, number):
        self.hub, self.name, self.kind_name = hub, name, kind_name
        self.kind = KINDS[kind_name]
        args = hub.args
        # One-sensor hubs keep the report IDs they always had (feature 1, input 2).
        self.feature_id, self.input_id = 2 * number + 1, 2 * number + 2
        self.format = FEATURE_FORMAT + ''.join('%dH' % count for _, count, _ in self.kind.strings)
        self.strings = []
        for _, count, text in self.kind.strings:
            self.strings += [ord(c) for c in text] + [0] * (count - len(text))
        # The input fields' raw values; for the accelerometer they follow self.vector.
        self.physical = [0.0] * len(self.kind.fields)
        self.values = [0] * len(self.kind.fields)
        self.unmount = inverse(parse_matrix(args.mount_matrix))
        self.counters = dict(reports_sent=0, suppressed=0, polled_reads=0, feature_gets=0,
                             feature_sets=0, faults=0)
        # The fields' raw values in the last input report sent (None: report the next one).
        self.last_sent = None
        self.vector = (0.0, -STANDARD_GRAVITY, 0.0)
        self.changed_at = time.monotonic()
        self.reset()

    def reset(self):
        """The sensor's power-on state: connection integrated, no events, power off (D4),
        ready, the default interval, sensitivity 0."""
        self.feature = [self.feature_id, 1, REPORTING_NONE, POWER_OFF, SENSOR_READY,
                        self.hub.args.interval_ms, 0]
        self.next_report, self.last_sent = None, None
        # Resume faults: armed by a system suspend, applied at the next power-on.
        self.fault_armed, self.silent = False, False

    def log(self, text):
        self.hub.log(text if len(self.hub.sensors) == 1 else '%s: %s' % (self.name, text))

    @property
    def streaming(self):
        power, reporting = self.feature[3], self.feature[2]
        return self.hub.opened and power == POWER_D0 and reporting in REPORTING_ALL_EVENTS

    def raw(self):
        if self.kind_name != 'accel':
            return tuple(self.values)
        scale = STANDARD_GRAVITY * 10 ** UNIT_EXPONENT
        return tuple(int(round(v / scale)) for v in self.vector)

    def feature_report(self):
        return struct.pack(self.format, *self.feature, *self.strings)

    def input_report(self):
        report = struct.pack(INPUT_HEADER, self.input_id, SENSOR_READY, EVENT_DATA_UPDATED)
        for (_, signed, *_), value in zip(self.kind.fields, self.raw()):
            report += struct.pack('<i' if signed else '<I', value)
        if self.hub.timestamps:
            report += struct.pack(TIMESTAMP_FORMAT, self.hub.hub_microseconds())
        return report

    def due(self):
        """Whether a report is due by the change sensitivity: some field moved by at least it
        since the last report sent (always with sensitivity 0 or no report sent yet)."""
        sensitivity = self.feature[6]
        if sensitivity == 0 or self.last_sent is None:
            return True
        return any(abs(a - b) >= sensitivity for a, b in zip(self.raw(), self.last_sent))

    def report_if_due(self):
        if self.silent:
            return
        if self.due():
            self.send_input()
        else:
            self.counters['suppressed'] += 1
            self.hub.dirty = True

    def send_input(self):
        self.last_sent = self.raw()
        report = self.input_report()
        self.hub.send(UHID_INPUT2, struct.pack('<H', len(report)) + report)
        self.counters['reports_sent'] += 1
        self.hub.dirty = True

    def get_report(self, rtype):
        """The reply to GET_REPORT of this sensor's feature or input report."""
        if rtype == UHID_FEATURE_REPORT:
            self.counters['feature_gets'] += 1
            return self.feature_report()
        self.counters['polled_reads'] += 1
        return self.input_report()

    def set_feature(self, data):
        """SET_REPORT of the feature report; False when it has not the report's size."""
        if len(data) != struct.calcsize(self.format):
            return False
        was_streaming = self.streaming
        # The strings are the hub's own: what the driver writes back of them is ignored.
        self.feature = list(struct.unpack(self.format, data))[:len(self.feature)]
        self.counters['feature_sets'] += 1
        if self.silent:
            self.silent = False
            self.log('configured again: reporting again after the resume fault')
        if self.streaming and not was_streaming:
            self.powered_on()
        return True

    def powered_on(self):
        self.next_report = time.monotonic()
        self.last_sent = None
        if not self.fault_armed:
            return
        self.fault_armed = False
        fault = self.hub.resume_fault
        if fault == 'none':
            return
        self.counters['faults'] += 1
        if fault == 'silent':
            self.silent = True
            self.log('resume fault: switched on after a resume, silent until configured again')
        elif fault == 'forget':
            self.feature[5], self.feature[6] = self.hub.args.interval_ms, 0
            self.log('resume fault: switched on after a resume with the default interval %d ms '
                     'and sensitivity 0' % self.feature[5])

    # ---- physical changes
    def command(self, name, rest):
        kind = self.kind_name
        if kind == 'accel' and name == 'vector' and len(rest) == 3:
            self.set_vector(tuple(float(v) for v in rest))
        elif kind == 'accel' and name == 'orient' and len(rest) == 1 and rest[0] in ORIENTATIONS:
            g = [STANDARD_GRAVITY * v for v in ORIENTATIONS[rest[0]]]
            self.set_vector(tuple(sum(self.unmount[r][c] * g[c] for c in range(3)) for r in range(3)))
        elif kind == 'als' and name == 'lux' and len(rest) == 1:
            self.set_values([float(rest[0])])
        elif kind == 'prox' and name == 'presence' and len(rest) == 1 and rest[0].isdigit():
            self.set_values([int(rest[0])])
        elif kind == 'magn' and name == 'heading' and len(rest) == 1:
            self.set_values(self.physical[:3] + [float(rest[0]) % 360])
        elif kind == 'magn' and name == 'field' and len(rest) == 3:
            self.set_values([float(v) for v in rest] + self.physical[3:])
        elif kind == 'hinge' and name == 'angles' and len(rest) == 3:
            self.set_values([float(v) for v in rest])
        else:
            return False
        return True

    def fold(self, degrees):
        """This sensor's part in a fold of the convertible to DEGREES; False when it has none."""
        a = math.radians(degrees)
        if self.kind_name == 'accel' and self.name == 'lid':
            self.set_vector((STANDARD_GRAVITY * math.sin(a), 0.0, STANDARD_GRAVITY * math.cos(a)))
        elif self.kind_name == 'accel' and self.name == 'base':
            self.set_vector((0.0, 0.0, -STANDARD_GRAVITY))
        elif self.kind_name == 'hinge':
            self.set_values([degrees, degrees, 0.0])
        else:
            return False
        return True

    def set_vector(self, vector):
        self.vector = vector
        self.log('vector %.3f %.3f %.3f (raw %d %d %d)' % (vector + self.raw()))
        self.changed()

    def set_values(self, values):
        """The fields' physical values, turned into raw counts with each field's exponent."""
        self.physical = values
        self.values = [int(round(v * (field[3] if len(field) > 3 else 1) / 10 ** field[2]))
                       for v, field in zip(values, self.kind.fields)]
        self.log('values %s (raw %s)' % (' '.join('%g' % v for v in values),
                                          ' '.join(str(v) for v in self.values)))
        self.changed()

    def changed(self):
        self.changed_at = time.monotonic()
        # A real sensor reports a change right away, not at its next tick.
        if self.streaming:
            self.report_if_due()
            self.next_report = time.monotonic() + self.interval()
        self.hub.dirty = True

    def interval(self):
        ms = self.feature[5] or self.hub.args.interval_ms
        return min(max(ms, 5), 1000) / 1000.0

    def status(self):
        return dict(self.counters, streaming=int(self.streaming), reporting_state=self.feature[2],
                    power_state=self.feature[3], interval_ms=self.feature[5],
                    sensitivity=self.feature[6], silent=int(self.silent),
                    vector='%.4f,%.4f,%.4f' % self.vector,
                    raw=','.join(str(v) for v in self.raw()), changed_at='%.6f' % self.changed_at)


class Hub:
    """The HID device: the uhid node, open/close, and the sensors' collections."""

    def __init__(self, args):
        self.args = args
        self.logf = open(args.log, 'a', buffering=1) if args.log else sys.stderr
        self.sensors = []
        if args.sensors:
            for number, entry in enumerate(args.sensors.split(',')):
                name, _, kind = entry.partition('=')
                if kind not in KINDS or not name or name in [s.name for s in self.sensors]:
                    raise SystemExit('--sensors: %r is not NAME=KIND with a new NAME and KIND one '
                                     'of %s' % (entry, ', '.join(sorted(KINDS))))
                self.sensors.append(Sensor(self, name, kind, number))
        else:
            self.sensors.append(Sensor(self, args.kind, args.kind, 0))
        self.by_name = {s.name: s for s in self.sensors}
        self.fd = None
        self.counters = dict(commands=0, creates=0, opens=0, suspends=0)
        self.timestamps = args.timestamps
        self.opened = False
        self.resume_fault = args.resume_fault
        self.suspend_count = self.read_suspend_count()
        self.dirty = True

    def log(self, text):
        self.logf.write('%.3f %s\n' % (time.monotonic(), text))

    # ---- uhid
    def send(self, kind, payload=b''):
        event = struct.pack('<I', kind) + payload
        os.write(self.fd, event + bytes(UHID_EVENT_SIZE - len(event)))

    def descriptor(self):
        d = Descriptor()
        for s in self.sensors:
            collection(d, s.kind, s.feature_id, s.input_id, self.timestamps)
        return bytes(d.data)

    def plug(self, timestamps=None):
        if self.fd is not None:
            return
        if timestamps is not None:
            self.timestamps = timestamps
        if self.counters['creates']:
            # Plugged in again: a new device, at its power-on defaults (not the settings the
            # last driver left, which a daemon would otherwise find and trust).
            for s in self.sensors:
                s.reset()
        self.fd = os.open('/dev/uhid', os.O_RDWR | os.O_CLOEXEC)
        rdesc = self.descriptor()
        if len(self.sensors) == 1:
            name = self.args.name or self.sensors[0].kind.default_name
        else:
            name = self.args.name or 'orientd-vm HID sensor hub (%s)' % ', '.join(
                s.name for s in self.sensors)
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
        self.fd, self.opened = None, False
        for s in self.sensors:
            s.next_report = None
        self.log('unplugged: DESTROY')
        self.dirty = True

    @staticmethod
    def hub_microseconds():
        # Intel's ISH driver keeps the hub's clock in step with the host's CLOCK_BOOTTIME
        # (it sends it to the firmware), so its timestamps are boot time in microseconds.
        return int(time.clock_gettime(time.CLOCK_BOOTTIME) * 1e6)

    def sensor_for(self, report_id):
        for s in self.sensors:
            if report_id in (s.feature_id, s.input_id):
                return s
        return None

    def handle_kernel(self):
        event = os.read(self.fd, UHID_EVENT_SIZE)
        kind = struct.unpack_from('<I', event)[0]
        if kind == UHID_GET_REPORT:
            rid, rnum, rtype = struct.unpack_from('<IBB', event, 4)
            s = self.sensor_for(rnum)
            data, err = b'', EIO
            if s and ((rtype == UHID_FEATURE_REPORT and rnum == s.feature_id) or
                      (rtype == UHID_INPUT_REPORT and rnum == s.input_id)):
                data, err = s.get_report(rtype), 0
            self.send(UHID_GET_REPORT_REPLY, struct.pack('<IHH', rid, err, len(data)) + data)
            self.log('GET_REPORT type %d id %d -> %s' % (rtype, rnum, data.hex() or 'EIO'))
        elif kind == UHID_SET_REPORT:
            rid, rnum, rtype, size = struct.unpack_from('<IBBH', event, 4)
            data = event[12:12 + size]
            s = self.sensor_for(rnum)
            ok = (s is not None and rtype == UHID_FEATURE_REPORT and rnum == s.feature_id and
                  s.set_feature(data))
            self.send(UHID_SET_REPORT_REPLY, struct.pack('<IH', rid, 0 if ok else EIO))
            if s is not None:
                s.log('SET_REPORT type %d id %d %s -> reporting %d power %d interval %d ms '
                      'sensitivity %d%s'
                      % (rtype, rnum, data.hex(), s.feature[2], s.feature[3], s.feature[5],
                         s.feature[6], '' if ok else ' (refused)'))
            else:
                self.log('SET_REPORT type %d id %d %s (refused: no such report)'
                         % (rtype, rnum, data.hex()))
        elif kind in (UHID_OPEN, UHID_CLOSE):
            self.opened = kind == UHID_OPEN
            self.counters['opens'] += self.opened
            for s in self.sensors:
                if self.opened and s.streaming:
                    s.powered_on()
                elif not self.opened:
                    s.next_report, s.last_sent = None, None
            self.log('OPEN' if self.opened else 'CLOSE')
        else:
            self.log('event %d' % kind)
        self.dirty = True

    # ---- system suspend
    @staticmethod
    def read_suspend_count():
        try:
            with open(SUSPEND_COUNT) as f:
                return int(f.read())
        except (OSError, ValueError):
            return 0

    def check_suspend(self):
        """After a system suspend (the kernel's count went up), arm each sensor's resume fault:
        it applies at the sensor's next power-on, which follows the kernel's own requests of the
        suspend and resume that waited in uhid's queue while this process was frozen."""
        count = self.read_suspend_count()
        if count == self.suspend_count:
            return
        self.counters['suspends'] += count - self.suspend_count
        self.suspend_count = count
        self.log('system suspend seen (%d so far)%s' % (
            count, '' if self.resume_fault == 'none' else ': resume fault %s armed' % self.resume_fault))
        for s in self.sensors:
            s.fault_armed = True
        self.dirty = True

    # ---- control
    def command(self, line):
        words = line.split()
        if not words:
            return True
        target = None
        if words[0] in self.by_name and len(words) > 1:
            target, words = self.by_name[words[0]], words[1:]
        name, rest = words[0], words[1:]
        try:
            if target is None and name == 'unplug' and not rest:
                self.unplug()
            elif target is None and name == 'plug' and rest in ([], ['timestamps'], ['plain']):
                self.plug(None if not rest else rest[0] == 'timestamps')
            elif name == 'fold' and len(rest) == 1:
                degrees = float(rest[0])
                moved = [s.name for s in ([target] if target else self.sensors) if s.fold(degrees)]
                if not moved:
                    self.log('fold: no sensor here has a part in a fold (%r)' % line)
            elif target is None and name == 'resume-fault' and rest and rest[0] in RESUME_FAULTS:
                self.resume_fault = rest[0]
                self.log('resume fault: %s' % self.resume_fault)
            elif target is None and name == 'quit':
                return False
            else:
                sensor = target or (self.sensors[0] if len(self.sensors) == 1 else None)
                if sensor is None or not sensor.command(name, rest):
                    self.log('unknown command %r' % line)
        except ValueError:
            self.log('bad value in %r' % line)
        finally:
            self.counters['commands'] += 1
            self.dirty = True
        return True

    def write_status(self):
        fields = dict(self.counters, present=int(self.fd is not None), opened=int(self.opened),
                      timestamps=int(self.timestamps), resume_fault=self.resume_fault)
        if len(self.sensors) == 1:
            fields.update(self.sensors[0].status())
        else:
            for s in self.sensors:
                fields.update(('%s.%s' % (s.name, k), v) for k, v in s.status().items())
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
            for s in self.sensors:
                if s.streaming and s.next_report is not None and now >= s.next_report:
                    s.report_if_due()
                    s.next_report = max(s.next_report + s.interval(), now)
            if self.dirty:
                self.write_status()
            due = [s.next_report for s in self.sensors if s.streaming and s.next_report is not None]
            timeout = max(0.0, min(due) - time.monotonic()) if due else 1.0
            fds = [control] + ([self.fd] if self.fd is not None else [])
            try:
                ready, _, _ = select.select(fds, [], [], timeout)
            except InterruptedError:
                continue
            # Before anything the kernel queued while this process was frozen is handled.
            self.check_suspend()
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


def main(doc):
    parser = argparse.ArgumentParser(description=doc.split('\n\n')[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter,
                                     epilog=doc.split('\n\n', 1)[1])
    parser.add_argument('--control', required=True, help='FIFO to read commands from')
    parser.add_argument('--status', required=True, help='KEY=VALUE state file, rewritten on change')
    parser.add_argument('--log', help='event log (default stderr)')
    parser.add_argument('--kind', choices=sorted(KINDS), default='accel', help='the sensor type')
    parser.add_argument('--sensors', help='several sensors on one hub: NAME=KIND,NAME=KIND,...')
    parser.add_argument('--name', help='the HID device name (default: one naming the kind)')
    parser.add_argument('--product', type=lambda s: int(s, 0), default=0x0a77,
                        help='USB product id (a second hub, e.g. the base sensor, takes another)')
    parser.add_argument('--mount-matrix', default='1,0,0;0,1,0;0,0,1',
                        help='the matrix hwdb gives the system for this sensor ("a,b,c;d,e,f;g,h,i")')
    parser.add_argument('--interval-ms', type=int, default=100, help='initial report interval')
    parser.add_argument('--timestamps', action='store_true',
                        help="input reports carry the hub's own clock (HID usage Timestamp, us)")
    parser.add_argument('--resume-fault', choices=RESUME_FAULTS, default='none',
                        help='how the hub comes back from a system suspend (see above)')
    args = parser.parse_args()
    if not os.path.exists(args.control):
        os.mkfifo(args.control)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    hub = Hub(args)
    try:
        hub.run()
    finally:
        hub.unplug()
