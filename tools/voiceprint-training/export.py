"""Export a checkpoint to an ONNX model and refresh its entry in the manifest beside it.

    /usr/bin/python3 tools/voiceprint-training/export.py [--ckpt work/last.pt]          # train.py's
    /usr/bin/python3 tools/voiceprint-training/export.py --run RUN_DIR --arch ecapa256  # gpu_train.py's

The graph maps CMN fbank [batch, frames, 80] to an L2-normalised embedding [batch, 192]. The
script also writes work/onnx_check.json (an input and torch's output) for eval.ts to compare
against.
"""
import argparse
import hashlib
import json
import os

import onnx
import torch
import torch.nn as nn
import torch.nn.functional as F

from common import MODELS, WORK, load_run
from model import build, param_count
from train import load_onnx_weights

FRONTEND = {'sample_rate': 16000, 'num_mel_bins': 80, 'frame_length_ms': 25, 'frame_shift_ms': 10,
            'dither': 0, 'preemphasis': 0.97, 'remove_dc_offset': True, 'snip_edges': True,
            'window_type': 'povey', 'waveform_scale': 1, 'cmn': True}


class Exported(nn.Module):
    def __init__(self, net):
        super().__init__()
        self.net = net

    def forward(self, feats):
        return F.normalize(self.net(feats), dim=1)


def write_manifest(onnx_path, dim):
    """Create or refresh this model's entry in the manifest of its folder (bundled models live beside
    their manifest); other entries and a calibrated threshold stay.

    A model new to the manifest goes before the other bundled models: the engine runs the first
    bundled one (manifest.ts selectModel), so exporting a new version makes it the default."""
    path = os.path.join(os.path.dirname(os.path.abspath(onnx_path)), 'manifest.json')
    manifest = json.load(open(path)) if os.path.exists(path) else {'models': []}
    name = os.path.splitext(os.path.basename(onnx_path))[0]
    old = next((m for m in manifest['models'] if m['name'] == name), {})
    data = open(onnx_path, 'rb').read()
    entry = {
        'name': name, 'file': os.path.basename(onnx_path), 'sha256': hashlib.sha256(data).hexdigest(),
        'bytes': len(data), 'dim': dim,
        'input': {'name': 'feats', 'shape': ['batch', 'frames', 80]},
        'output': {'name': 'embedding', 'shape': ['batch', dim]},
        'frontend': FRONTEND, 'threshold': old.get('threshold', 0.0), 'normalized_output': True,
        'source': 'bundled', 'card': name + '.md',
    }
    if old:
        manifest['models'][manifest['models'].index(old)] = entry
    else:
        models = manifest['models']
        first_bundled = next((i for i, m in enumerate(models) if m['source'] == 'bundled'), len(models))
        models.insert(first_bundled, entry)
    with open(path, 'w') as f:
        f.write(json.dumps(manifest, indent=2) + '\n')


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--ckpt', default=os.path.join(WORK, 'last.pt'))
    ap.add_argument('--run', help="a gpu_train.py run's folder, instead of --ckpt")
    ap.add_argument('--arch', help='which of the run\'s networks (with --run)')
    ap.add_argument('--out', default=os.path.join(MODELS, 'vip-speaker-v2.onnx'))
    ap.add_argument('--average-onnx', help='average the checkpoint weight by weight with this warm-start ONNX model')
    ap.add_argument('--average-weight', type=float, default=0.5, help="the ONNX model's share of the average")
    args = ap.parse_args()
    torch.set_num_threads(2)

    if args.run:
        if not args.arch:
            raise SystemExit('--run needs --arch')
        weights, state = load_run(args.run, args.arch)
        ck, source = {'model': weights, 'state': state, 'args': {'arch': args.arch}}, f'{args.run} ({args.arch})'
    else:
        ck, source = torch.load(args.ckpt), args.ckpt
    net = build(ck['args']['arch'])
    net.load_state_dict(ck['model'])
    if args.average_onnx:
        # Both networks descend from the same weights (train.py --init-onnx), so their average is a
        # working network between them, which keeps more of the earlier model's strengths.
        earlier = build(ck['args']['arch'])
        load_onnx_weights(earlier, args.average_onnx)
        w = args.average_weight
        mine, theirs = net.state_dict(), earlier.state_dict()
        net.load_state_dict({k: (1 - w) * v + w * theirs[k] if v.is_floating_point() else v for k, v in mine.items()})
        print(f'averaged with {args.average_onnx} (share {w})', flush=True)
    net.eval()
    print(f"{source}: step {ck['state']['step']}, {ck['state']['train_s'] / 60:.1f} min trained, "
          f"{param_count(net)} parameters", flush=True)
    model = Exported(net).eval()

    torch.onnx.export(model, torch.randn(1, 300, 80), args.out, opset_version=17, input_names=['feats'],
                      output_names=['embedding'],
                      dynamic_axes={'feats': {0: 'batch', 1: 'frames'}, 'embedding': {0: 'batch'}})
    onnx.checker.check_model(onnx.load(args.out))
    print(f'wrote {args.out} ({os.path.getsize(args.out)} bytes)')
    write_manifest(args.out, 192)

    check = torch.randn(2, 157, 80, generator=torch.Generator().manual_seed(0))
    with torch.no_grad():
        expected = model(check)
    os.makedirs(WORK, exist_ok=True)
    with open(os.path.join(WORK, 'onnx_check.json'), 'w') as f:
        json.dump({'shape': list(check.shape), 'input': check.flatten().tolist(),
                   'embedding': expected.flatten().tolist()}, f)


if __name__ == '__main__':
    main()
