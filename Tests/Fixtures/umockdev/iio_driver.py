#!/usr/bin/python3
"""Drives a program under test inside a umockdev testbed, step by step.

Run under the preload, so that uevents reach the program's udev monitor:

    umockdev-wrapper /usr/bin/python3 iio_driver.py scenario.json

The scenario is JSON: {"devices": "<umockdev-record text>", "steps": [...]}. Every step is an
object with an "op"; see run_step(). The transcript goes to stdout as JSON lines:
  {"event": "line", "text": ..., "t_ns": N}  a line the program wrote to stdout, and when it
                                       was read (CLOCK_MONOTONIC ns)
  {"event": "dump", ...}, {"event": "fds", ...}, {"event": "exit", "code": N}
  {"event": "spawned", "pid": N, "stderr": PATH}   a program was started
  {"event": "done", "id": N}           a step received through "serve" has run
  {"event": "fail", "reason": ...}    a step failed (the driver then exits 1)
  {"event": "stderr", "text": ...}    everything the program wrote to stderr, at the end
  {"event": "step", "index": N, "op": ..., "t_ns": N}  a step finished, CLOCK_MONOTONIC ns

Sysfs values are changed by writing the testbed file in place (same inode), the way the kernel
changes an attribute's content: UMockdev.Testbed.set_attribute() replaces the file with a new
one, which a program that keeps the attribute open and re-reads it with pread() never sees.
"""
import json
import os
import queue
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time

import gi

gi.require_version('UMockdev', '1.0')
from gi.repository import UMockdev  # noqa: E402

CLOCKS = {
    'realtime': time.CLOCK_REALTIME, 'monotonic': time.CLOCK_MONOTONIC,
    'monotonic_raw': time.CLOCK_MONOTONIC_RAW, 'boottime': time.CLOCK_BOOTTIME,
    'realtime_coarse': time.CLOCK_REALTIME, 'monotonic_coarse': time.CLOCK_MONOTONIC,
    'tai': time.CLOCK_TAI,
}


def emit(event, **fields):
    fields['event'] = event
    sys.stdout.write(json.dumps(fields) + '\n')
    sys.stdout.flush()


class Failure(Exception):
    pass


def encode_script_data(data):
    """umockdev script escaping: bytes < 32 as '^' + chr(b + 64), '^' as '^`'."""
    out = []
    for b in data:
        if b < 32:
            out.append('^' + chr(b + 64))
        elif b == 0x5E:
            out.append('^`')
        else:
            out.append(chr(b))
    return ''.join(out)


