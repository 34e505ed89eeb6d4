#!/usr/bin/env python3
"""Writes torch-windows.json: torchaudio's float32 analysis windows for 25 ms frames at 16 kHz.

torch builds them with vectorised float32 cos/pow (Sleef), which differ from correctly rounded
values in the last bit for about a third of the samples. fbank.ts uses these exact tables so that its
features match torchaudio.compliance.kaldi.fbank bit for bit in the time domain.
Usage: /usr/bin/python3 make-torch-windows.py   (torch 1.13, as used for the fixtures)
"""
import base64
import json
import os

import torch

LENGTH = 400  # 25 ms at 16 kHz
WINDOWS = {
    'povey': torch.hann_window(LENGTH, periodic=False, dtype=torch.float32).pow(0.85),
    'hamming': torch.hamming_window(LENGTH, periodic=False, alpha=0.54, beta=0.46, dtype=torch.float32),
    'hanning': torch.hann_window(LENGTH, periodic=False, dtype=torch.float32),
}

out = {'torch': torch.__version__, 'length': LENGTH, 'float32_le_base64': {
    name: base64.b64encode(window.numpy().astype('<f4').tobytes()).decode('ascii') for name, window in WINDOWS.items()}}
with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'origin', 'src', 'voiceprint', 'torch-windows.json'), 'w') as f:
    f.write(json.dumps(out, indent=2) + '\n')
