import type { SyncUpdate } from '@vip/shared-schema';
import type { Env } from '../env.js';
import type { DecideInput, Decision, Redemption } from '../gate/outcomes.js';

/** The voice's own VoiceGate: one per voice id. */
const voiceGate = (env: Env, voiceId: string) => env.VOICE_GATE.get(env.VOICE_GATE.idFromName(voiceId));

/** Confirms a possible approval (and issues its token) on the state the voice's object holds. */
export function decideAtVoiceGate(env: Env, input: DecideInput): Promise<Decision> {
  return voiceGate(env, input.voice_id).decide(input);
}

/** Redeems a token, once, in the object of the voice it was issued for. */
export function redeemAtVoiceGate(env: Env, voiceId: string, jti: string, holder: string, nowMs: number): Promise<Redemption> {
  return voiceGate(env, voiceId).redeem(jti, holder, nowMs);
}

/** Hands an index update to the voice's object, which keeps it and mirrors it to KV. */
export function applyVoiceUpdate(env: Env, update: Extract<SyncUpdate, { kind: 'voice' }>): Promise<'applied' | 'stale'> {
  return voiceGate(env, update.voice_id).applyIndexUpdate(update.voice_id, update.version, update.record);
}
