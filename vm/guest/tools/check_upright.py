#!/usr/bin/python3
"""Checks that photos are the camera's frame turned the right way (stdlib + djpeg).

usage: check_upright.py --reference FRAME --size WxH [--bars | --vimc] [PHOTO=DEG ...]

What "upright" means in the VM: vivid shows the same picture whatever the emulated device does,
the picture a camera in a device held normally sees of an upright scene. A device held turned
clockwise by DEG (left-up 90, bottom-up 180, right-up 270) sees the scene turned
counter-clockwise by DEG, so the photo that shows that scene upright is the frame turned
clockwise by DEG. That is what is checked: of the eight ways to turn and mirror the frame, the
photo must be the clockwise turn by DEG, unmirrored (its width and height those of the frame,
swapped for 90 and 270), clearly closer to it than to any other, and carry no EXIF Orientation
other than 1 (so that viewers do not turn it again).

FRAME is the camera's frame as captured independently (v4l2-ctl; libcamera's own cam for
vimc), raw YUYV, NV12 or RGB by its extension (.yuyv, .nv12, .rgb: bytes R, G, B, libcamera's
BGR888; size WxH) or a JPEG. PHOTO is a JPEG (decoded with djpeg) or a raw frame (.yuyv/.nv12/
.rgb, the reference's size). The comparison samples the frame on a 12x9 grid of 3x3
blocks and the photo at the same points carried through each of the eight transforms; the error
is the mean absolute RGB difference (0-255).

--bars first checks the reference itself against what the VM sets vivid to show: the 75%
colour bars (white, yellow, cyan, green, magenta, red, blue, black from left to right) over the
top 60% of the frame (fill_percentage_of_frame=60) and one even colour below (vivid leaves that
part of the buffer unwritten: zero bytes, which YUV formats show as green). That picture has no
symmetry: no turn or mirror maps it onto itself, so every transform is told apart (the bars'
order fixes left and right, the filled part top and bottom).

--vimc checks the reference against what vimc's sensor draws (through libcamera's vimc pipeline,
which scales the sensor's picture up three times): the same 75% colour bars over the whole
height, and its information text (4 lines of 8x16 characters, "white, yellow, cyan, ...",
brightness, the sensor size and a running time) on a black box from (16, 16) on the sensor,
running off its right edge. The bars' order fixes left and right; the box, dark in the upper
part of the frame and absent from its lower part, top and bottom. So this picture too has no
symmetry, and the photos are compared with it as above (the running time's digits are the only
part that differs between frames, a few pixels of the grid at most).

Prints one line per photo, "ok PHOTO: ..." or "FAIL PHOTO: ...", and exits 1 if any failed.
"""

import subprocess
import sys

BARS = ['white', 'yellow', 'cyan', 'green', 'magenta', 'red', 'blue', 'black']
LIT = {(1, 1, 1): 'white', (1, 1, 0): 'yellow', (0, 1, 1): 'cyan', (0, 1, 0): 'green',
       (1, 0, 1): 'magenta', (1, 0, 0): 'red', (0, 0, 1): 'blue', (0, 0, 0): 'black'}
FILL = 0.6  # fill_percentage_of_frame / 100
GRID = (12, 9)
RADIUS = 1
# The eight transforms: name -> (swaps width and height, where source (x, y) lands in a W x H
# frame's photo). Clockwise turns, and the same after mirroring left-right.
TRANSFORMS = {
    'turned 0': (False, lambda x, y, w, h: (x, y)),
    'turned 90': (True, lambda x, y, w, h: (h - 1 - y, x)),
    'turned 180': (False, lambda x, y, w, h: (w - 1 - x, h - 1 - y)),
    'turned 270': (True, lambda x, y, w, h: (y, w - 1 - x)),
    'mirrored': (False, lambda x, y, w, h: (w - 1 - x, y)),
    'mirrored, turned 90': (True, lambda x, y, w, h: (h - 1 - y, w - 1 - x)),
    'mirrored, turned 180': (False, lambda x, y, w, h: (x, h - 1 - y)),
    'mirrored, turned 270': (True, lambda x, y, w, h: (y, x)),
}


class Picture:
    """Width, height and an rgb(x, y) averaging a (2 RADIUS + 1)^2 block around the point."""

    def __init__(self, width, height, pixel):
        self.width, self.height, self.pixel = width, height, pixel

    def rgb(self, x, y):
        total, n = [0, 0, 0], 0
        for dy in range(-RADIUS, RADIUS + 1):
            for dx in range(-RADIUS, RADIUS + 1):
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


