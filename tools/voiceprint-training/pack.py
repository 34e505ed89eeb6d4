"""Pack a speech folder as raw Opus packets, small enough to travel to a GPU machine with the repository.

    /usr/bin/python3 tools/voiceprint-training/pack.py /work/shared/speech/train \\
        tools/voiceprint-training/gpu-data/train.npz [--kbps 12] [--max-seconds S] [--estimate N] [--jobs 2]

The folder is laid out like the corpus (manifest.tsv with path, set, speaker; Ogg Opus files). Each
recording is decoded and re-encoded at --kbps with libopus (opus.py): the train split's 8.8 hours
come to about 48 MB at 12 kbps, where the corpus files take 138 MB. One compressed npz holds
every packet, each recording's packet range, codec delay and length, and its speaker and set;
libopus.so.0 is copied beside it, so gpu_train.py decodes with nothing installed on the GPU machine.
"""
import argparse
import os
import shutil
import subprocess
import sys
from multiprocessing import Pool

import numpy as np

import opus


def read_manifest(folder):
    with open(os.path.join(folder, 'manifest.tsv')) as f:
        header = f.readline().rstrip('\n').split('\t')
        return [dict(zip(header, line.rstrip('\n').split('\t'))) for line in f if line.strip()]


def repack(job):
    path, kbps, max_seconds = job
    wave = opus.read_ogg_opus(path)
    keep = int(max_seconds * opus.RATE) if max_seconds else len(wave)
    if len(wave) > keep:
        # Training draws crops of a few seconds; past a point a recording's length only adds bytes. The
        # middle is kept, where a read recording's speech is.
        start = (len(wave) - keep) // 2
        wave = wave[start:start + keep]
    packets, skip = opus.encode(wave, kbps)
    return packets, skip, len(wave)


def loaded_library_path():
    """Where the libopus this process loaded lives (the dynamic loader chose it)."""
    opus.library()
    with open('/proc/self/maps') as maps:
        for line in maps:
            if opus.LIBRARY in line or 'libopus.so' in line:
                return line.split()[-1]
    raise OSError('libopus is not mapped into this process')


DEVICE_TREE_LIMIT = 64 * 2 ** 20  # what the device tool sends: the working tree and the carried paths together


def tree_bytes(inside):
    """Bytes of the git working tree holding the folder `inside` that a device run sends (tracked and
    untracked-not-ignored files); None outside a git checkout."""
    top = subprocess.run(['git', 'rev-parse', '--show-toplevel'], cwd=inside, capture_output=True, text=True)
    if top.returncode != 0:
        return None
    root = top.stdout.strip()
    listed = subprocess.run(['git', 'ls-files', '-z', '--cached', '--others', '--exclude-standard'], cwd=root,
                            capture_output=True, check=True)
    return sum(os.path.getsize(os.path.join(root, f)) for f in listed.stdout.decode().split('\0')
               if f and os.path.isfile(os.path.join(root, f)))


def travelling_bytes(folder):
    """What a device run carrying the git-ignored `folder` sends: the tree and the folder's files."""
    tree = tree_bytes(folder)
    return None if tree is None else tree + sum(os.path.getsize(os.path.join(folder, f)) for f in os.listdir(folder))


def unpack(path):
    """The pack's rows as (packets, skip, samples) and its speaker and set per row."""
    d = np.load(path)
    blob, sizes, first = d['packets'].tobytes(), d['packet_bytes'].astype(np.int64), d['first_packet']
    start = np.concatenate([[0], np.cumsum(sizes)])
    rows = []
    for i in range(len(first) - 1):
        a, b = int(first[i]), int(first[i + 1])
        rows.append(([blob[start[k]:start[k + 1]] for k in range(a, b)], int(d['skip'][i]), int(d['samples'][i])))
    return rows, [str(s) for s in d['speaker']], [str(s) for s in d['set']]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('speech', help='folder with manifest.tsv (path, set, speaker) and its Ogg Opus files')
    ap.add_argument('out', help='the pack (.npz); libopus.so.0 is copied into the same folder')
    ap.add_argument('--kbps', type=int, default=12)
    ap.add_argument('--max-seconds', type=float, help='keep at most this many seconds of each recording')
    ap.add_argument('--estimate', type=int, metavar='N',
                    help='write nothing: pack every Nth recording and print what the whole pack would weigh')
    ap.add_argument('--jobs', type=int, default=2)
    args = ap.parse_args()
    rows = read_manifest(args.speech)
    chosen = rows[::args.estimate] if args.estimate else rows
    with Pool(args.jobs) as pool:
        coded = pool.map(repack, [(os.path.join(args.speech, r['path']), args.kbps, args.max_seconds) for r in chosen],
                         chunksize=8)
    sizes = [len(p) for packets, _, _ in coded for p in packets]
    if args.estimate:
        # Packets compress little; each carries a 2-byte length in the pack besides its bytes.
        whole = (sum(sizes) + 2 * len(sizes)) * len(rows) / len(chosen)
        tree = tree_bytes(os.path.dirname(os.path.abspath(__file__))) or 0
        print(f'{args.kbps} kbps{f", at most {args.max_seconds:g} s each" if args.max_seconds else ""}: about '
              f'{whole / 2 ** 20:.1f} MiB for {len(rows)} recordings (from {len(chosen)}); with the tree a device run '
              f'would send about {(tree + whole) / 2 ** 20:.1f} MiB of {DEVICE_TREE_LIMIT // 2 ** 20}', file=sys.stderr)
        return 0
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    tmp = args.out + '.tmp.npz'
    np.savez_compressed(
        tmp, packets=np.frombuffer(b''.join(p for packets, _, _ in coded for p in packets), np.uint8),
        packet_bytes=np.array(sizes, np.uint16),
        first_packet=np.cumsum([0] + [len(packets) for packets, _, _ in coded]).astype(np.int64),
        skip=np.array([skip for _, skip, _ in coded], np.int32),
        samples=np.array([n for _, _, n in coded], np.int64),
        speaker=np.array([r['speaker'] for r in rows]), set=np.array([r['set'] for r in rows]))
    os.replace(tmp, args.out)
    shutil.copy(loaded_library_path(), os.path.join(os.path.dirname(os.path.abspath(args.out)), opus.LIBRARY))
    seconds = sum(n for _, _, n in coded) / opus.RATE
    print(f'{args.out}: {len(rows)} recordings, {len({r["speaker"] for r in rows})} speakers, '
          f'{seconds / 3600:.2f} h, {os.path.getsize(args.out) / 1e6:.1f} MB', file=sys.stderr)
    total = travelling_bytes(os.path.dirname(os.path.abspath(args.out)))
    if total is not None:
        print(f'a device run carrying this folder sends {total / 2 ** 20:.1f} MiB of its {DEVICE_TREE_LIMIT // 2 ** 20} MiB',
              file=sys.stderr)
        if total > DEVICE_TREE_LIMIT:
            print(f'too large for a device run: pack again with a lower --kbps than {args.kbps}', file=sys.stderr)
            return 1
    return 0


if __name__ == '__main__':
    sys.exit(main())
