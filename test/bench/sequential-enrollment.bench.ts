import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { repositoryRoot } from '../support/repository.js';
import type { Bench, Figure } from './bench.js';
import { describeSet, runSequentialEnrollment } from './sequential-enrollment.js';

/** The shared speech beside the repository (see its README); the bench is skipped without it. */
const DEV = join(repositoryRoot, '..', 'shared', 'speech', 'dev');
/** `--quick` checks the path end to end on a few speakers; its percentages mean nothing. */
const QUICK_SPEAKERS = 6;

const bench: Bench = {
  title: 'Sequential enrollment over HTTP (origin): false identity matches among distinct speakers, re-enrollments caught',
  method: [
    'Starts the origin as `npm start` starts it (bundled model, default settings; the gate plays no part) and, through its public',
    'HTTP API, enrolls every',
    '`../shared/speech/dev` speaker in a seeded shuffled order (seed 1), one after another, each by a new owner with half of its',
    'recordings (halves balanced by duration; at most the 10 longest files of a half, the enrollment limit); then every enrolled speaker again with the other half by another new owner.',
    'Distinct: a 409 identity_conflict (refused) or a 201 pending_review (held) is a false match. Re-enrollment: refused or held',
    'is the right answer. A speaker whose half has too little speech (422 too_short) is enrolled with all its recordings and not',
    're-enrolled; one with too little speech in all of them is left out; a speaker whose first enrollment was refused is not',
    're-enrolled. `--quick`: the first 6 speakers only. Standalone on any folder of the same layout:',
    '`npx tsx test/bench/sequential-enrollment.ts --speech <dir>` (see that file).',
  ].join(' '),
  async run({ quick }) {
    if (!existsSync(join(DEV, 'manifest.tsv'))) return { skipped: `no speech corpus at ${DEV}` };
    const report = await runSequentialEnrollment({ speechDir: DEV, speakers: quick ? QUICK_SPEAKERS : undefined });
    const { total } = report;
    const figures: Figure[] = [
      {
        key: 'sequential_enrollment.distinct.refused_pct',
        label: `distinct speakers refused (${total.distinct.decided} enrollments)`,
        value: total.distinct.percentRefused,
        unit: '%',
        goal: { atMost: 1 },
      },
      {
        key: 'sequential_enrollment.distinct.refused_or_held_pct',
        label: 'distinct speakers refused or held for review',
        value: total.distinct.percentRefusedOrHeld,
        unit: '%',
        goal: { atMost: 2 },
      },
      {
        key: 'sequential_enrollment.reenrollment.refused_or_held_pct',
        label: `re-enrollments by another owner refused or held (${total.reenrollment.decided} enrollments)`,
        value: total.reenrollment.percentRefusedOrHeld,
        unit: '%',
        goal: { atLeast: 97 },
      },
      { key: 'sequential_enrollment.enroll.p50_ms', label: 'one enrollment request: p50', value: report.enrollP50Ms, unit: 'ms' },
    ];
    const notes = [`model ${report.model}, ${report.speakers} speakers, seed ${report.seed}`, ...[...report.sets, total].map(describeSet)];
    return { figures, notes };
  },
};

export default bench;