def luma(rgb):
    return 0.299 * rgb[0] + 0.587 * rgb[1] + 0.114 * rgb[2]


def vimc_problems(picture):
    """What differs from vimc's picture (seen through libcamera, 3x its sensor's size) upright."""
    w, h = picture.width, picture.height
    sw, sh = w // 3, h // 3  # the sensor's picture
    problems = []
    if sh < 100:
        return ['%dx%d is too small for this check (the text must leave bars below it)' % (w, h)]
    # Above the box (sensor rows 2..12) and below it (from sensor row 88): the bars alone.
    for row in (7 * 3, (sh + 88) // 2 * 3):
        seen = [classify(picture.rgb(int((i + 0.5) / 8 * w), row)) for i in range(8)]
        if seen != BARS:
            problems.append('bars at row %d read %s' % (row, ' '.join(seen)))
    # The box: sensor x 24..88, y 24..72 dark (black with light letters); the same columns
    # below the box: the white, yellow, cyan and green bars, bright.
    def mean_luma(y0, y1):
        values = [luma(picture.rgb(x * 3, y * 3))
                  for y in range(y0, y1, 6) for x in range(24, 88, 4)]
        return sum(values) / len(values)
    box, below = mean_luma(24, 72), mean_luma(92, sh - 6)
    if not box < 90:
        problems.append('no dark text box at the top left (mean brightness %.0f)' % box)
    if not below > 110:
        problems.append('the bars under the text box are dark (mean brightness %.0f)' % below)
    return problems


def load(path, size):
    data = open(path, 'rb').read()
    if data[:2] == b'\xff\xd8':
        ppm = subprocess.run(['djpeg', '-pnm', path], check=True, capture_output=True).stdout
        return load_ppm(ppm)
    width, height = size
    if path.endswith('.yuyv'):
        if len(data) < width * height * 2:
            raise ValueError('%s: %d bytes, a %dx%d YUYV frame has %d'
                             % (path, len(data), width, height, width * height * 2))

        def pixel(x, y):
            i = 2 * (y * width + (x & ~1))
            return yuv_to_rgb(data[i + 2 * (x & 1)], data[i + 1], data[i + 3])
    elif path.endswith('.rgb'):
        if len(data) < width * height * 3:
            raise ValueError('%s: %d bytes, a %dx%d RGB frame has %d'
                             % (path, len(data), width, height, width * height * 3))

        def pixel(x, y):
            i = 3 * (y * width + x)
            return data[i], data[i + 1], data[i + 2]
    elif path.endswith('.nv12'):
        if len(data) < width * height * 3 // 2:
            raise ValueError('%s: %d bytes, a %dx%d NV12 frame has %d'
                             % (path, len(data), width, height, width * height * 3 // 2))

        def pixel(x, y):
            c = width * height + (y // 2) * width + (x & ~1)
            return yuv_to_rgb(data[y * width + x], data[c], data[c + 1])
    else:
        raise ValueError('%s: not a JPEG, and not named .yuyv, .nv12 or .rgb' % path)
    return Picture(width, height, pixel)


def exif_orientation(path):
    """The EXIF Orientation of a JPEG (IFD0 tag 0x0112), None when it has none."""
    data = open(path, 'rb').read()
    pos = 2
    while pos + 4 <= len(data) and data[pos] == 0xFF:
        marker, length = data[pos + 1], int.from_bytes(data[pos + 2:pos + 4], 'big')
        if marker == 0xDA:  # start of scan: no more metadata
            break
        body = data[pos + 4:pos + 2 + length]
        if marker == 0xE1 and body[:6] == b'Exif\0\0':
            tiff = body[6:]
            order = 'little' if tiff[:2] == b'II' else 'big'
            ifd = int.from_bytes(tiff[4:8], order)
            for i in range(int.from_bytes(tiff[ifd:ifd + 2], order)):
                entry = tiff[ifd + 2 + 12 * i:ifd + 14 + 12 * i]
                if int.from_bytes(entry[0:2], order) == 0x0112:
                    return int.from_bytes(entry[8:10], order)
            return None
        pos += 2 + length
    return None


def classify(rgb):
    return LIT[tuple(int(v > 96) for v in rgb)]


def bars_problems(picture):
    """What differs from vivid's bars over the top 60% and one colour below, the right way up."""
    w, h = picture.width, picture.height
    problems = []
    for frac in (0.1, 0.3, 0.5):
        seen = [classify(picture.rgb(int((i + 0.5) / 8 * w), int(frac * h))) for i in range(8)]
        if seen != BARS:
            problems.append('bars at %d%% of the height read %s' % (frac * 100, ' '.join(seen)))
    below = [classify(picture.rgb(int((i + 0.5) / 8 * w), int(frac * h)))
             for frac in (0.7, 0.9) for i in range(8)]
    if len(set(below)) != 1:
        problems.append('not one colour below 60%% of the height: %s' % ' '.join(below))
    return problems


def grid(width, height):
    gx, gy = GRID
    return [(int((i + 0.5) * width / gx), int((j + 0.5) * height / gy))
            for j in range(gy) for i in range(gx)]


def errors(reference, samples, photo):
    """Mean absolute RGB difference of the photo from each transform of the reference."""
    w, h = reference.width, reference.height
    result = {}
    for name, (swapped, place) in TRANSFORMS.items():
        if (photo.width, photo.height) != ((h, w) if swapped else (w, h)):
            continue
        total = 0.0
        for (x, y), want in samples:
            got = photo.rgb(*place(x, y, w, h))
            total += sum(abs(a - b) for a, b in zip(got, want)) / 3
        result[name] = total / len(samples)
    return result


def main():
    args = sys.argv[1:]
    reference_path = size = None
    bars = vimc = False
    photos = []
    while args:
        arg = args.pop(0)
        if arg == '--reference':
            reference_path = args.pop(0)
        elif arg == '--size':
            size = tuple(int(v) for v in args.pop(0).split('x'))
        elif arg == '--bars':
            bars = True
        elif arg == '--vimc':
            vimc = True
        elif '=' in arg and not arg.startswith('-'):
            path, _, degrees = arg.rpartition('=')
            photos.append((path, int(degrees)))
        else:
            sys.exit(__doc__)
    if reference_path is None:
        sys.exit(__doc__)
    reference = load(reference_path, size)
    failed = False
    if bars:
        problems = bars_problems(reference)
        print('%s %s: %dx%d, %s' % ('FAIL' if problems else 'ok', reference_path, reference.width,
                                   reference.height, '; '.join(problems) or
                                   "vivid's bars over the top 60%, one colour below: upright"))
        failed = bool(problems)
    if vimc:
        problems = vimc_problems(reference)
        print('%s %s: %dx%d, %s' % ('FAIL' if problems else 'ok', reference_path, reference.width,
                                   reference.height, '; '.join(problems) or
                                   "vimc's bars, its text box at the top left: upright"))
        failed = bool(problems)
    samples = [((x, y), reference.rgb(x, y)) for x, y in grid(reference.width, reference.height)]
    for path, degrees in photos:
        problems = []
        try:
            photo = load(path, size)
        except (OSError, ValueError, subprocess.CalledProcessError) as e:
            print('FAIL %s: cannot read it: %s' % (path, e))
            failed = True
            continue
        want = 'turned %d' % degrees
        found = errors(reference, samples, photo)
        ranked = sorted(found.items(), key=lambda kv: kv[1])
        if not ranked:
            problems.append('its size %dx%d is no turn of the frame %dx%d'
                            % (photo.width, photo.height, reference.width, reference.height))
            summary = ''
        else:
            best, best_error = ranked[0]
            others = ranked[1:]
            summary = 'the frame %s (error %.1f; other transforms %s)' % (
                best, best_error, ', '.join('%s %.0f' % kv for kv in others))
            if best != want:
                problems.append('it should be the frame %s (error %s)' % (
                    want, '%.1f' % found[want] if want in found else 'n/a: wrong size'))
            elif best_error > 25:
                problems.append('it is not the frame: even %s is off by %.1f' % (best, best_error))
            elif others and others[0][1] < 3 * best_error + 20:
                problems.append('%s is nearly as close (%.1f)' % others[0])
        orientation = exif_orientation(path) if path.endswith('.jpg') else None
        if orientation not in (None, 1):
            problems.append('EXIF Orientation %d would turn it again' % orientation)
        print('%s %s: %dx%d, %s; EXIF Orientation %s%s' % (
            'FAIL' if problems else 'ok', path, photo.width, photo.height, summary,
            orientation if orientation is not None else 'absent',
            ': ' + '; '.join(problems) if problems else ': upright'))
        failed = failed or bool(problems)
    sys.exit(1 if failed else 0)


if __name__ == '__main__':
    main()
