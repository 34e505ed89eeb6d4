"""Shared pieces: paths, the contract front-end and the data cache layout."""
import os

import numpy as np
import torch
import torchaudio

HERE = os.path.dirname(os.path.abspath(__file__))
WORK = os.path.join(HERE, 'work')
MODELS = os.path.normpath(os.path.join(HERE, '..', 'models'))
SPEECH = os.environ.get('VIP_SPEECH_DIR', '/work/shared/speech')
SAMPLE_RATE = 16000
N_MELS = 80


def fbank(wave: torch.Tensor) -> torch.Tensor:
    """Contract front-end: Kaldi fbank of a [-1, 1] waveform (1-D), returns [frames, 80], no CMN."""
    return torchaudio.compliance.kaldi.fbank(
        wave.unsqueeze(0), num_mel_bins=N_MELS, frame_length=25, frame_shift=10, dither=0.0,
        window_type='povey', sample_frequency=SAMPLE_RATE, energy_floor=0.0)


def cmn(feats: torch.Tensor) -> torch.Tensor:
    return feats - feats.mean(dim=0, keepdim=True)


def read_manifest(split: str):
    rows = []
    with open(os.path.join(SPEECH, split, 'manifest.tsv')) as f:
        header = f.readline().rstrip('\n').split('\t')
        for line in f:
            rows.append(dict(zip(header, line.rstrip('\n').split('\t'))))
    return rows


def load_waves(split: str):
    """Decoded int16 cache written by prep.py: one flat array plus per-utterance offsets."""
    d = np.load(os.path.join(WORK, f'{split}_wave.npz'), allow_pickle=False)
    meta = read_manifest(split)
    return d['audio'], d['offsets'], meta
