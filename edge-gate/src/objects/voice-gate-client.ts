import type { AuthorizationTokenClaims, SyncUpdate } from '@vip/shared-schema';
import type { StoredVoice } from '../edge-index/voices.js';
import type { Env } from '../env.js';
import type { DecideInput, GateVerdict, Redemption } from '../gate/outcomes.js';

/**
 * The VoiceGate objects of a voice: its home, which takes index updates, and one desk per platform,
 * which decides that platform's approvals and redeems their tokens (see VoiceGate).
 */
const home = (env: Env, voiceId: string) => env.VOICE_GATE.get(env.VOICE_GATE.idFromName(voiceId));
const desk = (env: Env, voiceId: string, platformName: string) =>
  env.VOICE_GATE.get(env.VOICE_GATE.idFromName(`desk:${voiceId}:${platformName}`));

/** Hands an index update to the voice's home, which hands it to the desks and mirrors it to KV. */
export function applyVoiceUpdate(env: Env, update: Extract<SyncUpdate, { kind: 'voice' }>): Promise<'applied' | 'stale'> {
  return home(env, update.voice_id).applyIndexUpdate(update.voice_id, update.version, update.record);
}

/** The home's hand-off of the voice's record to the desk of one platform. */
export function holdAtDesk(env: Env, voiceId: string, platformName: string, stored: StoredVoice): Promise<void> {
  return desk(env, voiceId, platformName).holdRecord(stored);
}

/** A desk's first question to the home: the record, and the desk counted among those it updates. */
export function recordFromHome(env: Env, voiceId: string, platformName: string): Promise<StoredVoice> {
  return home(env, voiceId).openDesk(platformName);
}

/** Confirms a possible approval (and issues its token) at the desk of the voice and the asking platform. */
export function decideAtVoiceGate(env: Env, input: DecideInput): Promise<GateVerdict> {
  return desk(env, input.voice_id, input.platform_name).decide(input);
}

/** Redeems a token, once, at the desk that issued it: the voice's and the platform's it names. */
export function redeemAtVoiceGate(env: Env, claims: AuthorizationTokenClaims, nowMs: number): Promise<Redemption> {
  return desk(env, claims.voice_id, claims.platform).redeem(claims, nowMs);
}
