import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { bundledModelLocations } from '../../origin/src/voiceprint/manifest.js';

const CALIBRATE = join(dirname(fileURLToPath(import.meta.url)), 'calibrate.py');

/**
 * Keeps an evaluation's report beside the model it measured (models/<model>.<kind>.json, which
 * calibrate.py reads) and has calibrate.py write the model card's tables from the reports: a card's
 * figures are written by the evaluation that measured them, never typed.
 */
export function keepReportBesideModel(model: string, kind: 'screening' | 'sequential-enrollment', report: unknown): void {
  writeFileSync(join(bundledModelLocations.manifestDir, `${model}.${kind}.json`), `${JSON.stringify(report, null, 2)}\n`);
  const card = spawnSync('/usr/bin/python3', [CALIBRATE, '--write-card', model], { stdio: 'inherit' });
  if (card.status !== 0) throw new Error('calibrate.py --write-card failed');
}
