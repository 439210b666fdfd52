#!/usr/bin/python3
"""orientd-face's accuracy and latency (run through scripts/bench/face.sh)."""
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np
from PIL import Image

SKIMAGE = '/usr/lib/python3/dist-packages/skimage/data'
PORTRAITS = [f'{SKIMAGE}/astronaut.png', '/usr/share/matplotlib/mpl-data/sample_data/grace_hopper.jpg']
NO_FACE = [f'{SKIMAGE}/{n}' for n in ('coffee.png', 'rocket.jpg', 'chelsea.png', 'camera.png')]
# Turned clockwise by this, the head points to this edge.
EDGE = {0: 'top', 90: 'right', 180: 'bottom', 270: 'left'}


def pictures(work):
    """(path, has_face) for every source picture, written as PNG."""
    out = []
    crops = np.load(f'{SKIMAGE}/lfw_subset.npy')
    for i, crop in enumerate(crops):
        # 25x25 crops, below any detector's window: shown 4x larger on a plain border, as a
        # face at arm's length fills a front camera's frame.
        face = Image.fromarray((crop * 255).round().astype(np.uint8)).resize((100, 100), Image.BICUBIC)
        canvas = Image.new('L', (160, 160), 128)
        canvas.paste(face, (30, 30))
        path = f'{work}/lfw-{i:03d}.png'
        canvas.save(path)
        out.append((path, i < 100))
    out += [(p, True) for p in PORTRAITS] + [(p, False) for p in NO_FACE]
    return out


def shown(source, degrees, roll, work, tag):
    image = Image.open(source).convert('RGB')
    if roll:
        image = image.rotate(-roll, resample=Image.BILINEAR, fillcolor=(128, 128, 128))
    turn = {0: None, 90: Image.ROTATE_270, 180: Image.ROTATE_180, 270: Image.ROTATE_90}[degrees]
    if turn is not None:
        image = image.transpose(turn)
    path = f'{work}/{tag}.png'
    image.save(path)
    return path


def accuracy(program, work, rolls, turns):
    sources = pictures(work)
    print('accuracy: %d faces and %d pictures without one (LFW subset, portraits, coffee, rocket,'
          ' cat, camera), each shown turned clockwise' % (sum(f for _, f in sources),
                                                       sum(not f for _, f in sources)))
    print('%-6s %-5s %7s %7s %7s %9s %11s' % ('roll', 'turn', 'right', 'wrong', 'missed',
                                               'accuracy', 'false+'))
    for roll in rolls:
        for degrees in turns:
            files, truth = [], []
            for n, (source, face) in enumerate(sources):
                files.append(shown(source, degrees, roll if face else 0, work, f'r{roll}-t{degrees}-{n}'))
                truth.append(face)
            result = subprocess.run([program, 'detect', '--json'] + files, capture_output=True,
                                    text=True, check=True)
            right = wrong = missed = false_positive = 0
            for line, face in zip(result.stdout.splitlines(), truth):
                head = json.loads(line)['head_toward']
                if face:
                    if head is None:
                        missed += 1
                    elif head == EDGE[degrees]:
                        right += 1
                    else:
                        wrong += 1
                elif head is not None:
                    false_positive += 1
            faces = sum(truth)
            print('%-6s %-5s %7d %7d %7d %8.1f%% %6d of %d' % (
                roll, degrees, right, wrong, missed, 100 * right / faces, false_positive,
                len(truth) - faces))
            for f in files:
                os.unlink(f)


def latency(program, work, runs):
    cameras = {}
    for name, source in (('face', PORTRAITS[1]), ('no face', NO_FACE[1])):
        folder = f'{work}/camera-{name.replace(" ", "-")}'
        os.makedirs(folder, exist_ok=True)
        # Fitted into 640x480 (aspect kept, grey around): a camera frame's size and shape.
        picture = Image.open(source).convert('RGB')
        picture.thumbnail((640, 480), Image.BICUBIC)
        frame = Image.new('RGB', (640, 480), (128, 128, 128))
        frame.paste(picture, ((640 - picture.width) // 2, (480 - picture.height) // 2))
        frame.save(f'{folder}/0001.jpg', quality=90)
        cameras[name] = folder
    print()
    print('proposal -> answer, orientd-face resolve from a file camera (640x480 JPEG frames),'
          ' %d runs each' % runs)
    print('%-8s %-7s %9s %9s %9s' % ('camera', 'answer', 'p50 ms', 'p95 ms', 'own p50'))
    for name, folder in cameras.items():
        walls, owns, answers = [], [], set()
        for _ in range(runs):
            start = time.monotonic()
            out = subprocess.run(
                [program, 'resolve', '--camera', f'file:{folder}', '--current', 'normal',
                 '--proposed', 'left-up', '--timeout', '5000'], capture_output=True, text=True,
                check=True).stdout
            walls.append((time.monotonic() - start) * 1000)
            answer = json.loads(out)
            owns.append(answer['elapsed_ms'])
            answers.add(answer['answer'])
        walls.sort()
        print('%-8s %-7s %9.1f %9.1f %9.1f' % (
            name, '/'.join(sorted(answers)), statistics.median(walls),
            walls[min(len(walls) - 1, int(round(0.95 * len(walls))) - 1)], statistics.median(owns)))


def main():
    program = sys.argv[1]
    def option(name, default):
        return sys.argv[sys.argv.index(name) + 1] if name in sys.argv else default
    runs = int(option('--runs', '30'))
    rolls = [int(r) for r in option('--rolls', '0,20,30').split(',') if r != 'none']
    turns = [int(t) for t in option('--turns', '0,90,180,270').split(',')]
    # A warm cache, as on a running system.
    subprocess.run([program, 'detect', PORTRAITS[1]], capture_output=True, check=True)
    with tempfile.TemporaryDirectory(prefix='face-bench-') as work:
        if rolls:
            accuracy(program, work, rolls, turns)
        latency(program, work, runs)


main()
