"""Train several speaker networks on the same batches, built whole on one device, within a deadline.

    python3 tools/voiceprint-training/gpu_train.py PACK.npz [--deadline-s 570] [--archs ecapa512,ecapa256]

Made for a short GPU rental (README.md gives the one command); it runs on the CPU as well, which is
how the smoke test (gpu-train.test.ts) runs it. PACK.npz comes from pack.py. What train.py does crop
by crop on the CPU is done here on the device, a batch at a time: speed copies (0.9, 1.0, 1.1, each
its own class), random crops, synthetic-RIR reverb, babble and coloured noise, the contract's Kaldi
fbank (checked at start against common.fbank, torchaudio's own), CMN, a frequency and a time mask,
AAM softmax; bf16 autocast on CUDA. The schedule runs on wall-clock seconds (or --steps), so the
run ends by --deadline-s whatever the machine; the networks are saved every --save-every-s into
--out (default $OUT, else work/gpu-run) as common.save_run_weights lays them out, and export.py
--run turns one into an ONNX model with its manifest entry.
"""
import argparse
import contextlib
import json
import os
import sys
import time
from multiprocessing import Pool

import numpy as np
import torch
import torch.nn.functional as F
import torchaudio

import opus
import pack
from common import N_MELS, RUN_STATE, SAMPLE_RATE, WORK, fbank, sampling_weights, save_run_weights
from model import AAMSoftmax, build, param_count
from train import SPEEDS, load_onnx_weights, lr_at

STARTED = time.time()
FBANK_TOLERANCE = 1e-2  # log-mel units; float32 FFTs on a GPU agree with torchaudio's to about 5e-4
MIN_SAMPLES = SAMPLE_RATE // 10
RESAMPLE_BATCH_SAMPLES = 2 ** 24


class Log:
    def __init__(self, folder):
        self.file = os.path.join(folder, 'train.log')

    def __call__(self, *parts):
        line = f'[{time.time() - STARTED:6.1f}s] ' + ' '.join(str(p) for p in parts)
        print(line, flush=True)
        with open(self.file, 'a') as f:
            print(line, file=f)


def decode_row(row):
    return opus.decode(*row)


def decode_pack(path, jobs):
    """Every recording of the pack as int16, and its speaker. Runs before CUDA starts: the pool forks."""
    opus.use_library_beside(path)
    rows, speakers, _ = pack.unpack(path)
    with Pool(jobs) as pool:
        return pool.map(decode_row, rows, chunksize=32), speakers


