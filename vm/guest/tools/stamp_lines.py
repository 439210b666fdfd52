#!/usr/bin/python3
"""Runs a command and records when each line of its output arrives (stdlib only).

usage: stamp_lines.py OUT -- CMD [ARG...]
Writes "SECONDS<TAB>LINE" to OUT for every line CMD prints on stdout, SECONDS being the guest's
CLOCK_MONOTONIC when the line was read (the clock the emulators stamp physical changes with), so
a test can measure from a change to a client seeing it. CMD's stderr goes to ours. SIGTERM and
SIGINT are passed on to CMD; the exit status is CMD's.
"""

import os
import signal
import subprocess
import sys
import time


def main():
    if len(sys.argv) < 4 or sys.argv[2] != '--':
        sys.exit(__doc__)
    child = subprocess.Popen(sys.argv[3:], stdout=subprocess.PIPE, bufsize=0)
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda s, _: child.send_signal(s))
    with open(sys.argv[1], 'w', buffering=1) as out:
        pending = b''
        while True:
            try:
                data = os.read(child.stdout.fileno(), 65536)
            except InterruptedError:
                continue
            if not data:
                break
            stamp = time.monotonic()
            pending += data
            while b'\n' in pending:
                line, pending = pending.split(b'\n', 1)
                out.write('%.6f\t%s\n' % (stamp, line.decode(errors='replace')))
        if pending:
            out.write('%.6f\t%s\n' % (time.monotonic(), pending.decode(errors='replace')))
    sys.exit(child.wait())


if __name__ == '__main__':
    main()
