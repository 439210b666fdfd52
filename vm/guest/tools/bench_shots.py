#!/usr/bin/python3
"""Photos from an open `orientcam session --json`, one per Enter, timed (stdlib only).

usage: bench_shots.py --label LABEL --photos N [--warmup W] --list FILE -- COMMAND...
       bench_shots.py --label LABEL --one-shot N [--warmup W] --list FILE -- COMMAND...

Starts COMMAND (an `orientcam session ... --headless --json`), waits for its ready event, then
W + N times writes an empty line (a trigger) and reads events up to the photo it took. Of the
last N it reports the session's own trigger-to-file time (timings.trigger_to_file_ms: trigger
read -> photo durable under its name) and what this client saw (Enter written -> photo line
read), median and p90, as one line:

  BENCH LABEL: n=N trigger->file median=M p90=P ms; client median=M p90=P ms

and writes the photos' paths to FILE, one per line. Ends the session with q and fails (exit 1,
with the reason) if it does not start, reports an error or ends early.

With --one-shot, COMMAND is a one-shot `orientcam capture ... --json` run W + N times ({i} in an
argument becomes the run's number): process start to exit, photo written, median and p90:

  BENCH LABEL: n=N start->exit median=M p90=P ms
"""

import json
import subprocess
import sys
import time


def quantile(values, q):
    values = sorted(values)
    k = (len(values) - 1) * q
    lo = int(k)
    hi = min(lo + 1, len(values) - 1)
    return values[lo] + (values[hi] - values[lo]) * (k - lo)


def main():
    args = sys.argv[1:]
    label, photos, warmup, listing, one_shot = None, None, 2, None, None
    while args and args[0] != '--':
        option = args.pop(0)
        if option == '--label':
            label = args.pop(0)
        elif option == '--photos':
            photos = int(args.pop(0))
        elif option == '--one-shot':
            one_shot = int(args.pop(0))
        elif option == '--warmup':
            warmup = int(args.pop(0))
        elif option == '--list':
            listing = args.pop(0)
        else:
            sys.exit(__doc__)
    if not args or label is None or (photos is None) == (one_shot is None) or listing is None:
        sys.exit(__doc__)
    command = args[1:]
    if one_shot is not None:
        return one_shots(label, one_shot, warmup, listing, command)
    session = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0)

    def event():
        line = session.stdout.readline()
        if not line:
            sys.exit('%s: the session ended early (exit status %s)' % (label, session.wait()))
        return json.loads(line)

    ready = event()
    if ready.get('event') != 'ready':
        sys.exit('%s: the first event is not ready: %s' % (label, ready))
    inside, client, paths = [], [], []
    for i in range(warmup + photos):
        start = time.monotonic()
        session.stdin.write(b'\n')
        while True:
            e = event()
            if e.get('event') == 'photo':
                break
            if e.get('event') in ('error', 'end'):
                sys.exit('%s: %s' % (label, e))
        seen = (time.monotonic() - start) * 1000
        if i >= warmup:
            inside.append(e['timings']['trigger_to_file_ms'])
            client.append(seen)
            paths.append(e['path'])
    session.stdin.write(b'q\n')
    session.stdin.close()
    session.wait(timeout=60)
    with open(listing, 'w') as f:
        f.write(''.join(p + '\n' for p in paths))
    print('BENCH %s: n=%d trigger->file median=%.1f p90=%.1f ms; client median=%.1f p90=%.1f ms'
          % (label, photos, quantile(inside, 0.5), quantile(inside, 0.9),
             quantile(client, 0.5), quantile(client, 0.9)))


def one_shots(label, runs, warmup, listing, command):
    times, paths = [], []
    for i in range(warmup + runs):
        start = time.monotonic()
        done = subprocess.run([a.replace('{i}', str(i)) for a in command], stdout=subprocess.PIPE)
        took = (time.monotonic() - start) * 1000
        if done.returncode != 0:
            sys.exit('%s: run %d exited %d' % (label, i, done.returncode))
        if i >= warmup:
            times.append(took)
            paths.append(json.loads(done.stdout.splitlines()[-1])['path'])
    with open(listing, 'w') as f:
        f.write(''.join(p + '\n' for p in paths))
    print('BENCH %s: n=%d start->exit median=%.1f p90=%.1f ms'
          % (label, runs, quantile(times, 0.5), quantile(times, 0.9)))


if __name__ == '__main__':
    main()
