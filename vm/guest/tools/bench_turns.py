#!/usr/bin/python3
"""Latency from a physical change to a client seeing it (stdlib only).

usage: bench_turns.py --control FIFO --status FILE --label TEXT --ready REGEX --template REGEX
                      [--rounds N] [--pause MIN,MAX] [--daemon-pid PID] [--out DIR]
                      [--idle SECONDS] [--still SECONDS] -- CLIENT [ARG...]

Starts CLIENT (e.g. monitor-sensor, or orientd --watch --json) and reads its output lines as
they come, stamped with CLOCK_MONOTONIC. Once a line matches --ready (the client shows the device
upright), turns the emulated accelerometer (emu/hid_accel.py, through its control FIFO) N times
through left-up, bottom-up, right-up, normal. For each turn the physical change is the moment the
emulator changed its vector (its status file's changed_at, CLOCK_MONOTONIC), and the client
seeing it is the first line matching --template ({o} is the orientation) read after it. The
emulator sends an input report at once when the vector changes, so the latency is the driver,
the daemon (its sampling, filtering and D-Bus signal) and the client. Between turns the device
rests for a random time between MIN and MAX seconds (default 0.1,0.8; the same sequence every
run), so that a daemon that works on a timer is not always caught at the same phase of it.

With --daemon-pid and --idle, the daemon's wakeups (context switches summed over its threads,
/proc/PID/task/TID/status) are counted for that many seconds before the client starts (nobody
claims); with --still, once the client is ready, 3 s are left for the daemon to settle (orientd
needs a second of stillness, then repeats a hub's last report for another) and its wakeups, CPU
time (every thread's run time, /proc/PID/task/TID/schedstat) and the input reports the emulated
hub sent are counted for that many seconds with the device still and claimed; both are printed
per minute on a "BENCH still LABEL:" line.

Prints one line, "BENCH latency LABEL: n=N median=M ms p90=P ms p95=Q ms max=X ms missed=K" plus
the daemon's CPU time during the turns with --daemon-pid; with --out, the client's stamped lines and
the changes go to DIR. Exit 1 when a change was missed (not seen within 10 s) or the client
never got ready.
"""

import os
import random
import re
import select
import signal
import statistics
import subprocess
import sys
import time

ORDER = ['left-up', 'bottom-up', 'right-up', 'normal']


def status(path):
    values = {}
    try:
        with open(path) as f:
            for line in f:
                key, _, value = line.rstrip('\n').partition('=')
                values[key] = value
    except OSError:
        pass
    return values


