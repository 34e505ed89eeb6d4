/**
 * The service's operating points for calibrations calibrate.py has fitted, so the evaluation reports
 * the points the service will use, computed by the service's own code (origin/src/voiceprint/operating-points.ts)
 * and never restated in Python.
 *
 *   echo '{"calibrations": {"NAME": CALIBRATION}, "registry_sizes": [1, 100000]}' | npx tsx tools/voiceprint-training/operating-points-cli.ts
 *
 * Prints {"targets": the default targets (snake_case, as the report stores them), "points": {NAME:
 * {SIZE: the operating points at that design registry size}}}. A calibration here need only hold the
 * conditions' `score`, `verify`, `impostor_tail`, `genuine_quantiles` and `exact_copy`.
 */
import { readFileSync } from 'node:fs';
import {
  type Calibration,
  defaultSearchTargets,
  type OperatingPoints,
  operatingPoints,
} from '../../origin/src/voiceprint/operating-points.js';

interface Request {
  calibrations: Record<string, Calibration>;
  registry_sizes: number[];
}

const request = JSON.parse(readFileSync(0, 'utf8')) as Request;
const points: Record<string, Record<string, OperatingPoints>> = {};
for (const [name, calibration] of Object.entries(request.calibrations)) {
  points[name] = Object.fromEntries(
    request.registry_sizes.map((size) => [
      String(size),
      operatingPoints(calibration, { ...defaultSearchTargets, designRegistrySize: size }),
    ]),
  );
}
const targets = {
  design_registry_size: defaultSearchTargets.designRegistrySize,
  screening_fpir: defaultSearchTargets.screeningFpir,
  conflict_strict_fpir: defaultSearchTargets.conflictStrictFpir,
  conflict_review_fnir: defaultSearchTargets.conflictReviewFnir,
};
process.stdout.write(`${JSON.stringify({ targets, points })}\n`);
