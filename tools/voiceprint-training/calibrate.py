"""Operating points, calibration and the 1:N figures of a speaker model, from evaluate.ts's embeddings.

    /usr/bin/python3 tools/voiceprint-training/calibrate.py work/embeddings-<key>.json [--write] [--report FILE]
    /usr/bin/python3 tools/voiceprint-training/calibrate.py work/embeddings-<key>.json --cohort-sweep COHORT_CACHE
    /usr/bin/python3 tools/voiceprint-training/calibrate.py --card-blocks MODEL
    /usr/bin/python3 tools/voiceprint-training/calibrate.py --write-card MODEL

Trials, all within one set (cross-set pairs differ in language and channel and would flatter every
figure):
- sample_vs_sample: every pair of recordings;
- sample_vs_enrolled: each speaker's recordings are split in two halves (alternately by path); a
  half with >= 10 s of speech is enrolled (speech-weighted mean of unit embeddings, renormalised, as
  the service enrolls); each recording of the other half is a probe against every enrolled half;
- enrollment_vs_enrollment: SPLITS random two-way splits per speaker; both halves enrolled when each
  has >= 10 s; half A of one speaker against half B of every speaker.

Per condition: EER point (`verify`), logistic-regression calibration of cosine and duration into a
log-likelihood ratio (balanced classes, so the log-odds are the LLR), and a generalised Pareto
distribution fitted by maximum likelihood to the top TAIL_SHARE of the impostor scores
(`impostor_tail`) for rates below what dev can measure. The
1:N points are the service's own: operating-points-cli.ts computes them with
origin/src/voiceprint/operating-points.ts (FPIR per search at the design registry size, its
defaultSearchTargets) from the calibration fitted here, so this file only fits.

A model with a cohort (manifest `cohort`, written by cohort.ts) is calibrated on adaptive
score-normalized (AS-norm) scores in NORMALIZED_CONDITIONS (the condition's `score` says which score
it decides on), and its report gives every condition's EER both ways. `--cohort-sweep` takes cohort.ts's
cache of training speakers instead and prints those EERs for each cohort it could make (1 to 3
recordings per speaker, each row or the speaker's average) and each top-K: how the cohort is chosen,
on dev only (docs/DECISIONS.md, "Score normalization").
"""
import json
import math
import os
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, '..', '..'))
MODELS = os.path.join(ROOT, 'origin', 'src', 'voiceprint', 'models')
ENROLL_MIN_SECONDS = 10.0  # shared-schema limits.enrollMinSpeechSeconds
SPLITS = 5
SEED = 20261124
GENUINE_SHARES = [0.001, 0.002, 0.005, 0.01, 0.02, 0.03, 0.05, 0.1, 0.2, 0.3, 0.5]
REGISTRY_SIZES = [1, 10, 100, 1_000, 10_000, 100_000]
TAIL_SHARE = 0.02
# The conditions decided on AS-norm scores when the model has a cohort (docs/DECISIONS.md, "Score
# normalization"); the others keep the cosine. Each condition's calibration records which it is.
NORMALIZED_CONDITIONS = ('sample_vs_sample',)


def enroll(emb, secs):
    v = (emb * secs[:, None]).sum(0)
    return v / np.linalg.norm(v)


def quality(a_secs, b_secs):
    return np.log(np.clip(np.minimum(a_secs, b_secs), 1, 300))


class Trials:
    def __init__(self):
        self.score, self.same, self.q, self.set = [], [], [], []

    def add(self, score, same, q, name):
        self.score.append(np.asarray(score, np.float64).ravel())
        self.same.append(np.asarray(same, bool).ravel())
        self.q.append(np.broadcast_to(np.asarray(q, np.float64), np.shape(score)).ravel())
        self.set.append(np.full(np.size(score), name))

    def done(self):
        return {k: np.concatenate(getattr(self, k)) for k in ('score', 'same', 'q', 'set')}


def cosines(a, b):
    return a @ b.T


def cohort_stats(emb, cohort, k):
    """Mean and standard deviation of each row's k highest cosines against the cohort."""
    top = -np.partition(-(emb @ cohort.T), k - 1, axis=1)[:, :k]
    return top.mean(1), top.std(1)