def cpu_seconds(pid):
    try:
        with open('/proc/%d/stat' % pid) as f:
            fields = f.read().rsplit(')', 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf('SC_CLK_TCK')
    except (OSError, ValueError, IndexError):
        return None


def threads(pid, name):
    """Each of pid's threads' /proc file `name`, by thread id."""
    out = {}
    try:
        tids = os.listdir('/proc/%d/task' % pid)
    except OSError:
        return out
    for tid in tids:
        try:
            with open('/proc/%d/task/%s/%s' % (pid, tid, name)) as f:
                out[tid] = f.read()
        except OSError:
            pass
    return out


def switches(pid):
    """Context switches (voluntary and not) of each of pid's threads: each wakeup is one."""
    counts = {}
    for tid, text in threads(pid, 'status').items():
        counts[tid] = sum(int(line.split()[1]) for line in text.splitlines()
                          if line.startswith(('voluntary_ctxt_switches',
                                              'nonvoluntary_ctxt_switches')))
    return counts


def run_ns(pid):
    """Run time in ns of each of pid's threads (schedstat's first field)."""
    return {tid: int(text.split()[0]) for tid, text in threads(pid, 'schedstat').items()
            if text.split()}


def since(before, after):
    """The growth of per-thread counters: a thread that started counts from 0, one that exited
    takes its counts along (so this can only undercount, never go negative)."""
    return sum(value - before.get(tid, 0) for tid, value in after.items())


class Client:
    def __init__(self, argv):
        self.process = subprocess.Popen(argv, stdout=subprocess.PIPE, stdin=subprocess.DEVNULL)
        self.fd = self.process.stdout.fileno()
        self.pending = b''
        self.lines = []  # (stamp, text)

    def read_until(self, pattern, after, timeout):
        """The stamp of the first line after `after` matching pattern, waiting up to timeout."""
        deadline = time.monotonic() + timeout
        start = 0
        while True:
            for stamp, text in self.lines[start:]:
                if stamp >= after and pattern.search(text):
                    return stamp
            start = len(self.lines)
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            ready, _, _ = select.select([self.fd], [], [], left)
            if not ready:
                continue
            data = os.read(self.fd, 65536)
            stamp = time.monotonic()
            if not data:
                return None
            self.pending += data
            while b'\n' in self.pending:
                line, self.pending = self.pending.split(b'\n', 1)
                self.lines.append((stamp, line.decode(errors='replace')))

    def stop(self):
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
            try:
                self.process.wait(5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def main():
    args = sys.argv[1:]
    if '--' not in args:
        sys.exit(__doc__)
    split = args.index('--')
    options, client_argv = args[:split], args[split + 1:]
    opts = {'--rounds': '2', '--pause': '0.1,0.8', '--daemon-pid': None, '--out': None,
            '--idle': '0', '--still': '0'}
    while options:
        key = options.pop(0)
        if not options:
            sys.exit(__doc__)
        opts[key] = options.pop(0)
    for required in ('--control', '--status', '--label', '--ready', '--template'):
        if required not in opts:
            sys.exit(__doc__)
    pause_min, pause_max = (float(v) for v in opts['--pause'].split(','))
    rest = random.Random(7)
    control = os.open(opts['--control'], os.O_WRONLY)
    pid = int(opts['--daemon-pid']) if opts['--daemon-pid'] else None
    idle, still = float(opts['--idle']), float(opts['--still'])
    still_text = ''
    if pid and idle > 0:
        before = switches(pid)
        time.sleep(idle)
        still_text += ' unclaimed=%.1f wakeups/min' % (since(before, switches(pid)) * 60 / idle)
    client = Client(client_argv)
    changes, latencies, missed = [], [], 0
    try:
        if client.read_until(re.compile(opts['--ready']), 0, 30) is None:
            print('BENCH latency %s: the client never showed the device upright (--ready %r)'
                  % (opts['--label'], opts['--ready']))
            sys.exit(1)
        if pid and still > 0:
            time.sleep(3)
            sent = int(status(opts['--status']).get('reports_sent', '0'))
            before, ns = switches(pid), run_ns(pid)
            time.sleep(still)
            sent = int(status(opts['--status']).get('reports_sent', '0')) - sent
            still_text += (' still: wakeups=%.0f/min cpu=%.1f ms/min hub-reports=%.0f/min'
                           % (since(before, switches(pid)) * 60 / still,
                              since(ns, run_ns(pid)) / 1e6 * 60 / still, sent * 60 / still))
        cpu_before = cpu_seconds(pid) if pid else None
        started = time.monotonic()
        for _ in range(int(opts['--rounds'])):
            for orientation in ORDER:
                time.sleep(rest.uniform(pause_min, pause_max))
                handled = int(status(opts['--status']).get('commands', '0'))
                os.write(control, ('orient %s\n' % orientation).encode())
                deadline = time.monotonic() + 10
                state = status(opts['--status'])
                while int(state.get('commands', '0')) <= handled and time.monotonic() < deadline:
                    time.sleep(0.005)
                    state = status(opts['--status'])
                changed = float(state.get('changed_at', 'nan'))
                pattern = re.compile(opts['--template'].replace('{o}', re.escape(orientation)))
                seen = client.read_until(pattern, changed, 10)
                changes.append((changed, orientation, seen))
                if seen is None:
                    missed += 1
                else:
                    latencies.append((seen - changed) * 1000)
        cpu_after = cpu_seconds(pid) if pid else None
        wall = time.monotonic() - started
    finally:
        client.stop()
        os.close(control)
    if opts['--out']:
        name = re.sub(r'[^A-Za-z0-9.]+', '-', opts['--label']).strip('-')
        with open(os.path.join(opts['--out'], 'bench-%s.lines' % name), 'w') as f:
            f.writelines('%.6f\t%s\n' % line for line in client.lines)
        with open(os.path.join(opts['--out'], 'bench-%s.changes' % name), 'w') as f:
            f.writelines('%.6f %s %s\n' % (c, o, '%.6f' % s if s else 'missed')
                         for c, o, s in changes)
    text = 'n=0'
    if latencies:
        ordered = sorted(latencies)
        p90 = ordered[min(len(ordered) - 1, int(round(0.9 * (len(ordered) - 1))))]
        p95 = ordered[min(len(ordered) - 1, int(round(0.95 * (len(ordered) - 1))))]
        text = 'n=%d median=%.0f ms p90=%.0f ms p95=%.0f ms max=%.0f ms' % (
            len(ordered), statistics.median(ordered), p90, p95, ordered[-1])
    text += ' missed=%d' % missed
    if cpu_before is not None and cpu_after is not None:
        text += ' daemon-cpu=%.2f s in %.1f s' % (cpu_after - cpu_before, wall)
    print('BENCH latency %s: %s' % (opts['--label'], text))
    if still_text:
        print('BENCH still %s:%s' % (opts['--label'], still_text))
    sys.exit(1 if missed else 0)


if __name__ == '__main__':
    main()
