#!/usr/bin/python3
"""Latency from physical changes to a client seeing them (stdlib only).

usage: latency.py CHANGES LINES TEMPLATE
CHANGES has one "SECONDS ORIENTATION" line per change, SECONDS being when the emulator changed
its vector (CLOCK_MONOTONIC); LINES is a stamp_lines.py file of the client's output; TEMPLATE a
regular expression with {o} for the orientation, e.g. 'orientation changed: {o}$'. For each
change, the first matching line stamped after it gives the latency. Prints one summary line:
"n=N median=M ms p90=P ms max=X ms missed=K".
"""

import re
import statistics
import sys


def main():
    changes = [line.split() for line in open(sys.argv[1]) if line.strip()]
    lines = []
    for line in open(sys.argv[2]):
        stamp, _, text = line.rstrip('\n').partition('\t')
        lines.append((float(stamp), text))
    latencies, missed = [], 0
    for stamp, orientation in changes:
        t0 = float(stamp)
        pattern = re.compile(sys.argv[3].replace('{o}', re.escape(orientation)))
        seen = next((t for t, text in lines if t >= t0 and pattern.search(text)), None)
        if seen is None:
            missed += 1
        else:
            latencies.append((seen - t0) * 1000)
    if not latencies:
        print('n=0 missed=%d' % missed)
        return
    latencies.sort()
    p90 = latencies[min(len(latencies) - 1, int(round(0.9 * (len(latencies) - 1))))]
    print('n=%d median=%.0f ms p90=%.0f ms max=%.0f ms missed=%d'
          % (len(latencies), statistics.median(latencies), p90, latencies[-1], missed))


if __name__ == '__main__':
    main()