def speed_copy(waves, speed, device):
    """The recordings played at `speed` (pitch and tempo together), as train.py's speed_copies makes them.

    Recordings of similar length go through one resampler call together, zero-padded: torchaudio pads
    each recording with zeros anyway, so every output has the one-at-a-time result's length and
    samples (within one int16 step, float rounding), and a few hundred calls replace thousands of
    differently shaped ones.
    """
    source = int(round(SAMPLE_RATE * speed))
    resample = torchaudio.transforms.Resample(source, SAMPLE_RATE).to(device)
    order = sorted(range(len(waves)), key=lambda i: len(waves[i]))
    out = [None] * len(waves)
    first = 0
    while first < len(order):
        last = first + 1
        while last < len(order) and (last - first + 1) * len(waves[order[last]]) <= RESAMPLE_BATCH_SAMPLES:
            last += 1
        group = order[first:last]
        padded = np.zeros((len(group), len(waves[group[-1]])), np.float32)
        for row, i in enumerate(group):
            padded[row, :len(waves[i])] = waves[i]
        played = resample(torch.from_numpy(padded).to(device)).round().clamp(-32768, 32767).short()
        for row, i in enumerate(group):
            out[i] = played[row, :-(-len(waves[i]) * SAMPLE_RATE // source)]
        first = last
    return out


class Corpus:
    """Every speed copy on the device in one int16 tensor; a crop is gathered by index arithmetic."""

    def __init__(self, waves, speakers, balance, device):
        kept = [i for i, w in enumerate(waves) if len(w) >= MIN_SAMPLES]
        names = sorted({speakers[i] for i in kept})
        self.n_speakers, self.n_recordings = len(names), len(kept)
        index = {s: i for i, s in enumerate(names)}
        speaker = np.array([index[speakers[i]] for i in kept])
        originals = [torch.from_numpy(waves[i]).to(device) for i in kept]
        copies = [originals if speed == 1.0 else speed_copy([waves[i] for i in kept], speed, device) for speed in SPEEDS]
        lengths = [len(w) for copy in copies for w in copy]
        self.audio = torch.cat([w for copy in copies for w in copy])
        self.length = torch.tensor(lengths, device=device)
        self.start = torch.tensor(np.cumsum([0] + lengths[:-1]), device=device)
        # copy s of speaker k is class s * n_speakers + k; rows of copy 0 are the recordings as they are
        self.label = torch.from_numpy(np.concatenate([s * self.n_speakers + speaker for s in range(len(SPEEDS))])).to(device)
        self.n_classes = self.n_speakers * len(SPEEDS)
        self.weights = torch.from_numpy(sampling_weights(speaker, np.array([len(w) for w in originals]), balance)).to(device)
        self.device = device

    def crops(self, rows, samples):
        """A random `samples`-long crop of each row, tiled where the recording is shorter, in [-1, 1]."""
        length = self.length[rows]
        offset = (torch.rand(len(rows), device=self.device) * torch.clamp(length - samples + 1, min=1)).long()
        at = torch.arange(samples, device=self.device)
        return self.audio[self.start[rows, None] + (offset[:, None] + at[None]) % length[:, None]].float() / 32768

    def draw(self, batch):
        """Rows to crop: recordings by sampling_weights, each at a random speed."""
        recording = torch.multinomial(self.weights, batch, replacement=True)
        return torch.randint(len(SPEEDS), (batch,), device=self.device) * self.n_recordings + recording


class Fbank:
    """common.fbank (torchaudio.compliance.kaldi.fbank in the contract's settings) for a batch on the device."""

    def __init__(self, device, n_fft=512, frame=400, shift=160, low_hz=20.0):
        self.frame, self.shift, self.pad = frame, shift, n_fft - frame
        self.window = (torch.hann_window(frame, periodic=False, dtype=torch.float64) ** 0.85).float().to(device)
        mel = lambda hz: 1127.0 * torch.log(1.0 + hz / 700.0)  # noqa: E731
        low, high = mel(torch.tensor(low_hz, dtype=torch.float64)), mel(torch.tensor(SAMPLE_RATE / 2, dtype=torch.float64))
        step = (high - low) / (N_MELS + 1)
        left = low + torch.arange(N_MELS, dtype=torch.float64)[:, None] * step
        bins = mel(SAMPLE_RATE / n_fft * torch.arange(n_fft // 2, dtype=torch.float64))[None]
        rise, fall = (bins - left) / step, (left + 2 * step - bins) / step
        banks = torch.clamp(torch.minimum(rise, fall), min=0)
        self.banks = F.pad(banks, (0, 1)).float().T.contiguous().to(device)  # [n_fft / 2 + 1, mels]; Nyquist unused
        self.floor = torch.finfo(torch.float32).eps

    def __call__(self, wave):  # [B, samples] in [-1, 1] -> [B, frames, mels]
        frames = wave.unfold(1, self.frame, self.shift)
        frames = frames - frames.mean(-1, keepdim=True)
        frames = (frames - 0.97 * torch.cat([frames[..., :1], frames[..., :-1]], -1)) * self.window
        power = torch.fft.rfft(F.pad(frames, (0, self.pad)), dim=-1).abs().pow(2)
        return torch.clamp(power @ self.banks, min=self.floor).log()


def check_fbank(batched, wave):
    """Largest difference between the batched front-end and common.fbank on the same crops; stops the run past the tolerance."""
    reference = torch.stack([fbank(w) for w in wave.cpu()])
    worst = float((batched(wave).cpu() - reference).abs().max())
    if worst > FBANK_TOLERANCE:
        raise SystemExit(f'the batched fbank differs from torchaudio kaldi.fbank by {worst} (> {FBANK_TOLERANCE})')
    return worst


def augment(corpus, wave):
    """train.py's Batches.augment for a batch: reverb (p 0.3), then babble or coloured noise (p 0.3 each)."""
    batch, n = wave.shape
    dev = wave.device
    reverb = torch.rand(batch, device=dev) < 0.3
    if reverb.any():  # synthetic exponentially decaying noise RIR, 0.4 s, direct path against the tail
        m = int(reverb.sum())
        t = torch.arange(int(0.4 * SAMPLE_RATE), device=dev) / SAMPLE_RATE
        rt60 = torch.empty(m, 1, device=dev).uniform_(0.2, 0.8)
        rir = torch.randn(m, len(t), device=dev) * torch.exp(-6.9 * t[None] / rt60)
        rir[:, 0] = rir.abs().amax(1) / torch.empty(m, device=dev).uniform_(0.3, 1.5)
        rir = rir / rir.pow(2).sum(1, keepdim=True).sqrt()
        size = 1 << (n + len(t) - 1).bit_length()
        wave = wave.clone()
        wave[reverb] = torch.fft.irfft(torch.fft.rfft(wave[reverb], size) * torch.fft.rfft(rir, size), size)[:, :n]
    kind = torch.rand(batch, device=dev)
    babble, coloured = kind < 0.3, (kind >= 0.3) & (kind < 0.6)
    noise = torch.zeros_like(wave)
    snr = torch.empty(batch, device=dev).uniform_(10, 20)
    if babble.any():  # 1-3 other recordings as they are
        m = int(babble.sum())
        voices = torch.randint(1, 4, (m,), device=dev)
        for j in range(3):
            others = torch.randint(corpus.n_recordings, (m,), device=dev)
            noise[babble] += corpus.crops(others, n) * (voices > j)[:, None]
    if coloured.any():  # white, pink or brown
        m = int(coloured.sum())
        spectrum = torch.fft.rfft(torch.randn(m, n, device=dev))
        f = torch.clamp(torch.arange(spectrum.shape[1], device=dev), min=1).float()
        colour = torch.randint(3, (m, 1), device=dev).float()
        noise[coloured] = torch.fft.irfft(spectrum / f[None] ** (colour / 2), n)
        snr[coloured] = torch.empty(m, device=dev).uniform_(5, 20)
    p_speech, p_noise = wave.pow(2).mean(1) + 1e-8, noise.pow(2).mean(1) + 1e-8
    gain = torch.sqrt(p_speech / (p_noise * 10 ** (snr / 10))) * (babble | coloured)
    return wave + noise * gain[:, None]


def mask(feats, max_bins=8, max_frames=20):
    """Light SpecAugment: one band of up to `max_bins` (p 0.5) and one span of up to `max_frames` (p 0.5) zeroed."""
    batch, frames, bins = feats.shape
    dev = feats.device

    def span(extent, width):
        on = torch.rand(batch, 1, device=dev) < 0.5
        first = torch.randint(0, extent - width, (batch, 1), device=dev)
        wide = torch.randint(1, width + 1, (batch, 1), device=dev)
        at = torch.arange(extent, device=dev)[None]
        return on & (at >= first) & (at < first + wide)

    return feats.masked_fill(span(bins, max_bins)[:, None, :], 0).masked_fill(span(frames, max_frames)[:, :, None], 0)


class Learner:
    """One network with its own AAM head and optimiser."""

    def __init__(self, arch, n_classes, args, device, log):
        self.arch, self.net = arch, build(arch)
        if args.init_onnx:
            load_onnx_weights(self.net, args.init_onnx)
            log(f'{arch}: warm start from {args.init_onnx}')
        self.net.to(device)
        self.head = AAMSoftmax(192, n_classes).to(device)
        self.opt = torch.optim.AdamW([*self.net.parameters(), *self.head.parameters()], lr=args.lr, weight_decay=0.02)
        self.loss = torch.zeros((), device=device)
        self.acc = torch.zeros((), device=device)
        self.history = []
        log(f'{arch}: {param_count(self.net)} parameters')

    def step(self, feats, labels, lr, margin, frozen, autocast):
        for group in self.opt.param_groups:
            group['lr'] = lr
        self.head.margin = margin
        if frozen:  # a new head learns against the warm-started network first
            self.net.eval()
        with autocast(), (torch.no_grad() if frozen else contextlib.nullcontext()):
            emb = self.net(feats)
        self.net.train()
        loss, acc = self.head(emb.float(), labels)
        self.opt.zero_grad(set_to_none=True)
        loss.backward()
        self.opt.step()
        self.loss += loss.detach()  # summed on the device: reading it every step would wait for the GPU
        self.acc += acc.detach()

    def report(self, step, steps):
        entry = {'step': step, 'loss': float(self.loss) / steps, 'acc': float(self.acc) / steps}
        self.history.append(entry)
        self.loss.zero_()
        self.acc.zero_()
        return f"{self.arch} loss {entry['loss']:.3f} acc {entry['acc']:.3f}"


def save(folder, learners, state):
    for learner in learners:
        learner.net.eval()
        save_run_weights(folder, learner.arch, learner.net.state_dict())
        learner.net.train()
    state = {**state, 'archs': {m.arch: {'parameters': param_count(m.net), 'history': m.history} for m in learners}}
    tmp = os.path.join(folder, '.' + RUN_STATE)
    with open(tmp, 'w') as f:
        json.dump(state, f, indent=1)
    os.replace(tmp, os.path.join(folder, RUN_STATE))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('pack', help="pack.py's npz (libopus.so.0 beside it is used first)")
    ap.add_argument('--out', default=os.environ.get('OUT') or os.path.join(WORK, 'gpu-run'))
    ap.add_argument('--deadline-s', type=float, default=570, help='the run ends by this many seconds after it started')
    ap.add_argument('--budget-s', type=float, default=float('inf'), help='training seconds at most')
    ap.add_argument('--steps', type=int, help='train this many steps instead of to the deadline (the schedule follows steps)')
    ap.add_argument('--archs', default='ecapa512,ecapa256')
    ap.add_argument('--batch', type=int, default=256)
    ap.add_argument('--crop-s', type=float, default=2.0)
    ap.add_argument('--lr', type=float, default=2e-3)
    ap.add_argument('--margin', type=float, default=0.2)
    ap.add_argument('--margin-ramp', type=float, default=0.2, help='share of the schedule over which the margin ramps in (0: none)')
    ap.add_argument('--balance', type=float, default=0.5, help='share of draws spread evenly over speakers (common.sampling_weights)')
    ap.add_argument('--init-onnx', help='warm start every network from a shipped ONNX model of its architecture')
    ap.add_argument('--head-steps', type=int, default=0, help='first steps train only the (new) classifier heads')
    ap.add_argument('--save-every-s', type=float, default=90)
    ap.add_argument('--log-every', type=int, default=200, help='steps between log lines (losses are averaged over them)')
    ap.add_argument('--jobs', type=int, default=os.cpu_count() or 2, help='decoding processes')
    ap.add_argument('--seed', type=int, default=1)
    ap.add_argument('--device', default='cuda' if torch.cuda.is_available() else 'cpu')
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    log = Log(args.out)
    device = torch.device(args.device)
    torch.manual_seed(args.seed)
    waves, speakers = decode_pack(args.pack, args.jobs)
    log(f'torch {torch.__version__} on {torch.cuda.get_device_name(device) if device.type == "cuda" else "cpu"}; '
        f'decoded {len(waves)} recordings, {sum(len(w) for w in waves) / SAMPLE_RATE / 3600:.2f} h')
    corpus = Corpus(waves, speakers, args.balance, device)
    del waves
    log(f'corpus on {device}: {corpus.n_speakers} speakers, {corpus.n_classes} classes, '
        f'{corpus.audio.numel() / SAMPLE_RATE / 3600:.2f} h with speed copies')
    # only now: crops all have one shape, where the recordings had thousands (autotuning each stalled the speed copies)
    torch.backends.cudnn.benchmark = True
    front_end = Fbank(device)
    samples = int(args.crop_s * SAMPLE_RATE)
    log('fbank max abs difference from torchaudio kaldi.fbank:',
        check_fbank(front_end, corpus.crops(torch.arange(min(8, corpus.n_recordings), device=device), samples)))
    learners = [Learner(arch, corpus.n_classes, args, device, log) for arch in args.archs.split(',')]
    autocast = (lambda: torch.autocast('cuda', dtype=torch.bfloat16)) if device.type == 'cuda' else contextlib.nullcontext
    budget = min(args.budget_s, args.deadline_s - (time.time() - STARTED) - 30)  # 30 s for the last save
    if args.steps is None and budget <= 0:
        raise SystemExit(f'no time left to train before --deadline-s {args.deadline_s}')
    log(f'training for {args.steps} steps' if args.steps else f'training for {budget:.0f} s')
    state = {'pack': os.path.basename(args.pack), 'batch': args.batch, 'crop_s': args.crop_s, 'lr': args.lr,
             'margin': args.margin, 'balance': args.balance, 'speakers': corpus.n_speakers, 'torch': torch.__version__,
             'device': str(device), 'final': False}
    began = saved = time.time()
    step, since_log = 0, 0
    while True:
        elapsed = time.time() - began
        done = step / args.steps if args.steps else elapsed / budget
        if done >= 1:
            break
        with torch.no_grad():
            rows = corpus.draw(args.batch)
            feats = front_end(augment(corpus, corpus.crops(rows, samples)))
            feats = mask(feats - feats.mean(1, keepdim=True))
            labels = corpus.label[rows]
        margin = args.margin * min(1.0, done / args.margin_ramp) if args.margin_ramp else args.margin
        for learner in learners:
            learner.step(feats, labels, lr_at(done, args.lr, warm=0.05), margin, step < args.head_steps, autocast)
        step, since_log = step + 1, since_log + 1
        if since_log == args.log_every:
            lines = ' '.join(learner.report(step, since_log) for learner in learners)
            log(f'step {step} lr {lr_at(done, args.lr, warm=0.05):.2e} {lines} ({step * args.batch / (time.time() - began):.0f} crops/s)')
            since_log = 0
        if time.time() - saved > args.save_every_s:
            save(args.out, learners, {**state, 'step': step, 'train_s': time.time() - began, 'crops': step * args.batch})
            saved = time.time()
    state = {**state, 'step': step, 'train_s': time.time() - began, 'crops': step * args.batch, 'final': True}
    save(args.out, learners, state)
    log(f"done: {step} steps, {state['train_s']:.0f} s, {state['crops']} crops; weights in {args.out}")


if __name__ == '__main__':
    sys.exit(main())
