#!/usr/bin/env python3
"""Writes small random-weight ONNX graphs that stand in for the speaker models in tests.

Each stand-in has the real model's input/output names, shapes and ONNX metadata, so the loading
path (manifest, sha256, metadata and shape checks, both runtimes) is exercised without the 30 MB
production file. Usage: make-stand-ins.py OUT_DIR  (prints a JSON description of what it wrote).
"""
import json
import os
import sys

import onnx
import torch
import torch.nn as nn


class StatsPoolingNet(nn.Module):
    """[batch, frames, 80] -> conv over time -> mean+std pooling -> linear embedding."""

    def __init__(self, dim: int):
        super().__init__()
        self.conv = nn.Conv1d(80, 64, kernel_size=5, padding=2)
        self.embed = nn.Linear(128, dim)

    def forward(self, feats):
        h = torch.relu(self.conv(feats.transpose(1, 2)))
        stats = torch.cat([h.mean(-1), torch.sqrt(h.var(-1, unbiased=False) + 1e-5)], 1)
        return self.embed(stats)


# sherpa-onnx's scripts/3dspeaker/export-onnx.py: input "x" [N, T, 80], output "embedding", opset 13,
# and these metadata_props on the published 3dspeaker_speech_campplus_sv_en_voxceleb_16k.onnx.
CAMPP_METADATA = {
    'framework': '3d-speaker',
    'language': 'English',
    'url': 'https://www.modelscope.cn/models/damo/speech_campplus_sv_en_voxceleb_16k/summary',
    'comment': 'This model is from damo/speech_campplus_sv_en_voxceleb_16k',
    'sample_rate': '16000',
    'output_dim': '512',
    'normalize_samples': '1',
    'feature_normalize_type': 'global-mean',
}

STAND_INS = [
    # (file, input name, input axes, output name, dim, metadata)
    ('campplus-stand-in.onnx', 'x', ('N', 'T'), 'embedding', 512, CAMPP_METADATA),
    ('vip-speaker-stand-in.onnx', 'feats', ('batch', 'frames'), 'embedding', 192, {'framework': 'vip', 'output_dim': '192'}),
]


def export(out_dir, file, input_name, axes, output_name, dim, metadata):
    torch.manual_seed(dim)
    model = StatsPoolingNet(dim).eval()
    path = os.path.join(out_dir, file)
    torch.onnx.export(model, torch.rand(1, 100, 80), path, opset_version=13, input_names=[input_name],
                      output_names=[output_name],
                      dynamic_axes={input_name: {0: axes[0], 1: axes[1]}, output_name: {0: axes[0]}})
    proto = onnx.load(path)
    for key, value in metadata.items():
        entry = proto.metadata_props.add()
        entry.key, entry.value = key, value
    onnx.save(proto, path)
    return {'file': file, 'input': input_name, 'output': output_name, 'dim': dim}


def main():
    out_dir = sys.argv[1]
    os.makedirs(out_dir, exist_ok=True)
    print(json.dumps([export(out_dir, *spec) for spec in STAND_INS]))


if __name__ == '__main__':
    main()
