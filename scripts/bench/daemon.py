#!/usr/bin/python3
"""Measures orientd and Debian's iio-sensor-proxy on the same emulated accelerometer.

Run by scripts/bench/daemon.sh (which starts a private dbus-daemon with both bus policies and
builds orientd) under umockdev-wrapper, so that this process owns one umockdev testbed and the
daemons it starts see the emulated device. Each daemon runs in turn, and the same client code
(this script, through net.hadess.SensorProxy, which both serve) measures:

  start     time from spawning the daemon to net.hadess.SensorProxy being owned (median)
  idle      context switches (voluntary + involuntary, summed over every thread's
            /proc/PID/task/TID/status) while nobody claims, scaled to a minute: every wakeup
            is one
  still     the same and CPU time (run time, see cpu) while claimed with the
            device still, per minute (after a settling second)
  latency   time from writing the new values into the emulated sysfs files to receiving the
            PropertiesChanged with the new AccelerometerOrientation, over N changes made at
            random moments (so that the phase against a polling timer is random), every
            --pause-min ... --pause-max seconds ("turning every few seconds")
  cpu       wakeups and CPU time (every thread's run time, /proc/PID/task/TID/schedstat)
            during that turning run, per minute
  memory    VmRSS and RssAnon (/proc/PID/status) and Pss (/proc/PID/smaps_rollup) after the
            claimed run

and then, for ambient light and proximity (each claimed alone, ClaimLight/ClaimProximity, on
the emulated LTR303 and STK3310 of Tests/Fixtures/umockdev/ambient.umockdev, present in the
testbed from the start for every row), the same still and changing measures:

  still     wakeups and CPU per minute while claimed and nothing changes
  latency   from writing in_illuminance_raw (100 <-> 290 counts: 55 <-> 150 lux) or
            in_proximity_raw (0 <-> 256: far <-> near) to the PropertiesChanged with the new
            LightLevel or ProximityNear, --ambient-changes times at random moments
  cpu       wakeups and CPU per minute during those changes
"""
import argparse
import os
import random
import signal
import statistics
import subprocess
import sys
import time

import gi

gi.require_version('UMockdev', '1.0')
from gi.repository import Gio, GLib, UMockdev  # noqa: E402

# The emulated accelerometer of the tests and scripts/demo.sh: an MXC4005 on I2C, polled
# (IIO_SENSOR_PROXY_TYPE tells iio-sensor-proxy so without its udev rules), 1 g = 1000 counts.
FIXTURE = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'Tests',
                       'Fixtures', 'umockdev', 'mxc4005.umockdev')
DEVICE = '/devices/platform/i2c-0/i2c-MXC6655:00/iio:device0'
with open(FIXTURE) as fixture:
    TESTBED = fixture.read()
# The light and proximity sensors (and their I2C parents): the first four records of the
# tests' ambient fixture. Not its compass (Debian's iio-sensor-proxy 3.0, the comparison,
# gives it to the geoclue user only) nor applesmc (a second light sensor, which
# iio-sensor-proxy might pick instead of the IIO one).
AMBIENT_FIXTURE = os.path.join(os.path.dirname(FIXTURE), 'ambient.umockdev')
with open(AMBIENT_FIXTURE) as fixture:
    AMBIENT = '\n\n'.join(fixture.read().split('\n\n')[:4]) + '\n'
LIGHT = '/devices/platform/i2c-1/i2c-LTR303:00/iio:device1'
PROXIMITY = '/devices/platform/i2c-1/i2c-STK3310:00/iio:device2'
# kind: (claim suffix, sysfs device, attribute, the property, (raw, value) of each state)
AMBIENT_KINDS = {
    'light': ('Light', LIGHT, 'in_illuminance_raw', 'LightLevel', [(100, 55.0), (290, 150.0)]),
    'proximity': ('Proximity', PROXIMITY, 'in_proximity_raw', 'ProximityNear',
                  [(0, False), (256, True)]),
}

# Raw counts (1 g = 1000) of a vertical display in each orientation.
RAW = {'normal': (0, -1000, 0), 'left-up': (1000, 0, 0), 'bottom-up': (0, 1000, 0),
       'right-up': (-1000, 0, 0)}