def as_norm(cohort, k):
    """Adaptive symmetric normalization: the cosine as a z-score against each side's k closest cohort
    rows (how close strangers come to that side), the two z-scores averaged."""
    def score(a, b):
        mean_a, std_a = cohort_stats(a, cohort, k)
        mean_b, std_b = cohort_stats(b, cohort, k)
        c = a @ b.T
        return 0.5 * ((c - mean_a[:, None]) / std_a[:, None] + (c - mean_b[None, :]) / std_b[None, :])
    return score


def read_cohort(entry):
    cohort = entry['cohort']
    rows = np.fromfile(os.path.join(MODELS, cohort['file']), dtype='<f4').astype(np.float64)
    return rows.reshape(cohort['rows'], entry['dim']), cohort['top_k']


def eer_by_set(trials):
    """{condition: {'all': EER %, set: EER %, ...}}"""
    out = {}
    for condition, t in trials.items():
        out[condition] = {'all': round(eer(t['score'], t['same'])[0], 2)}
        for name in sorted(set(t['set'])):
            m = t['set'] == name
            if t['same'][m].any() and (~t['same'][m]).any():
                out[condition][name] = round(eer(t['score'][m], t['same'][m])[0], 2)
    return out


def cohort_sweep(recs, emb, cohort_cache):
    """EER per condition and set for each cohort cohort.ts's cache allows, raw first: every speaker or
    every 2nd or 4th (by name), 1 to 3 recordings per speaker as rows or averaged, and several top-K."""
    rows = json.load(open(cohort_cache))['recordings']
    by_speaker = {}
    for r in sorted(rows, key=lambda r: (-r['speech_seconds'], r['path'])):
        by_speaker.setdefault(r['speaker'], []).append(np.asarray(r['embedding'], np.float64))
    speakers = [by_speaker[s] for s in sorted(by_speaker)]
    unit = lambda m: m / np.linalg.norm(m, axis=1, keepdims=True)
    print(f"cohort cache: {len(rows)} recordings of {len(speakers)} speakers")
    print_eers('raw cosine', eer_by_set(build_trials(recs, emb)))
    for every in (1, 2, 4):
        chosen = speakers[::every]
        for per_speaker in range(1, max(len(v) for v in chosen) + 1):
            variants = {'rows': unit(np.stack([e for v in chosen for e in v[:per_speaker]]))}
            if per_speaker > 1:
                variants['averaged'] = unit(np.stack([unit(np.stack(v[:per_speaker])).mean(0) for v in chosen]))
            for kind, cohort in variants.items():
                for k in (50, 100, 200, 400):
                    if k < len(cohort):
                        print_eers(f"{len(chosen)} speakers, {per_speaker} per speaker, {kind} ({len(cohort)} rows), top {k}",
                                   eer_by_set(build_trials(recs, emb, as_norm(cohort, k))))


def print_eers(label, eers):
    print(label)
    for condition, figures in eers.items():
        print(f"   {condition:25} " + '  '.join(f"{name} {value:.2f}" for name, value in figures.items()))


