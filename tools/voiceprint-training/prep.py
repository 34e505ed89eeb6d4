"""Decode the Opus corpus once into int16 caches and write dev fbank features for eval.ts.

work/{train,dev}_wave.npz  flat int16 audio + offsets (row i = manifest row i)
work/dev_feats.f32         CMN fbank of every dev utterance, float32 [sum(frames), 80]
work/dev_feats.json        per utterance: path, set, speaker, offset (rows), frames
work/dev_means.f32         per-utterance mean of the raw fbank, float32 [utterances, 80] (for the
                           non-neural baseline, whose statistics the CMN features no longer hold)
"""
import json
import os
from multiprocessing import Pool

import numpy as np
import soundfile as sf
import torch

from common import SPEECH, WORK, cmn, fbank, read_manifest


def decode(path):
    audio, sr = sf.read(path, dtype='int16')
    assert sr == 16000 and audio.ndim == 1, path
    return audio


def cache_waves(split):
    out = os.path.join(WORK, f'{split}_wave.npz')
    if os.path.exists(out):
        return
    rows = read_manifest(split)
    with Pool(2) as pool:
        waves = pool.map(decode, [os.path.join(SPEECH, split, r['path']) for r in rows], chunksize=16)
    offsets = np.cumsum([0] + [len(w) for w in waves]).astype(np.int64)
    np.savez(out + '.tmp.npz', audio=np.concatenate(waves), offsets=offsets)
    os.replace(out + '.tmp.npz', out)
    print(split, len(rows), 'utterances', offsets[-1] / 16000 / 60, 'min')


def dev_features():
    if os.path.exists(os.path.join(WORK, 'dev_means.f32')):
        return
    d = np.load(os.path.join(WORK, 'dev_wave.npz'))
    audio, offsets = d['audio'], d['offsets']
    index, row, means = [], 0, []
    with open(os.path.join(WORK, 'dev_feats.f32.tmp'), 'wb') as f:
        for i, r in enumerate(read_manifest('dev')):
            wave = torch.from_numpy(audio[offsets[i]:offsets[i + 1]].astype(np.float32) / 32768)
            raw = fbank(wave)
            means.append(raw.mean(0).numpy())
            feats = cmn(raw).numpy().astype('<f4')
            f.write(feats.tobytes())
            index.append({'path': r['path'], 'set': r['set'], 'speaker': r['speaker'],
                          'offset': row, 'frames': feats.shape[0]})
            row += feats.shape[0]
    os.replace(os.path.join(WORK, 'dev_feats.f32.tmp'), os.path.join(WORK, 'dev_feats.f32'))
    with open(os.path.join(WORK, 'dev_feats.json'), 'w') as f:
        json.dump({'dim': 80, 'utterances': index}, f)
    np.stack(means).astype('<f4').tofile(os.path.join(WORK, 'dev_means.f32'))


if __name__ == '__main__':
    torch.set_num_threads(2)
    os.makedirs(WORK, exist_ok=True)
    cache_waves('train')
    cache_waves('dev')
    dev_features()