CYCLE = ['left-up', 'bottom-up', 'right-up', 'normal']
NAME = 'net.hadess.SensorProxy'
PATH = '/net/hadess/SensorProxy'


class Bench:
    def __init__(self, args):
        self.args = args
        self.testbed = UMockdev.Testbed.new()
        self.testbed.add_from_string(TESTBED)
        self.testbed.add_from_string(AMBIENT)
        self.ambient = {}  # property -> (value, monotonic time of the change)
        self.root = self.testbed.get_root_dir()
        self.current = RAW['normal']
        self.bus = Gio.DBusConnection.new_for_address_sync(
            os.environ['DBUS_SYSTEM_BUS_ADDRESS'],
            Gio.DBusConnectionFlags.AUTHENTICATION_CLIENT
            | Gio.DBusConnectionFlags.MESSAGE_BUS_CONNECTION, None, None)
        self.owner = None
        self.owner_at = 0.0
        self.orientation = None
        self.changed_at = None
        self.bus.signal_subscribe(
            'org.freedesktop.DBus', 'org.freedesktop.DBus', 'NameOwnerChanged',
            '/org/freedesktop/DBus', NAME, Gio.DBusSignalFlags.NONE, self.name_changed)
        # No sender filter: iio-sensor-proxy 3.0 broadcasts, orientd sends to claimers only.
        self.bus.signal_subscribe(
            None, 'org.freedesktop.DBus.Properties', 'PropertiesChanged', PATH, NAME,
            Gio.DBusSignalFlags.NONE, self.properties_changed)
        self.random = random.Random(args.seed)

    # -- events

    def name_changed(self, _conn, _sender, _path, _iface, _member, params):
        _name, _old, new = params.unpack()
        self.owner = new or None
        self.owner_at = time.monotonic()

    def properties_changed(self, _conn, _sender, _path, _iface, _member, params):
        _iface_name, changed, _invalidated = params.unpack()
        if 'AccelerometerOrientation' in changed:
            self.orientation = changed['AccelerometerOrientation']
            self.changed_at = time.monotonic()
        for name in ('LightLevel', 'ProximityNear'):
            if name in changed:
                self.ambient[name] = (changed[name], time.monotonic())

    def pump(self, until=lambda: False, timeout=10.0):
        """Runs the GLib loop until `until()` holds or `timeout` seconds pass."""
        fired = [False]

        def wake():
            fired[0] = True
            return False
        source = GLib.timeout_add(max(1, int(timeout * 1000)), wake)
        context = GLib.MainContext.default()
        while not until() and not fired[0]:
            context.iteration(True)
        if not fired[0]:
            GLib.source_remove(source)
        return until()

    # -- the emulated sensor

    def write(self, axis, value):
        self.write_attribute(DEVICE, 'in_accel_%s_raw' % axis, value)

    def write_attribute(self, device, attribute, value):
        # In place (same inode), as the kernel changes an attribute.
        fd = os.open('%s/sys%s/%s' % (self.root, device, attribute), os.O_WRONLY | os.O_TRUNC)
        try:
            os.write(fd, b'%d\n' % value)
        finally:
            os.close(fd)

    def turn(self, name):
        new = RAW[name]
        # Axes that become non-zero first: every intermediate reading lies between the two.
        order = [i for i in range(3) if new[i] != 0] + [i for i in range(3) if new[i] == 0]
        for i in order:
            if new[i] != self.current[i]:
                self.write('xyz'[i], new[i])
        self.current = new

    # -- processes

    def spawn(self, argv, log):
        env = dict(os.environ)
        env['UMOCKDEV_DIR'] = self.root
        return subprocess.Popen(argv, env=env, stdin=subprocess.DEVNULL,
                                stdout=subprocess.DEVNULL, stderr=log)

    def start(self, argv, log):
        """Starts a daemon; returns it and the seconds until it owned the name."""
        self.owner = None
        begin = time.monotonic()
        process = self.spawn(argv, log)
        if not self.pump(lambda: self.owner is not None or process.poll() is not None, 20):
            raise SystemExit('%s did not take %s within 20 s' % (argv[0], NAME))
        if process.poll() is not None:
            raise SystemExit('%s exited with %s before taking %s' % (argv[0], process.returncode, NAME))
        return process, self.owner_at - begin

    def stop(self, process):
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        self.pump(lambda: self.owner is None, 5)

    @staticmethod
    def status(pid):
        values = {}
        for line in open('/proc/%d/status' % pid):
            key, _, value = line.partition(':')
            values[key] = value.strip()
        return values

    @staticmethod
    def switches(pid):
        """Context switches per thread (GLib's D-Bus I/O runs in a worker thread, not the
        main one): {tid: count}; subtract two with `since`."""
        counts = {}
        for tid in os.listdir('/proc/%d/task' % pid):
            try:
                s = Bench.status_file('/proc/%d/task/%s/status' % (pid, tid))
            except FileNotFoundError:
                continue
            counts[tid] = int(s['voluntary_ctxt_switches']) + int(s['nonvoluntary_ctxt_switches'])
        return counts

    @staticmethod
    def since(before, after):
        # A thread that exited in between takes its switches along (they are not kept
        # anywhere /proc shows), so this can only undercount.
        return sum(n - before.get(tid, 0) for tid, n in after.items())

    @staticmethod
    def status_file(path):
        values = {}
        for line in open(path):
            key, _, value = line.partition(':')
            values[key] = value.strip()
        return values

    @staticmethod
    def cpu_seconds(pid):
        # Run time in ns from every thread's schedstat: utime + stime in /proc/PID/stat counts
        # whole clock ticks (10 ms), too coarse for a daemon that runs for microseconds a
        # minute. (A thread that exits takes its time along: this can only undercount.)
        total = 0
        for tid in os.listdir('/proc/%d/task' % pid):
            try:
                total += int(open('/proc/%d/task/%s/schedstat' % (pid, tid)).read().split()[0])
            except (FileNotFoundError, ProcessLookupError):
                continue
        return total / 1e9

    @staticmethod
    def pss_kib(pid):
        for line in open('/proc/%d/smaps_rollup' % pid):
            if line.startswith('Pss:'):
                return int(line.split()[1])
        return 0

    def call(self, method):
        self.bus.call_sync(NAME, PATH, NAME, method, None, None, Gio.DBusCallFlags.NONE,
                           10000, None)

    def get(self, name):
        return self.bus.call_sync(
            NAME, PATH, 'org.freedesktop.DBus.Properties', 'Get',
            GLib.Variant('(ss)', (NAME, name)), None, Gio.DBusCallFlags.NONE, 10000,
            None).unpack()[0]

    def measure_ambient(self, label, argv):
        """Light, then proximity, each claimed alone on one daemon run: {kind: result}."""
        log = open(os.path.join(self.args.work, label + '-ambient.log'), 'w')
        print('== %s, light and proximity: %s' % (label, ' '.join(argv)), file=sys.stderr)
        for _suffix, device, attribute, _prop, states in AMBIENT_KINDS.values():
            self.write_attribute(device, attribute, states[0][0])
        process, _ = self.start(argv, log)
        pid = process.pid
        results = {}
        for kind, (suffix, device, attribute, prop, states) in AMBIENT_KINDS.items():
            self.pump(timeout=1.0)
            self.call('Claim' + suffix)
            self.pump(timeout=self.args.settle)
            last = self.get(prop)
            before = self.switches(pid)
            cpu_before = self.cpu_seconds(pid)
            wall_before = time.monotonic()
            self.pump(timeout=self.args.ambient_still)
            still_wall = time.monotonic() - wall_before
            still = self.since(before, self.switches(pid)) * 60.0 / still_wall
            still_cpu = (self.cpu_seconds(pid) - cpu_before) * 60.0 / still_wall * 1000
            n = self.args.ambient_changes
            low, high = self.args.ambient_pause_min, self.args.ambient_pause_max
            pauses = [low + (high - low) * (i + self.random.random()) / n for i in range(n)]
            self.random.shuffle(pauses)
            latencies = []
            missed = 0
            seen = set()
            before = self.switches(pid)
            cpu_before = self.cpu_seconds(pid)
            wall_before = time.monotonic()
            for i in range(n):
                self.pump(timeout=pauses[i])
                raw, _expected = states[(i + 1) % 2]
                self.ambient.pop(prop, None)
                written = time.monotonic()
                self.write_attribute(device, attribute, raw)
                # Any new value counts: iio-sensor-proxy 3.0 may scale differently (it may
                # not apply in_illuminance_offset); the values seen are printed.
                if self.pump(lambda: prop in self.ambient and self.ambient[prop][0] != last, 5):
                    last = self.ambient[prop][0]
                    seen.add(last)
                    latencies.append((self.ambient[prop][1] - written) * 1000)
                else:
                    missed += 1
            wall = time.monotonic() - wall_before
            changing = self.since(before, self.switches(pid)) * 60.0 / wall
            cpu = (self.cpu_seconds(pid) - cpu_before) * 60.0 / wall * 1000
            self.call('Release' + suffix)
            # Back to the first state, so the next run starts from the same values.
            self.write_attribute(device, attribute, states[0][0])
            latencies.sort()
            results[kind] = {
                'median': statistics.median(latencies) if latencies else float('nan'),
                'p95': (latencies[max(0, -(-len(latencies) * 95 // 100) - 1)]
                        if latencies else float('nan')),
                'changes': len(latencies), 'missed': missed, 'still': still,
                'still_cpu': still_cpu, 'changing': changing, 'cpu': cpu,
                'values': sorted(seen),
            }
            print('   %s: latency median %.0f ms, p95 %.0f ms (%d changes, %d missed); still '
                  '%.0f wakeups/min, cpu %.1f ms/min; changing %.0f wakeups/min, cpu %.1f ms/min; '
                  'values %s' % (kind, results[kind]['median'], results[kind]['p95'],
                                 len(latencies), missed, still, still_cpu, changing, cpu,
                                 results[kind]['values']), file=sys.stderr)
        self.stop(process)
        log.close()
        return results

    # -- one daemon

    def measure(self, label, argv):
        log = open(os.path.join(self.args.work, label + '.log'), 'w')
        print('== %s: %s' % (label, ' '.join(argv)), file=sys.stderr)
        self.turn('normal')
        starts = []
        for _ in range(self.args.starts - 1):
            process, seconds = self.start(argv, log)
            starts.append(seconds)
            self.stop(process)
        process, seconds = self.start(argv, log)
        starts.append(seconds)
        pid = process.pid

        # Idle, unclaimed.
        self.pump(timeout=1.0)
        before = self.switches(pid)
        self.pump(timeout=self.args.idle)
        idle = self.since(before, self.switches(pid)) * 60.0 / self.args.idle
        print('   idle: %.1f wakeups/min' % idle, file=sys.stderr)

        # Claimed: orientation changes at random moments.
        self.orientation = None
        self.call('ClaimAccelerometer')
        self.pump(lambda: self.orientation == 'normal', 3)
        # Claimed and still: what a desktop pays while the screen is on and nothing moves.
        self.pump(timeout=self.args.settle)
        before = self.switches(pid)
        cpu_before = self.cpu_seconds(pid)
        wall_before = time.monotonic()
        self.pump(timeout=self.args.still)
        still_wall = time.monotonic() - wall_before
        still = self.since(before, self.switches(pid)) * 60.0 / still_wall
        still_cpu = (self.cpu_seconds(pid) - cpu_before) * 60.0 / still_wall * 1000
        print('   claimed, still: %.0f wakeups/min, cpu %.0f ms/min' % (still, still_cpu),
              file=sys.stderr)
        latencies = []
        switches_before = self.switches(pid)
        missed = 0
        cpu_before = self.cpu_seconds(pid)
        wall_before = time.monotonic()
        # Pauses between changes spread evenly over pause-min ... pause-max (stratified,
        # shuffled): that places the changes at evenly spread phases of a 700 ms polling timer
        # (or of orientd's still-rate timer), so the median does not depend on luck.
        n = self.args.changes
        low, high = self.args.pause_min, self.args.pause_max
        pauses = [low + (high - low) * (i + self.random.random()) / n for i in range(n)]
        self.random.shuffle(pauses)
        for i in range(n):
            self.pump(timeout=pauses[i])
            target = CYCLE[i % 4]
            self.changed_at = None
            written = time.monotonic()
            self.turn(target)
            if self.pump(lambda: self.orientation == target, 5):
                latencies.append((self.changed_at - written) * 1000)
            else:
                missed += 1
        claimed = time.monotonic() - wall_before
        cpu = (self.cpu_seconds(pid) - cpu_before) * 60.0 / claimed * 1000
        turning = self.since(switches_before, self.switches(pid)) * 60.0 / claimed
        status = self.status(pid)
        rss = int(status['VmRSS'].split()[0])
        anon = int(status['RssAnon'].split()[0])
        pss = self.pss_kib(pid)
        if os.environ.get('BENCH_SMAPS_DIR'):
            # Where the resident pages are, per mapping (docs/benchmark.md "Memory").
            with open(os.path.join(os.environ['BENCH_SMAPS_DIR'], label + '.smaps'), 'w') as out:
                out.write(open('/proc/%d/smaps' % pid).read())
        self.call('ReleaseAccelerometer')
        self.stop(process)
        log.close()
        latencies.sort()
        result = {
            'start': statistics.median(starts) * 1000, 'idle': idle,
            'median': statistics.median(latencies) if latencies else float('nan'),
            'p95': latencies[max(0, -(-len(latencies) * 95 // 100) - 1)] if latencies else float('nan'),
            'min': latencies[0] if latencies else float('nan'),
            'max': latencies[-1] if latencies else float('nan'),
            'changes': len(latencies), 'missed': missed, 'cpu': cpu, 'rss': rss / 1024.0,
            'still': still, 'still_cpu': still_cpu, 'turning': turning,
            'anon': anon / 1024.0,
            'pss': pss / 1024.0,
        }
        print('   latency median %.0f ms, p95 %.0f ms (%d changes, %d missed); cpu %.0f ms/min; '
              'rss %.1f MiB' % (result['median'], result['p95'], len(latencies), missed, cpu,
                               result['rss']), file=sys.stderr)
        return result


def print_ambient(o, p):
    """The light and proximity table: orientd and iio-sensor-proxy side by side."""
    rows = [
        ('latency, sysfs change to client: median (ms)', 'median', '%.0f'),
        ('latency: p95 (ms)', 'p95', '%.0f'),
        ('changes seen / missed', None, None),
        ('values seen', 'values', None),
        ('claimed, still: wakeups per minute', 'still', '%.0f'),
        ('claimed, still: CPU time per minute (ms)', 'still_cpu', '%.1f'),
        ('claimed, changing: wakeups per minute', 'changing', '%.0f'),
        ('claimed, changing: CPU time per minute (ms)', 'cpu', '%.1f'),
    ]
    for kind in AMBIENT_KINDS:
        print('%-46s %12s %18s' % (kind, 'orientd', 'iio-sensor-proxy'))
        for title, key, fmt in rows:
            if key is None:
                a = '%d / %d' % (o[kind]['changes'], o[kind]['missed'])
                b = '%d / %d' % (p[kind]['changes'], p[kind]['missed'])
            elif fmt is None:
                a, b = (' / '.join('%g' % v for v in r[kind][key]) for r in (o, p))
            else:
                a, b = fmt % o[kind][key], fmt % p[kind][key]
            print('%-46s %12s %18s' % ('  ' + title, a, b))
    print()
    sys.stdout.flush()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--orientd', required=True)
    parser.add_argument('--iio-sensor-proxy', default='/usr/sbin/iio-sensor-proxy')
    parser.add_argument('--work', required=True)
    parser.add_argument('--changes', type=int, default=30)
    parser.add_argument('--idle', type=float, default=20.0)
    parser.add_argument('--still', type=float, default=30.0,
                        help='seconds claimed and still (scaled to a minute)')
    parser.add_argument('--settle', type=float, default=2.0,
                        help='seconds after claiming before the still window')
    parser.add_argument('--pause-min', type=float, default=1.5)
    parser.add_argument('--pause-max', type=float, default=3.5)
    parser.add_argument('--starts', type=int, default=5)
    parser.add_argument('--seed', type=int, default=1)
    parser.add_argument('--orientd-config', help='run orientd with --config FILE (default: none)')
    parser.add_argument('--ambient-changes', type=int, default=20,
                        help='light and proximity changes per daemon (0: skip them)')
    parser.add_argument('--ambient-still', type=float, default=15.0,
                        help='seconds light/proximity is claimed with nothing changing')
    parser.add_argument('--ambient-pause-min', type=float, default=1.0)
    parser.add_argument('--ambient-pause-max', type=float, default=2.6)
    parser.add_argument('--only-ambient', action='store_true',
                        help='measure light and proximity only (no accelerometer rows)')
    args = parser.parse_args()
    bench = Bench(args)
    orientd_argv = [args.orientd] + (
        ['--config', args.orientd_config] if args.orientd_config else [])
    if args.ambient_changes > 0:
        oa = bench.measure_ambient('orientd', orientd_argv)
        pa = bench.measure_ambient('iio-sensor-proxy', [args.iio_sensor_proxy])
        print_ambient(oa, pa)
    if args.only_ambient:
        return
    o = bench.measure('orientd', orientd_argv)
    p = bench.measure('iio-sensor-proxy', [args.iio_sensor_proxy])

    rows = [
        ('latency, sysfs change to client: median (ms)', 'median', '%.0f'),
        ('latency: p95 (ms)', 'p95', '%.0f'),
        ('latency: min / max (ms)', None, None),
        ('changes seen / missed', None, None),
        ('claimed, still: wakeups per minute', 'still', '%.0f'),
        ('claimed, still: CPU time per minute (ms)', 'still_cpu', '%.0f'),
        ('claimed, turning: wakeups per minute', 'turning', '%.0f'),
        ('claimed, turning: CPU time per minute (ms)', 'cpu', '%.0f'),
        ('wakeups per idle minute, unclaimed', 'idle', '%.1f'),
        ('resident memory VmRSS (MiB)', 'rss', '%.1f'),
        ('proportional memory Pss (MiB)', 'pss', '%.1f'),
        ('  of VmRSS: anonymous, RssAnon (MiB)', 'anon', '%.1f'),
        ('start to bus name owned: median (ms)', 'start', '%.0f'),
    ]
    print('%-46s %12s %18s' % ('', 'orientd', 'iio-sensor-proxy'))
    for title, key, fmt in rows:
        if key is None and title.startswith('latency: min'):
            a = '%.0f / %.0f' % (o['min'], o['max'])
            b = '%.0f / %.0f' % (p['min'], p['max'])
        elif key is None:
            a = '%d / %d' % (o['changes'], o['missed'])
            b = '%d / %d' % (p['changes'], p['missed'])
        else:
            a, b = fmt % o[key], fmt % p[key]
        print('%-46s %12s %18s' % (title, a, b))
    print()
    def ratio(key):
        return o[key] / p[key] if p[key] else float('inf')
    checks = [
        ('latency median at most 1/3 of iio-sensor-proxy\'s', ratio('median') <= 1 / 3,
         'ratio %.2f' % ratio('median')),
        ('latency p95 at most 1/2 of iio-sensor-proxy\'s', ratio('p95') <= 1 / 2,
         'ratio %.2f' % ratio('p95')),
        ('claimed still: wakeups/min no higher', ratio('still') <= 1,
         'ratio %.2f' % ratio('still')),
        ('claimed still: CPU/min no higher', ratio('still_cpu') <= 1,
         'ratio %.2f' % ratio('still_cpu')),
        ('zero wakeups while unclaimed', o['idle'] == 0, '%.1f/min' % o['idle']),
        ('VmRSS no higher than iio-sensor-proxy\'s', o['rss'] <= p['rss'],
         '%.1f vs %.1f MiB' % (o['rss'], p['rss'])),
    ]
    failed = 0
    for title, ok, value in checks:
        failed += 0 if ok else 1
        print('target: %-50s %-5s (%s)' % (title, 'met' if ok else 'MISSED', value))
    sys.exit(1 if failed else 0)


if __name__ == '__main__':
    main()
