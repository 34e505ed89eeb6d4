import type { AuthorizationTokenClaims } from '@vip/shared-schema';
import type { StoredVoice } from '../edge-index/voices.js';
import type { DecideInput, GateVerdict, Redemption } from '../gate/outcomes.js';

/**
 * The desk of a voice for one platform (platform-desk.ts): the VoiceGate object named by both. The
 * `desk:` prefix keeps its name apart from the voice's home, whose name is the voice id alone.
 */
export const platformDesk = (env: Env, voiceId: string, platformName: string) =>
  env.VOICE_GATE.get(env.VOICE_GATE.idFromName(`desk:${voiceId}:${platformName}`));

/** The home's hand-off of the voice's record to the desk of one platform. */
export function holdAtDesk(env: Env, voiceId: string, platformName: string, stored: StoredVoice): Promise<void> {
  return platformDesk(env, voiceId, platformName).holdRecord(stored);
}

/** Confirms a possible approval (and issues its token) at the desk of the voice and the asking platform. */
export function decideAtDesk(env: Env, input: DecideInput): Promise<GateVerdict> {
  return platformDesk(env, input.voice_id, input.platform_name).decide(input);
}

/** Redeems a token, once, at the desk that issued it: the voice's and the platform's it names. */
export function redeemAtDesk(env: Env, claims: AuthorizationTokenClaims, nowMs: number): Promise<Redemption> {
  return platformDesk(env, claims.voice_id, claims.platform).redeem(claims, nowMs);
}
