import { kvKeys, type VoiceIndexRecord } from '@vip/shared-schema';

/** A voice in the KV index (the fast path). VoiceGate writes it; the gate reads it. */
export interface StoredVoice {
  version: number;
  record: VoiceIndexRecord | null;
}

export async function readVoiceFromKv(kv: KVNamespace, voiceId: string): Promise<StoredVoice | null> {
  return kv.get<StoredVoice>(kvKeys.voice(voiceId), 'json');
}

/** Deleted voices leave no KV entry; their version tombstone lives in the VoiceGate object. */
export async function mirrorVoiceToKv(kv: KVNamespace, voiceId: string, stored: StoredVoice): Promise<void> {
  if (stored.record) await kv.put(kvKeys.voice(voiceId), JSON.stringify(stored));
  else await kv.delete(kvKeys.voice(voiceId));
}
