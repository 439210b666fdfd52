#!/usr/bin/python3
"""Photos from an open `orientcam session --json`, one per Enter, timed (stdlib only).

usage: bench_shots.py --label LABEL --photos N [--warmup W] [--orientations O,...] --list FILE
                      -- COMMAND...
       bench_shots.py --label LABEL --one-shot N [--warmup W] --list FILE -- COMMAND...

Starts COMMAND (an `orientcam session ... --headless --json`), waits for its ready event, then
W + N times writes an empty line (a trigger) and reads events up to the photo it took. Of the
last N it reports the session's own trigger-to-file time (timings.trigger_to_file_ms: trigger
read -> photo durable under its name), its two halves (trigger_to_frame_ms: to the exposure of
the frame taken, the wait for the next frame; frame_to_file_ms: from that exposure, so the
frame's delivery through the driver or libcamera, then turning, encoding and writing) and what
this client saw (Enter written -> photo line read), median and p90, as one line:

  BENCH LABEL: n=N trigger->file median=M p90=P ms; trigger->frame median=M p90=P ms;
  frame->file median=M p90=P ms; client median=M p90=P ms

and writes each photo's path and orientation to FILE, one per line. With --orientations (a
session with --orientation-from -), each trigger is preceded by the line orientd --watch --json
would print for the next orientation of the list, in turn (the warm-up photos included). Ends
the session with q and fails (exit 1, with the reason) if it does not start, reports an error
or ends early.

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
    label, photos, warmup, listing, one_shot, turns = None, None, 2, None, None, []
    while args and args[0] != '--':
        option = args.pop(0)
        if option == '--label':
            label = args.pop(0)
        elif option == '--photos':
            photos = int(args.pop(0))
        elif option == '--one-shot':
            one_shot = int(args.pop(0))
        elif option == '--orientations':
            turns = args.pop(0).split(',')
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
    if turns:
        # The session waits for a first orientation before it says it is ready.
        session.stdin.write(('{"orientation":"%s"}\n' % turns[0]).encode())

    def event():
        line = session.stdout.readline()
        if not line:
            sys.exit('%s: the session ended early (exit status %s)' % (label, session.wait()))
        return json.loads(line)

    ready = event()
    if ready.get('event') != 'ready':
        sys.exit('%s: the first event is not ready: %s' % (label, ready))
    inside, waits, after, client, paths = [], [], [], [], []
    for i in range(warmup + photos):
        if turns:
            held = turns[i % len(turns)]
            session.stdin.write(('{"orientation":"%s"}\n' % held).encode())
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
            waits.append(e['timings']['trigger_to_frame_ms'])
            after.append(e['timings']['frame_to_file_ms'])
            client.append(seen)
            paths.append('%s %s' % (e['path'], e['orientation']))
    session.stdin.write(b'q\n')
    session.stdin.close()
    session.wait(timeout=60)
    with open(listing, 'w') as f:
        f.write(''.join(p + '\n' for p in paths))
    figures = '; '.join('%s median=%.1f p90=%.1f ms' % (name, quantile(v, 0.5), quantile(v, 0.9))
                        for name, v in (('trigger->file', inside), ('trigger->frame', waits),
                                        ('frame->file', after), ('client', client)))
    print('BENCH %s: n=%d %s' % (label, photos, figures))


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
            report = json.loads(done.stdout.splitlines()[-1])
            paths.append('%s %s' % (report['path'], report['orientation']))
    with open(listing, 'w') as f:
        f.write(''.join(p + '\n' for p in paths))
    print('BENCH %s: n=%d start->exit median=%.1f p90=%.1f ms'
          % (label, runs, quantile(times, 0.5), quantile(times, 0.9)))


if __name__ == '__main__':
    main()
