"""Shared pieces: paths, the contract front-end, the data cache layout and how recordings are drawn."""
import json
import os

import numpy as np
import torch
import torchaudio

HERE = os.path.dirname(os.path.abspath(__file__))
# VIP_TRAINING_WORK moves caches and checks elsewhere (the smoke test's scratch folder)
WORK = os.environ.get('VIP_TRAINING_WORK', os.path.join(HERE, 'work'))
MODELS = os.path.normpath(os.path.join(HERE, '..', '..', 'origin', 'src', 'voiceprint', 'models'))
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


def sampling_weights(speaker: np.ndarray, samples: np.ndarray, balance: float) -> np.ndarray:
    """Probability of drawing each recording: `balance` of it shared evenly by speakers, the rest by seconds.

    By seconds alone the sets with long recordings dominate; by speaker, a set of many speakers with a
    few short clips each (cv61) is seen as often as it has speakers.
    """
    by_seconds = samples.astype(np.float64) / samples.sum()
    per_speaker = 1.0 / np.bincount(speaker)[speaker]
    return (1 - balance) * by_seconds + balance * per_speaker / per_speaker.sum()


# A batched run's folder (gpu_train.py writes it, export.py reads it): run.json, and each network's
# weights (float32) and buffers under their torch names in ARCH-N.npz parts of at most 14 MiB, because the device
# machine sends back files of up to 16 MiB.
RUN_STATE = 'run.json'
RUN_PART_BYTES = 14 * 2 ** 20


def save_run_weights(folder: str, arch: str, state_dict) -> None:
    parts, size = [{}], 0
    for name in sorted(state_dict):
        value = state_dict[name].detach().cpu()
        value = (value.float() if value.is_floating_point() else value).numpy()
        if size + value.nbytes > RUN_PART_BYTES and parts[-1]:
            parts.append({})
            size = 0
        parts[-1][name] = value
        size += value.nbytes
    for i, part in enumerate(parts):
        tmp = os.path.join(folder, f'.{arch}-{i}.npz')
        np.savez(tmp, **part)
        os.replace(tmp, os.path.join(folder, f'{arch}-{i}.npz'))


def load_run(folder: str, arch: str):
    """A network's weights (as tensors) and the run's state from a batched run's folder."""
    with open(os.path.join(folder, RUN_STATE)) as f:
        state = json.load(f)
    if arch not in state['archs']:
        raise SystemExit(f"{folder}: trained {', '.join(state['archs'])}, not {arch}")
    weights, i = {}, 0
    while os.path.exists(os.path.join(folder, f'{arch}-{i}.npz')):
        weights.update({k: torch.from_numpy(v) for k, v in np.load(os.path.join(folder, f'{arch}-{i}.npz')).items()})
        i += 1
    return weights, state
