"""Compact speaker-embedding networks and the AAM-softmax head.

Both networks take CMN fbank [batch, frames, 80] and return an un-normalised embedding.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class BasicBlock(nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.short = None
        if stride != 1 or cin != cout:
            self.short = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x):
        y = F.relu(self.bn1(self.conv1(x)))
        y = self.bn2(self.conv2(y))
        return F.relu(y + (x if self.short is None else self.short(x)))


class ThinResNet(nn.Module):
    """ResNet over (freq, time) with mean+std pooling over time."""

    def __init__(self, base=16, layers=(3, 4, 6, 3), dim=192, n_mels=80):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(1, base, 3, 1, 1, bias=False), nn.BatchNorm2d(base), nn.ReLU())
        blocks, cin = [], base
        for i, n in enumerate(layers):
            cout = base * 2 ** i
            for j in range(n):
                blocks.append(BasicBlock(cin, cout, 2 if (j == 0 and i > 0) else 1))
                cin = cout
        self.blocks = nn.Sequential(*blocks)
        pooled = cin * (n_mels // 2 ** (len(layers) - 1)) * 2
        self.embed = nn.Linear(pooled, dim)
        self.bn = nn.BatchNorm1d(dim)

    def forward(self, feats):
        x = self.blocks(self.stem(feats.transpose(1, 2).unsqueeze(1)))  # [B, C, F, T]
        x = x.flatten(1, 2)
        stats = torch.cat([x.mean(-1), torch.sqrt(x.var(-1, unbiased=False).clamp(min=1e-5))], 1)
        return self.bn(self.embed(stats))


class SERes2Block(nn.Module):
    def __init__(self, c, dilation, scale=8, se=64):
        super().__init__()
        self.scale, w = scale, c // scale
        self.pre = nn.Sequential(nn.Conv1d(c, c, 1), nn.ReLU(), nn.BatchNorm1d(c))
        self.convs = nn.ModuleList(
            nn.Sequential(nn.Conv1d(w, w, 3, padding=dilation, dilation=dilation), nn.ReLU(), nn.BatchNorm1d(w))
            for _ in range(scale - 1))
        self.post = nn.Sequential(nn.Conv1d(c, c, 1), nn.ReLU(), nn.BatchNorm1d(c))
        self.se = nn.Sequential(nn.Conv1d(c, se, 1), nn.ReLU(), nn.Conv1d(se, c, 1), nn.Sigmoid())

    def forward(self, x):
        parts = torch.chunk(self.pre(x), self.scale, 1)
        out, y = [parts[0]], None
        for i, conv in enumerate(self.convs):
            y = conv(parts[i + 1] if y is None else parts[i + 1] + y)
            out.append(y)
        y = self.post(torch.cat(out, 1))
        return x + y * self.se(y.mean(-1, keepdim=True))


class EcapaLite(nn.Module):
    """ECAPA-TDNN with narrow channels and attentive statistics pooling."""

    def __init__(self, c=256, dim=192, n_mels=80):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv1d(n_mels, c, 5, padding=2), nn.ReLU(), nn.BatchNorm1d(c))
        self.blocks = nn.ModuleList(SERes2Block(c, d) for d in (2, 3, 4))
        self.mfa = nn.Sequential(nn.Conv1d(3 * c, 3 * c, 1), nn.ReLU())
        self.att = nn.Sequential(nn.Conv1d(9 * c, 128, 1), nn.ReLU(), nn.BatchNorm1d(128), nn.Tanh(),
                                 nn.Conv1d(128, 3 * c, 1))
        self.bn_pool = nn.BatchNorm1d(6 * c)
        self.embed = nn.Linear(6 * c, dim)
        self.bn = nn.BatchNorm1d(dim)

    def forward(self, feats):
        x = self.stem(feats.transpose(1, 2))
        outs = []
        for block in self.blocks:
            x = block(x)
            outs.append(x)
        h = self.mfa(torch.cat(outs, 1))
        mu = h.mean(-1, keepdim=True)
        sd = torch.sqrt(h.var(-1, keepdim=True, unbiased=False).clamp(min=1e-5))
        ctx = torch.cat([h, mu.expand_as(h), sd.expand_as(h)], 1)
        w = torch.softmax(self.att(ctx), dim=-1)
        wmu = (h * w).sum(-1)
        wsd = torch.sqrt((((h * h) * w).sum(-1) - wmu * wmu).clamp(min=1e-5))
        return self.bn(self.embed(self.bn_pool(torch.cat([wmu, wsd], 1))))


def build(arch: str, dim: int = 192) -> nn.Module:
    if arch.startswith('resnet'):  # e.g. resnet16: ResNet34 layout, base width 16
        return ThinResNet(base=int(arch[6:]), dim=dim)
    if arch.startswith('ecapa'):  # e.g. ecapa256
        return EcapaLite(c=int(arch[5:]), dim=dim)
    raise ValueError(arch)


class AAMSoftmax(nn.Module):
    """Additive angular margin softmax (ArcFace) over speaker classes."""

    def __init__(self, dim, n_classes, scale=30.0):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(n_classes, dim))
        nn.init.xavier_normal_(self.weight)
        self.scale, self.margin = scale, 0.0

    def forward(self, emb, labels):
        cos = F.linear(F.normalize(emb), F.normalize(self.weight)).clamp(-1 + 1e-7, 1 - 1e-7)
        m = self.margin
        # cap theta + m at pi so the target logit stays monotonic in theta
        target = torch.cos((torch.acos(cos.gather(1, labels[:, None])) + m).clamp(max=math.pi))
        logits = cos.scatter(1, labels[:, None], target) * self.scale
        return F.cross_entropy(logits, labels), (cos.argmax(1) == labels).float().mean()


def param_count(model: nn.Module) -> int:
    return sum(p.numel() for p in model.parameters())
