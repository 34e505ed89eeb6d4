"""Train the compact speaker-embedding model on CPU.

    /usr/bin/python3 tools/voiceprint-training/train.py [--budget-min 80]

Needs the caches from prep.py. The learning-rate schedule runs on training wall-clock time
(--budget-min, evaluation included), so a run ends on time whatever else shares the CPU. Checkpoints go to
work/last.pt every few minutes (a restart resumes from it) and work/best.pt whenever the mean of the
dev so762 and cv61 EERs improves at a dev check (--eval-every-min). export.py takes work/last.pt, the end of the
schedule, by default.
"""
import argparse
import json
import math
import os
import time

import numpy as np
import torch
import torchaudio

from common import WORK, cmn, fbank, load_waves, sampling_weights
from model import AAMSoftmax, build, param_count

SPEEDS = (1.0, 0.9, 1.1)  # each speed of a speaker is its own class


def speed_copies(audio, offsets):
    """Speed-perturbed copies of every utterance (resampling changes pitch and tempo together)."""
    copies = [(audio, offsets)]
    for speed in SPEEDS[1:]:
        src = int(round(16000 * speed))
        waves = []
        for i in range(len(offsets) - 1):
            w = torch.from_numpy(audio[offsets[i]:offsets[i + 1]].astype(np.float32))
            waves.append(torchaudio.functional.resample(w, src, 16000).round().clamp(-32768, 32767)
                         .short().numpy())
        copies.append((np.concatenate(waves), np.cumsum([0] + [len(w) for w in waves]).astype(np.int64)))
    return copies


