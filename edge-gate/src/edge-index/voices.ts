import { kvKeys, type VoiceIndexRecord } from '@vip/shared-schema';
import { INDEX_READ_MAX_ENTRIES, ReadCache, VOICE_READ_TTL_MS } from './read-cache.js';

/** A voice in the KV index (the fast path). The voice's home (objects/voice-home.ts) writes it; the gate reads it. */
export interface StoredVoice {
  version: number;
  record: VoiceIndexRecord | null;
}

const recentReads = new ReadCache<StoredVoice | null>(() => VOICE_READ_TTL_MS, INDEX_READ_MAX_ENTRIES);

/** The gate's fast path: may be shared with other requests of this isolate (see read-cache.ts). */
export function readVoiceFromKv(kv: KVNamespace, voiceId: string): Promise<StoredVoice | null> {
  return recentReads.get(voiceId, () => kv.get<StoredVoice>(kvKeys.voice(voiceId), 'json'));
}

/** Deleted voices leave no KV entry; their version tombstone lives in the voice's home. */
export async function mirrorVoiceToKv(kv: KVNamespace, voiceId: string, stored: StoredVoice): Promise<void> {
  if (stored.record) await kv.put(kvKeys.voice(voiceId), JSON.stringify(stored));
  else await kv.delete(kvKeys.voice(voiceId));
  recentReads.forget(voiceId);
}