class Driver:
    def __init__(self, scenario):
        self.testbed = UMockdev.Testbed.new()
        self.root = self.testbed.get_root_dir()
        self.child = None
        self.lines = queue.Queue()
        self.seen = []      # every stdout line, in order
        self.cursor = 0     # expect() looks at lines from here on
        self.stderr = tempfile.NamedTemporaryFile(prefix='iio-driver-', suffix='.err', delete=False)
        self.scripts = []
        self.feeders = []
        self.stopping = False
        if scenario.get('devices'):
            self.testbed.add_from_string(scenario['devices'])
        emit('testbed', root=self.root)

    def real(self, syspath, attr=None):
        path = self.root + syspath
        return path if attr is None else os.path.join(path, attr)

    def write_in_place(self, syspath, attr, value):
        path = self.real(syspath, attr)
        fd = os.open(path, os.O_WRONLY | os.O_TRUNC)
        try:
            os.write(fd, value.encode('latin-1'))
        finally:
            os.close(fd)

    def pump(self, timeout):
        try:
            line = self.lines.get(timeout=timeout)
        except queue.Empty:
            return False
        if line is None:
            return False
        t_ns, line = line
        self.seen.append(line)
        emit('line', text=line, t_ns=t_ns)
        return True

    def reader(self, stream):
        for raw in stream:
            self.lines.put((time.monotonic_ns(), raw.decode('utf-8', 'replace').rstrip('\n')))
        self.lines.put(None)

    def run_step(self, step):
        op = step['op']
        if op == 'add':
            # Parents that are still there (only a child was unplugged) are kept as they are.
            fresh = [p for p in re.split(r'\n\s*\n', step['umockdev']) if p.strip()
                     and not os.path.exists(self.real(self.paths(p)[0], 'uevent'))]
            text = '\n\n'.join(p.strip('\n') for p in fresh) + '\n'
            # libumockdev (0.17) sends the "add" uevent itself for each device it adds.
            self.testbed.add_from_string(text)
        elif op == 'remove':
            path = step['syspath']
            if step.get('silent'):
                # Gone without a uevent, as when the monitor lost it (ENOBUFS).
                self.testbed.remove_device(path)
            elif step.get('files_first'):
                # The device vanishes before udev says so, as when it is unplugged mid-read:
                # its files go first; the remove uevent needs a stub with uevent and subsystem.
                uevent = open(self.real(path, 'uevent')).read()
                subsystem = os.readlink(self.real(path, 'subsystem'))
                self.testbed.remove_device(path)
                if step.get('pause'):
                    time.sleep(step['pause'])
                os.makedirs(self.real(path), exist_ok=True)
                with open(self.real(path, 'uevent'), 'w') as f:
                    f.write(uevent)
                os.symlink(subsystem, self.real(path, 'subsystem'))
                self.testbed.uevent(path, 'remove')
                os.remove(self.real(path, 'uevent'))
                os.remove(self.real(path, 'subsystem'))
                os.rmdir(self.real(path))
            else:
                self.testbed.uevent(path, 'remove')
                self.testbed.remove_device(path)
        elif op == 'set':
            self.write_in_place(step['syspath'], step['attr'], step['value'])
        elif op == 'replace':
            # umockdev's own API: a new file renamed over the old one (a new inode), as
            # iio-sensor-proxy's tests and distributions' tests change values.
            self.testbed.set_attribute(step['syspath'], step['attr'], step['value'])
        elif op == 'make_file':
            # An attribute that was a directory (reads and writes fail with EISDIR) becomes a
            # regular file: a fault that goes away.
            path = self.real(step['syspath'], step['attr'])
            if os.path.isdir(path):
                import shutil
                shutil.rmtree(path)
            with open(path, 'w', encoding='latin-1') as f:
                f.write(step['value'])
        elif op == 'property':
            self.testbed.set_property(step['syspath'], step['name'], step['value'])
        elif op == 'uevent':
            self.testbed.uevent(step['syspath'], step['action'])
        elif op == 'evdev':
            # An input node added at run time: the evdev ioctls libevdev asks (umockdev-run's -i)
            # and the events it then reads in evemu's format (-e, timed from now).
            self.testbed.load_ioctl(step['devnode'], step['ioctl'])
            if step.get('events'):
                self.testbed.load_evemu_events(step['devnode'], step['events'])
        elif op == 'spawn':
            env = dict(os.environ)
            env['UMOCKDEV_DIR'] = self.root
            env.update(step.get('env', {}))
            self.child = subprocess.Popen(
                step['argv'], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.stderr,
                env=env)
            threading.Thread(target=self.reader, args=(self.child.stdout,), daemon=True).start()
            emit('spawned', pid=self.child.pid, stderr=self.stderr.name)
        elif op == 'send':
            self.child.stdin.write((step['text'] + '\n').encode())
            self.child.stdin.flush()
        elif op == 'close_stdin':
            self.child.stdin.close()
        elif op == 'expect':
            pattern = re.compile(step['pattern'])
            count = step.get('count', 1)
            deadline = time.monotonic() + step.get('timeout', 10)
            while True:
                hits = [i for i in range(self.cursor, len(self.seen)) if pattern.search(self.seen[i])]
                if len(hits) >= count:
                    self.cursor = hits[count - 1] + 1
                    break
                left = deadline - time.monotonic()
                if left <= 0:
                    raise Failure('expected %d line(s) matching %r within %ss; got %d' % (
                        count, step['pattern'], step.get('timeout', 10), len(hits)))
                self.pump(min(left, 0.2))
        elif op == 'drain':
            # Collect output for a while without expecting anything.
            deadline = time.monotonic() + step.get('seconds', 0.5)
            while time.monotonic() < deadline:
                self.pump(max(0.0, min(0.1, deadline - time.monotonic())))
        elif op == 'repeat':
            # The nested steps, `times` times, as fast as they run (a hotplug storm).
            for _ in range(step['times']):
                for sub in step['steps']:
                    self.run_step(sub)
        elif op == 'serve':
            # Interactive: further steps arrive as JSON lines on a FIFO (a test drives the
            # testbed while other programs run); each is acknowledged with a "done" event
            # carrying its "id", or "step_failed". End of input or {"op": "end"} returns.
            with open(step['fifo'], 'r') as commands:
                for line in commands:
                    if not line.strip():
                        continue
                    sub = json.loads(line)
                    if sub.get('op') == 'end':
                        break
                    try:
                        self.run_step(sub)
                        emit('done', id=sub.get('id'))
                    except Exception as e:  # reported to the test, which decides
                        emit('step_failed', id=sub.get('id'), reason='%s: %s' % (type(e).__name__, e))
        elif op == 'script':
            self.load_script(step)
        elif op == 'feed':
            self.feed(step)
        elif op == 'sleep':
            time.sleep(step['seconds'])
        elif op == 'dump':
            values = {}
            for attr in step['attrs']:
                try:
                    values[attr] = open(self.real(step['syspath'], attr), 'rb').read().decode('latin-1')
                except OSError as e:
                    values[attr] = None
                    values[attr + '#error'] = str(e)
            emit('dump', syspath=step['syspath'], values=values, tag=step.get('tag'))
        elif op == 'fds':
            targets = []
            for fd in sorted(os.listdir('/proc/%d/fd' % self.child.pid), key=int):
                try:
                    targets.append(os.readlink('/proc/%d/fd/%s' % (self.child.pid, fd)))
                except OSError:
                    pass
            emit('fds', targets=targets, tag=step.get('tag'))
        elif op == 'signal':
            self.child.send_signal(getattr(signal, 'SIG' + step['name']))
        elif op == 'wait':
            deadline = time.monotonic() + step.get('timeout', 10)
            while self.child.poll() is None and time.monotonic() < deadline:
                self.pump(0.05)
            if self.child.poll() is None:
                raise Failure('program did not exit within %ss' % step.get('timeout', 10))
            while self.pump(0.2):
                pass
            emit('exit', code=self.child.returncode)
        else:
            raise Failure('unknown op %r' % op)

    @staticmethod
    def paths(text):
        return ['/sys' + line[3:].strip() for line in text.splitlines() if line.startswith('P: ')]

    def feed(self, step):
        """Emulates a triggered IIO buffer on a device node: every `interval_ms`, while
        buffer/enable is 1, one scan of the channels enabled in scan_elements at that moment,
        laid out as the kernel lays it out (ascending _index, each element aligned to its
        storage size, the scan padded to the largest), values from the channels' _raw
        attributes, the timestamp from the clock in current_timestamp_clock. The layout
        follows the enables, so a reader that switches channels gets scans of the new shape."""
        sys_dir = self.root + step['syspath']
        server = self.testbed.get_dev_fd(step['devnode'])
        interval = step['interval_ms'] / 1000.0

        def read(name):
            try:
                return open(os.path.join(sys_dir, name)).read().strip()
            except OSError:
                return None

        def layout():
            if read('buffer/enable') != '1':
                return None
            return sorted(entry for entry in os.listdir(os.path.join(sys_dir, 'scan_elements'))
                          if entry.endswith('_en') and read('scan_elements/' + entry) == '1')

        def scan():
            # The kernel fixes a scan's layout when the buffer is enabled; here the channels
            # are read one by one, so a reader switching channels meanwhile would get a scan
            # of half the old and half the new layout: such a scan is not written.
            before = layout()
            if before is None:
                return None
            data = build()
            return data if layout() == before else None

        def build():
            channels = []
            for entry in os.listdir(os.path.join(sys_dir, 'scan_elements')):
                if not entry.endswith('_en') or read('scan_elements/' + entry) != '1':
                    continue
                name = entry[:-3]
                m = re.match(r'(le|be):([su])(\d+)/(\d+)(?:X(\d+))?>>(\d+)',
                             read('scan_elements/%s_type' % name) or '')
                if not m:
                    continue
                channels.append((int(read('scan_elements/%s_index' % name)), name, m))
            channels.sort()
            record = bytearray()
            largest = 1
            for _, name, m in channels:
                size = int(m.group(4)) // 8 * int(m.group(5) or 1)
                align = int(m.group(4)) // 8
                largest = max(largest, align)
                record += bytes((-len(record)) % align)
                if name == 'in_timestamp':
                    clock = CLOCKS.get(read('current_timestamp_clock') or 'realtime',
                                       time.CLOCK_REALTIME)
                    value = time.clock_gettime_ns(clock)
                else:
                    value = int(float(read(name + '_raw') or '0')) << int(m.group(6))
                value &= (1 << (8 * size)) - 1
                record += value.to_bytes(size, 'little' if m.group(1) == 'le' else 'big')
            record += bytes((-len(record)) % largest)
            return bytes(record)

        def run():
            while not self.stopping:
                data = scan()
                if data:
                    try:
                        os.write(server, data)
                    except OSError:
                        return
                time.sleep(interval)

        self.stopping = False
        thread = threading.Thread(target=run, daemon=True)
        thread.start()
        self.feeders.append(thread)
        emit('feed', devnode=step['devnode'])

    def load_script(self, step):
        """Makes a device node deliver `records` (hex), one per `interval_ms`, with kernel
        timestamps patched in from the clock the program selected (current_timestamp_clock)."""
        records = [bytearray.fromhex(r) for r in step['records']]
        ts = step.get('timestamp')
        if ts:
            clock_name = 'realtime'
            if step.get('clock_attr'):
                try:
                    clock_name = open(self.root + step['clock_attr']).read().strip() or 'realtime'
                except OSError:
                    pass
            emit('clock', name=clock_name)
            base = time.clock_gettime_ns(CLOCKS.get(clock_name, time.CLOCK_REALTIME))
            base += step.get('first_delay_ms', step['interval_ms']) * 1_000_000
            for i, record in enumerate(records):
                value = base + i * ts['step_ns']
                record[ts['offset']:ts['offset'] + 8] = value.to_bytes(
                    8, 'little' if ts.get('endian', 'le') == 'le' else 'big', signed=True)
        # A line's data cannot start with a space (the script reader skips it), so such a
        # byte moves to the end of the previous line; the reader copes with split records.
        chunks = [bytes(r) for r in records]
        for i in range(1, len(chunks)):
            while chunks[i][:1] == b' ':
                chunks[i - 1] += b' '
                chunks[i] = chunks[i][1:]
        if chunks and chunks[0][:1] == b' ':
            raise Failure('first scan record starts with 0x20, which a umockdev script cannot carry')
        path = tempfile.mktemp(prefix='iio-scans-', suffix='.script')
        with open(path, 'w', encoding='latin-1') as f:
            first = step.get('first_delay_ms', step['interval_ms'])
            pauses = {int(k): v for k, v in step.get('pauses', {}).items()}
            for i, chunk in enumerate(chunks):
                if chunk:
                    delay = first if i == 0 else pauses.get(i, step['interval_ms'])
                    f.write('r %d %s\n' % (delay, encode_script_data(chunk)))
        self.scripts.append(path)
        self.testbed.load_script(step['devnode'], path)
        emit('script', devnode=step['devnode'], records=len(records))

    def finish(self):
        self.stopping = True
        for thread in self.feeders:
            thread.join(1)
        if self.child is not None and self.child.poll() is None:
            self.child.kill()
            self.child.wait()
        while self.pump(0.05):
            pass
        self.stderr.flush()
        emit('stderr', text=open(self.stderr.name, 'rb').read().decode('utf-8', 'replace'))
        os.unlink(self.stderr.name)
        for path in self.scripts:
            os.unlink(path)


def main():
    scenario = json.load(open(sys.argv[1]))
    driver = Driver(scenario)
    status = 0
    try:
        for index, step in enumerate(scenario.get('steps', [])):
            try:
                driver.run_step(step)
                emit('step', index=index, op=step['op'], t_ns=time.monotonic_ns())
            except Failure as e:
                emit('fail', step=index, reason=str(e))
                status = 1
                break
            except Exception as e:  # a broken step is a failure too, with its reason
                emit('fail', step=index, reason='%s: %s' % (type(e).__name__, e))
                status = 1
                break
    finally:
        driver.finish()
    sys.exit(status)


if __name__ == '__main__':
    main()