class Batches(torch.utils.data.IterableDataset):
    """Endless stream of augmented (feats [B, T, 80], labels [B]) batches."""

    def __init__(self, batch, crop_s, seed, balance):
        audio, offsets, meta = load_waves('train')
        speakers = sorted({r['speaker'] for r in meta})
        self.n_speakers = len(speakers)
        idx = {s: i for i, s in enumerate(speakers)}
        self.spk = np.array([idx[r['speaker']] for r in meta])
        self.prob = sampling_weights(self.spk, np.diff(offsets), balance)
        self.audio, self.offsets = audio, offsets
        self.batch, self.crop, self.seed = batch, int(crop_s * 16000), seed
        self.copies = None

    def crop_of(self, rng, audio, offsets, i, n):
        w = audio[offsets[i]:offsets[i + 1]].astype(np.float32) / 32768
        if len(w) < n:
            w = np.tile(w, n // len(w) + 1)
        start = rng.integers(0, len(w) - n + 1)
        return w[start:start + n]

    def augment(self, rng, w):
        n = len(w)
        if rng.random() < 0.3:  # reverb: synthetic exponentially decaying noise RIR
            rt60 = rng.uniform(0.2, 0.8)
            t = np.arange(int(0.4 * 16000)) / 16000
            rir = rng.standard_normal(len(t)) * np.exp(-6.9 * t / rt60)
            rir[0] = np.abs(rir).max() / rng.uniform(0.3, 1.5)  # direct path against the tail
            rir /= np.sqrt((rir ** 2).sum())
            w = np.fft.irfft(np.fft.rfft(w, 2 * n) * np.fft.rfft(rir, 2 * n), 2 * n)[:n].astype(np.float32)
        kind = rng.random()
        if kind < 0.3:  # babble from 1-3 other training utterances
            noise = sum(self.crop_of(rng, self.audio, self.offsets, rng.integers(len(self.spk)), n)
                        for _ in range(rng.integers(1, 4)))
            snr = rng.uniform(10, 20)
        elif kind < 0.6:  # white / pink / brown noise
            colour = rng.integers(3)
            spec = np.fft.rfft(rng.standard_normal(n))
            f = np.maximum(np.arange(len(spec)), 1)
            noise = np.fft.irfft(spec / f ** (colour / 2), n)
            snr = rng.uniform(5, 20)
        else:
            return w
        p_s, p_n = (w ** 2).mean() + 1e-8, (noise ** 2).mean() + 1e-8
        return (w + noise * np.sqrt(p_s / (p_n * 10 ** (snr / 10)))).astype(np.float32)

    def __iter__(self):
        info = torch.utils.data.get_worker_info()
        rng = np.random.default_rng(self.seed + (info.id if info else 0))
        torch.set_num_threads(1)
        if self.copies is None:
            self.copies = speed_copies(self.audio, self.offsets)
        while True:
            feats, labels = [], []
            for i in rng.choice(len(self.spk), self.batch, p=self.prob):
                s = rng.integers(len(SPEEDS))
                w = self.augment(rng, self.crop_of(rng, *self.copies[s], i, self.crop))
                x = cmn(fbank(torch.from_numpy(w)))
                if rng.random() < 0.5:  # light SpecAugment: one frequency band masked
                    f0, fw = rng.integers(0, 72), rng.integers(1, 9)
                    x[:, f0:f0 + fw] = 0
                feats.append(x)
                labels.append(s * self.n_speakers + self.spk[i])
            yield torch.stack(feats), torch.tensor(labels)


def eer(scores, same):
    """Equal error rate (%) and the threshold at which FAR == FRR."""
    order = np.argsort(-scores)
    s, t = same[order], scores[order]
    far = np.cumsum(~s) / max((~s).sum(), 1)  # accepting everything down to this score
    frr = 1 - np.cumsum(s) / max(s.sum(), 1)
    k = np.argmin(np.abs(far - frr))
    return 100 * (far[k] + frr[k]) / 2, float(t[k])


@torch.no_grad()
def embed(model, feats_list):
    """Model outputs for CMN fbank utterances [frames, 80], in eval mode.

    Lengths are rounded down to a multiple of 32 frames and equal lengths go through together:
    a few large calls instead of one per utterance, and oneDNN prepares kernels per input shape.
    """
    model.eval()
    buckets = {}
    for i, f in enumerate(feats_list):
        buckets.setdefault(max(32, len(f) // 32 * 32), []).append(i)
    out = [None] * len(feats_list)
    for frames, idx in buckets.items():
        for k in range(0, len(idx), 32):
            chunk = idx[k:k + 32]
            emb = model(torch.stack([feats_list[i][:frames] for i in chunk]))
            for i, e in zip(chunk, emb):
                out[i] = e
    model.train()
    return torch.stack(out).numpy()


def embed_dev(model, per_speaker=None):
    """L2-normalised embeddings of dev utterances from the cached CMN fbank (see embed).

    per_speaker caps the utterances taken from each speaker, for cheaper checks during training.
    """
    meta = json.load(open(os.path.join(WORK, 'dev_feats.json')))['utterances']
    if per_speaker:
        seen, kept = {}, []
        for u in meta:
            seen[u['speaker']] = seen.get(u['speaker'], 0) + 1
            if seen[u['speaker']] <= per_speaker:
                kept.append(u)
        meta = kept
    feats = np.memmap(os.path.join(WORK, 'dev_feats.f32'), dtype='<f4', mode='r').reshape(-1, 80)
    emb = embed(model, [torch.from_numpy(np.array(feats[u['offset']:u['offset'] + u['frames']]))
                        for u in meta])
    return emb / np.linalg.norm(emb, axis=1, keepdims=True), meta


def dev_eer(model):
    """Dev EER (%) per subset on up to 10 utterances per speaker."""
    emb, meta = embed_dev(model, per_speaker=10)
    spk = np.array([u['speaker'] for u in meta])
    subset = np.array([u['set'] for u in meta])
    result = {}
    for name in sorted(set(subset)):
        m = subset == name
        e, s = emb[m], spk[m]
        iu = np.triu_indices(len(s), 1)
        result[name] = eer((e @ e.T)[iu], (s[:, None] == s[None, :])[iu])[0]
    return result


def load_onnx_weights(model, path):
    """Warm start from a shipped ONNX file: export.py keeps the torch names (prefixed `net.`) and the
    graph keeps BatchNorm unfused, so every parameter and running statistic comes back exactly."""
    import onnx
    from onnx import numpy_helper
    weights = {i.name[len('net.'):]: torch.from_numpy(numpy_helper.to_array(i).copy())
               for i in onnx.load(path).graph.initializer if i.name.startswith('net.')}
    missing, unexpected = model.load_state_dict(weights, strict=False)
    assert not unexpected and all(k.endswith('num_batches_tracked') for k in missing), (missing, unexpected)


def lr_at(frac, peak, warm=0.03):
    if frac < warm:
        return peak * frac / warm
    return 1e-5 + (peak - 1e-5) * 0.5 * (1 + math.cos(math.pi * min(1.0, (frac - warm) / (1 - warm))))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--arch', default='ecapa256')
    ap.add_argument('--budget-min', type=float, default=80)
    ap.add_argument('--batch', type=int, default=64)
    ap.add_argument('--crop-s', type=float, default=2.0)
    ap.add_argument('--lr', type=float, default=2e-3)
    ap.add_argument('--margin', type=float, default=0.2)
    ap.add_argument('--eval-every-min', type=float, default=20)
    ap.add_argument('--save-every-min', type=float, default=3)
    ap.add_argument('--seed', type=int, default=1)
    ap.add_argument('--balance', type=float, default=0.0,
                    help='share of batches drawn speaker-balanced rather than seconds-weighted (0..1)')
    ap.add_argument('--init-onnx', help='warm start: network weights from a shipped ONNX model')
    ap.add_argument('--head-steps', type=int, default=0,
                    help='steps at the start that train only the (new) classifier head')
    ap.add_argument('--margin-ramp', type=float, default=0.2, help='fraction of the budget over which the margin ramps in')
    args = ap.parse_args()
    torch.set_num_threads(2)
    torch.manual_seed(args.seed)

    data = Batches(args.batch, args.crop_s, args.seed, args.balance)
    model = build(args.arch)
    head = AAMSoftmax(192, data.n_speakers * len(SPEEDS))
    opt = torch.optim.AdamW(list(model.parameters()) + list(head.parameters()), lr=args.lr, weight_decay=0.02)
    state = {'step': 0, 'train_s': 0.0, 'best': 1e9, 'log': []}
    last = os.path.join(WORK, 'last.pt')
    if os.path.exists(last):
        ck = torch.load(last)
        model.load_state_dict(ck['model']), head.load_state_dict(ck['head']), opt.load_state_dict(ck['opt'])
        state = ck['state']
        data.seed += state['step']  # fresh augmentation stream after a restart
        print(f"resumed at step {state['step']}, {state['train_s'] / 60:.1f} min trained", flush=True)
    elif args.init_onnx:
        load_onnx_weights(model, args.init_onnx)
        print(f'warm start from {args.init_onnx}', flush=True)
    print(f'{args.arch}: {param_count(model)} parameters, {data.n_speakers} speakers', flush=True)

    def save(path):
        torch.save({'model': model.state_dict(), 'head': head.state_dict(), 'opt': opt.state_dict(),
                    'state': state, 'args': vars(args)}, path + '.tmp')
        os.replace(path + '.tmp', path)

    loader = torch.utils.data.DataLoader(data, batch_size=None, num_workers=1, prefetch_factor=4)
    budget = args.budget_min * 60
    t_save = t_eval = state['train_s']
    tick, loss_sum, acc_sum, n = time.time(), 0.0, 0.0, 0
    for feats, labels in loader:
        frac = state['train_s'] / budget
        for g in opt.param_groups:
            g['lr'] = lr_at(frac, args.lr)
        head.margin = args.margin * min(1.0, frac / args.margin_ramp) if args.margin_ramp else args.margin
        if state['step'] < args.head_steps:  # a new head learns against the frozen warm-started network
            model.eval()
            with torch.no_grad():
                emb = model(feats)
            model.train()
        else:
            emb = model(feats)
        loss, acc = head(emb, labels)
        opt.zero_grad()
        loss.backward()
        opt.step()
        state['step'] += 1
        now = time.time()
        state['train_s'] += now - tick
        tick = now
        loss_sum, acc_sum, n = loss_sum + loss.item(), acc_sum + acc.item(), n + 1
        done = state['train_s'] >= budget
        if state['step'] % 50 == 0:
            print(f"step {state['step']} {state['train_s'] / 60:.1f}min lr {lr_at(frac, args.lr):.2e} "
                  f"m {head.margin:.2f} loss {loss_sum / n:.3f} acc {acc_sum / n:.3f}", flush=True)
            loss_sum, acc_sum, n = 0.0, 0.0, 0
        if state['train_s'] - t_eval >= args.eval_every_min * 60:
            t0 = time.time()
            res = dev_eer(model)
            state['log'].append({'step': state['step'], 'min': state['train_s'] / 60, **res})
            print(f"EVAL step {state['step']} " + ' '.join(f'{k} {v:.2f}%' for k, v in res.items())
                  + f" ({time.time() - t0:.0f}s)", flush=True)
            score = (res['so762'] + res.get('cv61', res['so762'])) / 2  # the two targets of the card
            if score < state['best']:
                state['best'] = score
                save(os.path.join(WORK, 'best.pt'))
            t_eval = state['train_s']
        if done or state['train_s'] - t_save >= args.save_every_min * 60:
            save(last)
            t_save = state['train_s']
        if done:
            break
    print('done', flush=True)


if __name__ == '__main__':
    main()
