import type { IntendedUse } from '../enums.js';
import type { ScreeningMatch } from '../screening.js';
import type { GateClient, PreSynthesisCheckResult } from './gate.js';
import type { CallOptions } from './http.js';
import type { AudioInput, OriginClient } from './origin.js';

export interface ScreenThenCheckInput {
  audio: AudioInput;
  platform_name: string;
  intended_use: IntendedUse;
}

export interface ScreenedCheck {
  match: ScreeningMatch;
  /** The gate's answer for this voice: approved, or blocked with a `license_url` to request a licence. */
  check: PreSynthesisCheckResult;
}

/**
 * The loop's first half for a platform about to clone a voice from a sample: screen the sample at
 * the origin, then ask the gate about each protected voice it matched (best match first). An empty
 * array means no protected voice matched; any blocked answer means: do not synthesize, request a
 * licence (`origin.licenseRequests.request`) and wait for `license.granted`.
 */
export async function screenThenCheck(
  clients: { origin: OriginClient; gate: GateClient },
  input: ScreenThenCheckInput,
  options?: CallOptions,
): Promise<ScreenedCheck[]> {
  const screened = await clients.origin.screening.screen({ audio: input.audio, platform_name: input.platform_name }, options);
  const checks: ScreenedCheck[] = [];
  for (const match of screened.matches) {
    const check = await clients.gate.preSynthesisCheck(
      { voice_id: match.voice_id, platform_name: input.platform_name, intended_use: input.intended_use },
      options,
    );
    checks.push({ match, check });
  }
  return checks;
}