def build_trials(recs, emb, score=cosines):
    """`score(a, b)` scores every row of a against every row of b (unit vectors)."""
    by_set = {}
    for i, r in enumerate(recs):
        by_set.setdefault(r['set'], {}).setdefault(r['speaker'], []).append(i)
    secs = np.array([r['speech_seconds'] for r in recs])
    rng = np.random.default_rng(SEED)
    sample, enrolled, enrollments = Trials(), Trials(), Trials()
    for name, speakers in sorted(by_set.items()):
        idx = np.array([i for s in sorted(speakers) for i in sorted(speakers[s], key=lambda i: recs[i]['path'])])
        spk = np.array([recs[i]['speaker'] for i in idx])
        e = emb[idx]
        iu = np.triu_indices(len(idx), 1)
        sample.add(score(e, e)[iu], (spk[:, None] == spk[None, :])[iu],
                   quality(secs[idx][:, None], secs[idx][None, :])[iu], name)

        targets, probes = [], []
        for s in sorted(speakers):
            own = sorted(speakers[s], key=lambda i: recs[i]['path'])
            half_a, half_b = own[0::2], own[1::2]
            if secs[half_a].sum() >= ENROLL_MIN_SECONDS:
                targets.append((s, enroll(emb[half_a], secs[half_a]), secs[half_a].sum()))
            probes += [(s, i) for i in half_b]
        if targets and probes:
            t_emb = np.stack([t[1] for t in targets])
            p_idx = np.array([i for _, i in probes])
            scores = score(emb[p_idx], t_emb)
            same = np.array([p for p, _ in probes])[:, None] == np.array([t[0] for t in targets])[None, :]
            q = quality(secs[p_idx][:, None], np.array([t[2] for t in targets])[None, :])
            enrolled.add(scores, same, q, name)

        for _ in range(SPLITS):
            a_list, b_list = [], []
            for s in sorted(speakers):
                own = np.array(speakers[s])
                perm = rng.permutation(len(own))
                half_a, half_b = own[perm[: len(own) // 2]], own[perm[len(own) // 2:]]
                if secs[half_a].sum() >= ENROLL_MIN_SECONDS and secs[half_b].sum() >= ENROLL_MIN_SECONDS:
                    a_list.append((s, enroll(emb[half_a], secs[half_a]), secs[half_a].sum()))
                    b_list.append((s, enroll(emb[half_b], secs[half_b]), secs[half_b].sum()))
            if len(a_list) < 2:
                continue
            a = np.stack([x[1] for x in a_list])
            b = np.stack([x[1] for x in b_list])
            same = np.eye(len(a_list), dtype=bool)
            q = quality(np.array([x[2] for x in a_list])[:, None], np.array([x[2] for x in b_list])[None, :])
            enrollments.add(score(a, b), same, q, name)
    return {'sample_vs_sample': sample.done(), 'sample_vs_enrolled': enrolled.done(),
            'enrollment_vs_enrollment': enrollments.done()}


def eer(score, same):
    order = np.argsort(-score)
    s, t = same[order], score[order]
    far = np.cumsum(~s) / max((~s).sum(), 1)
    frr = 1 - np.cumsum(s) / max(s.sum(), 1)
    k = np.argmin(np.abs(far - frr))
    return 100 * (far[k] + frr[k]) / 2, float(t[k])


def rates(score, same, threshold):
    gen, imp = score[same], score[~same]
    return {'threshold': round(float(threshold), 4), 'far_pct': round(100 * float((imp >= threshold).mean()), 4),
            'frr_pct': round(100 * float((gen < threshold).mean()), 3)}


def fit_llr(score, same, q, with_quality=True):
    """Weighted logistic regression by Newton's method; balanced classes make the log-odds an LLR."""
    x = np.stack([np.ones_like(score), score, q, score * q] if with_quality else [np.ones_like(score), score], 1)
    w = np.where(same, 0.5 / same.sum(), 0.5 / (~same).sum())
    beta = np.zeros(x.shape[1])
    for _ in range(50):
        p = 1 / (1 + np.exp(-(x @ beta)))
        grad = x.T @ (w * (p - same)) + 1e-6 * beta
        hess = (x * (w * p * (1 - p))[:, None]).T @ x + 1e-6 * np.eye(x.shape[1])
        step = np.linalg.solve(hess, grad)
        beta -= step
        if np.abs(step).max() < 1e-10:
            break
    llr = x @ beta
    return beta, llr


def cllr(llr, same):
    """Cost of log-likelihood ratio, bits: 0 is perfect, 1 is an uninformative system."""
    return float(0.5 * (np.mean(np.logaddexp(0, -llr[same])) + np.mean(np.logaddexp(0, llr[~same]))) / math.log(2))


def fit_tail(imp):
    from scipy.stats import genpareto
    start = float(np.quantile(imp, 1 - TAIL_SHARE))
    top = imp[imp > start]
    shape, _, scale = genpareto.fit(top - start, floc=0)
    return {'from': round(start, 5), 'exceed': round(float(len(top) / len(imp)), 7),
            'scale': round(float(scale), 5), 'shape': round(float(shape), 5)}


def tail_far(tail, threshold):
    if threshold < tail['from']:
        return None
    z = threshold - tail['from']
    if tail['shape'] == 0:
        return tail['exceed'] * math.exp(-z / tail['scale'])
    base = 1 + tail['shape'] * z / tail['scale']
    return tail['exceed'] * base ** (-1 / tail['shape']) if base > 0 else 0.0


def genuine_quantiles(t):
    return [[share, round(float(np.quantile(t['score'][t['same']], share)), 5)] for share in GENUINE_SHARES]


def fitted(t, kind):
    """What the operating points read of a condition's calibration, fitted on trials `t` scored as `kind`."""
    return {'score': kind, 'verify': eer(t['score'], t['same'])[1], 'impostor_tail': fit_tail(t['score'][~t['same']]),
            'genuine_quantiles': genuine_quantiles(t)}


def service_points(calibrations):
    """The service's targets, and its operating points for each calibration at every registry size, as
    operating-points-cli.ts computes them with origin/src/voiceprint/operating-points.ts."""
    request = json.dumps({'calibrations': calibrations, 'registry_sizes': REGISTRY_SIZES})
    out = subprocess.run([os.path.join(ROOT, 'node_modules', '.bin', 'tsx'), os.path.join(HERE, 'operating-points-cli.ts')],
                         input=request, capture_output=True, text=True, check=True, cwd=ROOT)
    return json.loads(out.stdout)


def fnir_at_design_size(trials, points, targets):
    """How normalization would move the 1:N decisions: with trials scored one way and `points` the
    service's points for a calibration fitted on them without a copy's floor (exact_copy is measured on
    the cosine), FNIR % on dev at screening's search point and at the strict conflict FPIR point, and at
    the review point (the conflict FNIR target, before any cap) the share of different-speaker
    enrollment pairs dev measures above it."""
    out = {}
    for label, condition, point in (('sample_vs_enrolled.search', 'sample_vs_enrolled', points['sample_vs_enrolled']['search']),
                                    ('enrollment_vs_enrollment.strict_fpir', 'enrollment_vs_enrollment',
                                     points['enrollment_vs_enrollment']['strict'])):
        t = trials[condition]
        out[label] = {'point': round(float(point), 4), 'fnir_pct': rates(t['score'], t['same'], point)['frr_pct']}
    t = trials['enrollment_vs_enrollment']
    review = max(eer(t['score'], t['same'])[1], float(np.quantile(t['score'][t['same']], targets['conflict_review_fnir'])))
    r = rates(t['score'], t['same'], review)
    out['enrollment_vs_enrollment.review'] = {'point': round(review, 4), 'fnir_pct': r['frr_pct'], 'far_pct': r['far_pct']}
    return out


def far_at(trials, tail, threshold):
    """Measured FAR where dev holds enough impostors above the point, else the fitted tail's."""
    imp = trials['score'][~trials['same']]
    above = int((imp >= threshold).sum())
    if above >= 20 or tail_far(tail, threshold) is None:
        return above / len(imp), 'measured'
    return tail_far(tail, threshold), 'tail'


def manifest_entry(name, manifest=None):
    manifest = manifest or json.load(open(os.path.join(MODELS, 'manifest.json')))
    return next((m for m in manifest['models'] if m['name'] == name), {})


def main():
    path = sys.argv[1]
    write = '--write' in sys.argv
    data = json.load(open(path))
    recs = data['recordings']
    emb = np.array([r['embedding'] for r in recs], np.float64)
    emb /= np.linalg.norm(emb, axis=1, keepdims=True)
    if '--cohort-sweep' in sys.argv:
        cohort_sweep(recs, emb, sys.argv[sys.argv.index('--cohort-sweep') + 1])
        return
    raw = build_trials(recs, emb)
    trials = dict(raw)
    entry = manifest_entry(data['model'])

    report = {'model': data['model'], 'speech': data['speech'], 'recordings': len(recs),
              'refused_by_pipeline': len(data['skipped']), 'conditions': {}}
    scores = {condition: 'cosine' for condition in trials}
    # Every condition's trials scored one way, for the 1:N figures normalization would give.
    one_way = {}
    if 'cohort' in entry:
        cohort, k = read_cohort(entry)
        normalized = build_trials(recs, emb, as_norm(cohort, k))
        report['normalized'] = {'cohort_rows': len(cohort), 'top_k': k, 'raw_eer_pct': eer_by_set(raw),
                                'eer_pct': eer_by_set(normalized)}
        one_way = {'cosine': raw, 'as_norm': normalized}
        for condition in NORMALIZED_CONDITIONS:
            trials[condition] = normalized[condition]
            scores[condition] = 'as_norm'
    calibration = {'dataset': f"{os.path.basename(os.path.normpath(data['speech']))}: {len(recs)} recordings, "
                              f"{len({r['speaker'] for r in recs})} speakers"}
    for condition, t in trials.items():
        e, verify = eer(t['score'], t['same'])
        beta, llr = fit_llr(t['score'], t['same'], t['q'])
        _, llr_plain = fit_llr(t['score'], t['same'], t['q'], with_quality=False)
        tail = fit_tail(t['score'][~t['same']])
        calibration[condition] = {
            'score': scores[condition],
            'llr': {'bias': round(beta[0], 5), 'w_score': round(beta[1], 5), 'w_quality': round(beta[2], 5),
                    'w_interaction': round(beta[3], 5)},
            'verify': round(verify, 4), 'impostor_tail': tail, 'genuine_quantiles': genuine_quantiles(t)}
        per_set = {}
        for name in sorted(set(t['set'])):
            m = t['set'] == name
            if t['same'][m].any() and (~t['same'][m]).any():
                per_set[name] = {'eer_pct': round(eer(t['score'][m], t['same'][m])[0], 2),
                                 'genuine': int(t['same'][m].sum()), 'impostor': int((~t['same'][m]).sum()),
                                 'at_verify': rates(t['score'][m], t['same'][m], verify)}
        report['conditions'][condition] = {
            'genuine': int(t['same'].sum()), 'impostor': int((~t['same']).sum()), 'eer_pct': round(e, 2),
            'cllr_bits': round(cllr(llr, t['same']), 4), 'cllr_bits_without_duration': round(cllr(llr_plain, t['same']), 4),
            'per_set': per_set, 'at_verify': rates(t['score'], t['same'], verify)}

    # duplicate-eval.ts measures where copies of an enrollment score; a new calibration keeps it.
    exact_copy = entry.get('calibration', {}).get('enrollment_vs_enrollment', {}).get('exact_copy')
    if exact_copy is not None:
        calibration['enrollment_vs_enrollment']['exact_copy'] = exact_copy
    unfloored = {kind: {condition: fitted(t, kind) for condition, t in by_kind.items()} for kind, by_kind in one_way.items()}
    service = service_points({'fitted': calibration, **unfloored})
    targets = service['targets']
    design = str(targets['design_registry_size'])
    by_size = service['points']['fitted']
    at_design = by_size[design]
    for key, kind in (('raw_fnir_at_design_size', 'cosine'), ('fnir_at_design_size', 'as_norm')):
        if kind in one_way:
            report['normalized'][key] = fnir_at_design_size(one_way[kind], service['points'][kind][design], targets)
    points = {
        'sample_vs_enrolled.search': ('sample_vs_enrolled', at_design['sample_vs_enrolled']['search']),
        'enrollment_vs_enrollment.review': ('enrollment_vs_enrollment', at_design['enrollment_vs_enrollment']['review']),
        'enrollment_vs_enrollment.strict': ('enrollment_vs_enrollment', at_design['enrollment_vs_enrollment']['strict']),
    }
    report['targets'] = targets
    report['one_to_n'] = {}
    for label, (condition, threshold) in points.items():
        t = trials[condition]
        far, source = far_at(t, calibration[condition]['impostor_tail'], threshold)
        r = rates(t['score'], t['same'], threshold)
        report['one_to_n'][label] = {
            'threshold': round(threshold, 4), 'per_pair_far': far, 'far_source': source,
            'measured_far_pct': r['far_pct'], 'fnir_pct': r['frr_pct'],
            'fpir_by_registry_size': {str(size): 1 - (1 - far) ** size for size in REGISTRY_SIZES},
            'fnir_by_set_pct': {name: rates(t['score'][t['set'] == name], t['same'][t['set'] == name], threshold)['frr_pct']
                                for name in sorted(set(t['set'])) if t['same'][t['set'] == name].any()}}
    # The point each registry size would need for the screening target, and what it would miss.
    t = trials['sample_vs_enrolled']
    report['screening_point_by_registry_size'] = {
        str(size): {'threshold': round(p, 4), 'fnir_pct': rates(t['score'], t['same'], p)['frr_pct']}
        for size in REGISTRY_SIZES for p in [by_size[str(size)]['sample_vs_enrolled']['search']]}

    print_report(report)
    if '--report' in sys.argv:
        with open(sys.argv[sys.argv.index('--report') + 1], 'w') as f:
            f.write(json.dumps(report, indent=2) + '\n')
    if write:
        name = data['model']
        manifest_path = os.path.join(MODELS, 'manifest.json')
        manifest = json.load(open(manifest_path))
        entry = manifest_entry(name, manifest)
        # The single point a model has when its calibration is not used (VOICEPRINT_THRESHOLDS): a cosine.
        entry['threshold'] = round(eer(raw['sample_vs_sample']['score'], raw['sample_vs_sample']['same'])[1], 4)
        entry['calibration'] = calibration
        with open(manifest_path, 'w') as f:
            f.write(json.dumps(manifest, indent=2) + '\n')
        with open(os.path.join(MODELS, f'{name}.calibration.json'), 'w') as f:
            f.write(json.dumps(report, indent=2) + '\n')
        det_plot(trials, calibration, points, os.path.join(MODELS, f'{name}.det.png'), name)
        write_card(name)
        print(f"wrote the calibration of {name} into models/manifest.json, models/{name}.calibration.json, models/{name}.det.png "
              f"and the tables of models/{entry['card']}")


def with_card_block(card_text, card, name, text):
    """The card with what lies between `<!-- calibrate.py: NAME -->` and `<!-- /calibrate.py: NAME -->`
    replaced: its measured figures are written by the evaluation, never typed."""
    start, end = f'<!-- calibrate.py: {name} -->', f'<!-- /calibrate.py: {name} -->'
    if start not in card_text or end not in card_text:
        raise SystemExit(f'{card} has no {start} ... {end} block')
    before, rest = card_text.split(start, 1)
    after = rest.split(end, 1)[1]
    return f'{before}{start}\n{text}{end}{after}'


def card_tables(report, calibration, screening=None, sequential=None):
    """The model card's generated tables: the decisions per condition, the 1:N points, normalization,
    screening by sample length when screening-eval.ts --write has measured it, and sequential
    enrollment when test/bench/sequential-enrollment.ts --write has."""
    title = lambda condition: condition.replace('_', ' ')
    pct = lambda value: f'{100 * value:.0f} %' if value >= 0.1 else f'{100 * value:.2g} %'
    # A calibration from before normalization names no score: it is on the cosine (operating-points.ts scoreOf).
    decided_on = lambda condition: calibration[condition].get('score', 'cosine')
    decisions = ['| condition | decided on | trials (same / different) | EER | 1:1 point (`verify`) | Cllr (bits), with / without duration |',
                 '|---|---|---|---|---|---|']
    for condition, c in report['conditions'].items():
        decisions.append(f"| {title(condition)} | {decided_on(condition)} | {c['genuine']:,} / {c['impostor']:,} | "
                         f"{c['eer_pct']:.2f} % | {calibration[condition]['verify']} | {c['cllr_bits']} / {c['cllr_bits_without_duration']} |")
    one_to_n = ['| decision | decided on | point | FPIR at N = 100 / 1,000 / 10,000 / 100,000 (fitted tail) | FNIR on dev (per set) |',
                '|---|---|---|---|---|']
    for label, p in report['one_to_n'].items():
        fpir = ' / '.join(pct(p['fpir_by_registry_size'][str(n)]) for n in (100, 1_000, 10_000, 100_000))
        sets = ', '.join(f'{name} {value:.1f} %' for name, value in p['fnir_by_set_pct'].items())
        one_to_n.append(f"| `{label}` | {decided_on(label.split('.')[0])} | {p['threshold']} | {fpir} | "
                        f"{p['fnir_pct']:.1f} % ({sets}) |")
    blocks = {'decisions': decisions, 'one-to-n': one_to_n}
    if 'normalized' not in report:
        # Without normalization's table (which gives every set both ways), the EER per set on its own.
        sets = sorted({name for c in report['conditions'].values() for name in c['per_set']})
        per_set = ['| EER | ' + ' | '.join(sets) + ' |', '|---|' + '---|' * len(sets)]
        for condition, c in report['conditions'].items():
            cell = lambda name: f"{c['per_set'][name]['eer_pct']:.2f} % ({c['per_set'][name]['genuine']:,} same)" if name in c['per_set'] else '–'
            per_set.append(f'| {title(condition)} | ' + ' | '.join(cell(name) for name in sets) + ' |')
        blocks['per-set'] = per_set
    if 'normalized' in report:
        raw, normalized = report['normalized']['raw_eer_pct'], report['normalized']['eer_pct']
        sets = sorted({name for figures in normalized.values() for name in figures if name != 'all'})
        rows = ['| EER, cosine → AS-norm | all | ' + ' | '.join(sets) + ' |', '|---|---|' + '---|' * len(sets)]
        for condition, figures in normalized.items():
            cell = lambda name: f'{raw[condition][name]:g} → {figures[name]:g} %' if name in figures else ''
            rows.append(f'| {title(condition)} | {cell("all")} | ' + ' | '.join(cell(name) for name in sets) + ' |')
        blocks['normalization'] = rows
    if screening is not None:
        rows = ['| speech in the sample | samples | found first, one file | found first, several files | false matches (one / several) |',
                '|---|---|---|---|---|']
        by = {(row['kind'], row['speech_at_least_s']): row for row in screening['rows']}
        for target in sorted({row['speech_at_least_s'] for row in screening['rows']}):
            one, several = by[('one_file', target)], by[('several_files', target)]
            rows.append(f"| ≥ {target} s | {one['samples']} | {one['found_first_pct']:.1f} % | {several['found_first_pct']:.1f} % | "
                        f"{one['false_match_pct']:g} / {several['false_match_pct']:g} % |")
        blocks['screening'] = rows
    if sequential is not None:
        rows = ['| set | new speakers decided | refused | refused or held | re-enrollments decided | refused / held | caught |',
                '|---|---|---|---|---|---|---|']
        for row in sequential['sets'] + [sequential['total']]:
            d, r = row['distinct'], row['reenrollment']
            held = d['refused'] + d['held']
            cells = [row['set'], f"{d['decided']}", f"{d['refused']}", f"{d['percentRefusedOrHeld']:g} %" + (f' ({held})' if held else ''),
                     f"{r['decided']}", f"{r['refused']} / {r['held']}", f"{r['percentRefusedOrHeld']:g} %"]
            if row is sequential['total']:
                cells = [f'**{cell}**' for cell in cells]
            rows.append('| ' + ' | '.join(cells) + ' |')
        blocks['sequential-enrollment'] = rows
    return {name: '\n'.join(lines) + '\n' for name, lines in blocks.items()}


def card_tables_of(name):
    """A model's card tables from what is committed beside it: its evaluation report, its calibration,
    and screening-eval.ts's and sequential-enrollment.ts's reports when there are."""
    entry = manifest_entry(name)
    report = json.load(open(os.path.join(MODELS, f'{name}.calibration.json')))
    beside = lambda kind: (json.load(open(os.path.join(MODELS, f'{name}.{kind}.json')))
                           if os.path.exists(os.path.join(MODELS, f'{name}.{kind}.json')) else None)
    return entry, card_tables(report, entry['calibration'], beside('screening'), beside('sequential-enrollment'))


def write_card(name):
    """Writes every generated table of the model's card between its markers."""
    entry, blocks = card_tables_of(name)
    card = os.path.join(MODELS, entry['card'])
    text = open(card).read()
    for block, table in blocks.items():
        text = with_card_block(text, card, block, table)
    with open(card, 'w') as f:
        f.write(text)


def print_report(report):
    print(f"{report['model']} on {report['speech']}: {report['recordings']} recordings "
          f"({report['refused_by_pipeline']} refused by the pipeline)")
    for condition, c in report['conditions'].items():
        print(f"{condition}: EER {c['eer_pct']}% at {c['at_verify']['threshold']} "
              f"({c['genuine']} genuine / {c['impostor']} impostor), Cllr {c['cllr_bits']} bits "
              f"(without duration {c['cllr_bits_without_duration']})")
        for name, s in c['per_set'].items():
            print(f"   {name:6} EER {s['eer_pct']:6.2f}%  at verify: FAR {s['at_verify']['far_pct']}% FRR {s['at_verify']['frr_pct']}%  "
                  f"({s['genuine']} / {s['impostor']})")
    for label, p in report['one_to_n'].items():
        fpir = ', '.join(f"N={k}: {100 * v:.3g}%" for k, v in p['fpir_by_registry_size'].items())
        print(f"{label} {p['threshold']}: per-pair FAR {p['per_pair_far']:.3g} ({p['far_source']}), FNIR {p['fnir_pct']}% "
              f"{p['fnir_by_set_pct']}; FPIR {fpir}")
    print('screening point by registry size:', report['screening_point_by_registry_size'])
    if 'normalized' in report:
        n = report['normalized']
        print_eers('raw cosine: EER %', n['raw_eer_pct'])
        print_eers(f"AS-norm against the cohort ({n['cohort_rows']} rows, top {n['top_k']}): EER %", n['eer_pct'])
        for label in n['fnir_at_design_size']:
            raw, normalized = n['raw_fnir_at_design_size'][label], n['fnir_at_design_size'][label]
            measured = lambda p: f", measured FAR {p['far_pct']}%" if 'far_pct' in p else ''
            print(f"{label}: FNIR {raw['fnir_pct']}% at {raw['point']} (cosine{measured(raw)}), "
                  f"{normalized['fnir_pct']}% at {normalized['point']} (AS-norm{measured(normalized)})")


def det_plot(trials, calibration, points, out, name):
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt
    from scipy.stats import norm

    ticks = [0.0001, 0.001, 0.01, 0.05, 0.2, 0.5, 0.9, 0.99]
    fig, ax = plt.subplots(figsize=(7, 6), dpi=110)
    colours = {'sample_vs_sample': 'tab:blue', 'sample_vs_enrolled': 'tab:orange', 'enrollment_vs_enrollment': 'tab:green'}
    for condition, t in trials.items():
        gen, imp = np.sort(t['score'][t['same']]), np.sort(t['score'][~t['same']])
        grid = np.unique(np.concatenate([gen, imp]))[::max(1, len(gen) // 2000 + len(imp) // 200000)]
        frr = np.searchsorted(gen, grid, side='left') / len(gen)
        far = 1 - np.searchsorted(imp, grid, side='left') / len(imp)
        keep = (far > 0) & (frr > 0) & (far < 1) & (frr < 1)
        ax.plot(norm.ppf(far[keep]), norm.ppf(frr[keep]), color=colours[condition],
                label=f"{condition.replace('_', ' ')} (EER {eer(t['score'], t['same'])[0]:.2f}%)")
        tail = calibration[condition]['impostor_tail']
        modelled = np.linspace(tail['from'], 1 if calibration[condition]['score'] == 'cosine' else gen[-1], 400)
        far_tail = np.array([tail_far(tail, x) for x in modelled])
        frr_tail = np.searchsorted(gen, modelled, side='left') / len(gen)
        keep = (far_tail > 1e-12) & (frr_tail > 0) & (frr_tail < 1)
        ax.plot(norm.ppf(far_tail[keep]), norm.ppf(frr_tail[keep]), '--', color=colours[condition], linewidth=1)
        v = rates(t['score'], t['same'], calibration[condition]['verify'])
        ax.plot(norm.ppf(max(v['far_pct'] / 100, 1e-5)), norm.ppf(max(v['frr_pct'] / 100, 1e-5)), 'o', color=colours[condition])
    for label, (condition, threshold) in points.items():
        t = trials[condition]
        far, _ = far_at(t, calibration[condition]['impostor_tail'], threshold)
        frr = min(max(float((t['score'][t['same']] < threshold).mean()), 1e-5), 0.99)
        ax.plot(norm.ppf(max(far, 1e-9)), norm.ppf(frr), 's', color=colours[condition], markersize=7)
        ax.annotate(label.split('.')[-1], (norm.ppf(max(far, 1e-9)), norm.ppf(frr)), textcoords='offset points', xytext=(6, 4), fontsize=8)
    all_ticks = [1e-9, 1e-7, 1e-5] + ticks
    all_ticks = [x for x in all_ticks if x <= 0.5]
    ax.set_xticks(norm.ppf(all_ticks))
    ax.set_xticklabels([f'{100 * x:g}%' for x in all_ticks], rotation=45, fontsize=8)
    ax.set_yticks(norm.ppf(ticks))
    ax.set_yticklabels([f'{100 * x:g}%' for x in ticks], fontsize=8)
    ax.set_xlim(norm.ppf(1e-9), norm.ppf(0.5))
    ax.set_ylim(norm.ppf(0.0001), norm.ppf(0.995))
    ax.set_xlabel('false accepts per pair (dashed: fitted impostor tail; squares: 1:N points at the design size)')
    ax.set_ylabel('false rejects')
    ax.set_title(f'{name} on dev: DET per trial condition (circles: 1:1 points)', fontsize=10)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8, loc='upper right')
    fig.tight_layout()
    fig.savefig(out)


def card_blocks_of(name):
    """The generated tables of a model's card, as JSON on stdout (test/architecture/model-cards.test.ts
    compares them with the card)."""
    print(json.dumps(card_tables_of(name)[1]))


if __name__ == '__main__':
    if sys.argv[1:2] == ['--card-blocks']:
        card_blocks_of(sys.argv[2])
    elif sys.argv[1:2] == ['--write-card']:
        write_card(sys.argv[2])
    else:
        main()
