import type { SyncUpdate } from '@vip/shared-schema';
import type { StoredVoice } from '../edge-index/voices.js';

/** The home of a voice (voice-home.ts): the VoiceGate object named by the voice id alone. */
export const voiceHome = (env: Env, voiceId: string) => env.VOICE_GATE.get(env.VOICE_GATE.idFromName(voiceId));

/** Hands an index update to the voice's home, which hands it to the desks and mirrors it to KV. */
export function applyVoiceUpdate(env: Env, update: Extract<SyncUpdate, { kind: 'voice' }>): Promise<'applied' | 'stale'> {
  return voiceHome(env, update.voice_id).applyIndexUpdate(update.voice_id, update.version, update.record);
}

/** A desk's first question to the home: the record, and the desk counted among those it updates. */
export function recordFromHome(env: Env, voiceId: string, platformName: string): Promise<StoredVoice> {
  return voiceHome(env, voiceId).openDesk(platformName);
}
