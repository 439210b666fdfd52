#!/usr/bin/python3
"""Checks which way up a picture of vivid's colour bars is, by decoding it (stdlib + djpeg).

usage: check_upright.py IMAGE --rotation DEG [--format jpeg|ppm|yuyv|nv12] [--size WxH]
                              [--source-size WxH]

vivid's "75% Colorbar" test pattern has eight vertical bars, left to right: white, yellow, cyan,
green, magenta, red, blue, black. A capture turned clockwise by DEG (0, 90, 180, 270) has them
running left to right (0), top to bottom (90), right to left (180) or bottom to top (270). The
check samples the middle of each bar on three lines across the bars, classifies each sample by
which of R, G, B are lit, and requires the exact sequence on every line: that rules out every
other rotation and any mirroring. With --source-size, the picture's size must be the source's
(0, 180) or the source's turned (90, 270).

JPEG files are decoded with djpeg (libjpeg-turbo-progs) to PPM; raw YUYV and NV12 frames as
v4l2-ctl writes them need --size. Exit 0 when upright as expected, 1 otherwise, with the reason.
(This is the check for the vivid pattern; a project pattern with its own up-marker needs its own
sampling points, the rest carries over.)
"""

import argparse
import subprocess
import sys

BARS = ['white', 'yellow', 'cyan', 'green', 'magenta', 'red', 'blue', 'black']
LIT = {(1, 1, 1): 'white', (1, 1, 0): 'yellow', (0, 1, 1): 'cyan', (0, 1, 0): 'green',
       (1, 0, 1): 'magenta', (1, 0, 0): 'red', (0, 0, 1): 'blue', (0, 0, 0): 'black'}


class Picture:
    """Width, height and an rgb(x, y) function averaging a small block around the point."""

    def __init__(self, width, height, pixel):
        self.width, self.height, self.pixel = width, height, pixel

    def rgb(self, x, y, radius=2):
        total, n = [0, 0, 0], 0
        for dy in range(-radius, radius + 1):
            for dx in range(-radius, radius + 1):
                px = min(max(x + dx, 0), self.width - 1)
                py = min(max(y + dy, 0), self.height - 1)
                for i, v in enumerate(self.pixel(px, py)):
                    total[i] += v
                n += 1
        return tuple(v / n for v in total)


def clamp(v):
    return 0 if v < 0 else 255 if v > 255 else v


def yuv_to_rgb(y, u, v):
    # BT.601 limited range, what vivid produces for webcam inputs.
    c, d, e = y - 16, u - 128, v - 128
    return (clamp(1.164 * c + 1.596 * e), clamp(1.164 * c - 0.392 * d - 0.813 * e),
            clamp(1.164 * c + 2.017 * d))


def load_ppm(data):
    fields, pos = [], 0
    while len(fields) < 4:
        while data[pos:pos + 1].isspace():
            pos += 1
        if data[pos:pos + 1] == b'#':
            pos = data.index(b'\n', pos)
            continue
        end = pos
        while not data[end:end + 1].isspace():
            end += 1
        fields.append(data[pos:end])
        pos = end
    pos += 1
    if fields[0] != b'P6' or int(fields[3]) != 255:
        raise ValueError('not an 8-bit P6 PPM')
    width, height = int(fields[1]), int(fields[2])
    pixels = data[pos:]

    def pixel(x, y):
        i = 3 * (y * width + x)
        return pixels[i], pixels[i + 1], pixels[i + 2]
    return Picture(width, height, pixel)


def load(path, fmt, size):
    if fmt in ('jpeg', 'ppm'):
        if fmt == 'jpeg':
            data = subprocess.run(['djpeg', '-pnm', path], check=True, capture_output=True).stdout
        else:
            data = open(path, 'rb').read()
        return load_ppm(data)
    width, height = size
    data = open(path, 'rb').read()
    if fmt == 'yuyv':
        def pixel(x, y):
            i = 2 * (y * width + (x & ~1))
            return yuv_to_rgb(data[i + 2 * (x & 1)], data[i + 1], data[i + 3])
    elif fmt == 'nv12':
        def pixel(x, y):
            c = width * height + (y // 2) * width + (x & ~1)
            return yuv_to_rgb(data[y * width + x], data[c], data[c + 1])
    else:
        raise ValueError('unknown format ' + fmt)
    return Picture(width, height, pixel)


def bar_lines(picture, rotation):
    """For each of three lines across the bars, the 8 sample points in bar order (source left to
    right), in the coordinates of the picture as stored."""
    w, h = picture.width, picture.height
    lines = []
    for frac in (0.35, 0.5, 0.8):  # away from the top, where vivid may print its OSD text
        points = []
        for i in range(8):
            along = (i + 0.5) / 8
            if rotation == 0:
                points.append((int(along * w), int(frac * h)))
            elif rotation == 90:  # source left edge is now the top, source top is now the right
                points.append((int((1 - frac) * w), int(along * h)))
            elif rotation == 180:
                points.append((int((1 - along) * w), int((1 - frac) * h)))
            else:  # 270: source left edge is now the bottom, source top is now the left
                points.append((int(frac * w), int((1 - along) * h)))
        lines.append(points)
    return lines


def classify(rgb):
    return LIT[tuple(int(v > 96) for v in rgb)]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('image')
    parser.add_argument('--rotation', type=int, required=True, choices=(0, 90, 180, 270))
    parser.add_argument('--format', default='jpeg', choices=('jpeg', 'ppm', 'yuyv', 'nv12'))
    parser.add_argument('--size', help='WxH of a raw frame')
    parser.add_argument('--source-size', help='WxH the camera delivered')
    args = parser.parse_args()
    size = tuple(int(v) for v in args.size.split('x')) if args.size else None
    picture = load(args.image, args.format, size)
    problems = []
    if args.source_size:
        sw, sh = (int(v) for v in args.source_size.split('x'))
        want = (sw, sh) if args.rotation in (0, 180) else (sh, sw)
        if (picture.width, picture.height) != want:
            problems.append('size %dx%d, expected %dx%d' % ((picture.width, picture.height) + want))
    for points in bar_lines(picture, args.rotation):
        seen = [classify(picture.rgb(x, y)) for x, y in points]
        if seen != BARS:
            problems.append('bars at %s read %s' % (points[0], ' '.join(seen)))
    print('%s: %dx%d, rotation %d: %s' % (args.image, picture.width, picture.height, args.rotation,
                                         'upright' if not problems else '; '.join(problems)))
    sys.exit(1 if problems else 0)


if __name__ == '__main__':
    main()
