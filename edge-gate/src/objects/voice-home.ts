import type { VoiceIndexRecord } from '@vip/shared-schema';
import { mirrorVoiceToKv, type StoredVoice } from '../edge-index/voices.js';
import { voidsTokens } from '../gate/rules.js';
import type { HeldVoice } from './held-voice.js';
import { holdAtDesk } from './platform-desk-client.js';

/** Every platform whose desk holds the voice's record (desks are opened, never closed). */
const DESKS_KEY = 'desks';

/** What a home that has never been sent the voice holds: version 0, no record. */
const NO_RECORD: StoredVoice = { version: 0, record: null };

/**
 * A voice's **home** (docs/ARCHITECTURE.md#glossary), one per voice, played by the VoiceGate object
 * that voice-home-client.ts addresses: it takes the index updates the origin pushes for the voice,
 * hands each to the voice's open desks (platform-desk.ts), then mirrors it to KV. A desk opens by
 * asking the home for the record, and the home, which answers only between two updates, counts it
 * among the desks it updates (docs/DECISIONS.md#a-hot-voice-issue-17).
 */
export class VoiceHome {
  constructor(
    private readonly ctx: DurableObjectState,
    private readonly env: Env,
    private readonly voice: HeldVoice,
  ) {}

  /**
   * Applies an index update unless a newer or equal version is stored. A deleted voice keeps its
   * version as a tombstone. Concurrency is blocked while the desks and KV are written, so neither
   * ends on an older version than this object; a replay of the stored version repairs both if a
   * write failed. The desks are written before KV, so a desk never lacks a licence KV shows.
   */
  async applyIndexUpdate(voiceId: string, version: number, record: VoiceIndexRecord | null): Promise<'applied' | 'stale'> {
    return this.ctx.blockConcurrencyWhile(async () => {
      const current = await this.voice.read();
      const desks = (await this.ctx.storage.get<string[]>(DESKS_KEY)) ?? [];
      if (current && current.version > version) {
        // A withdrawal delivered after a later update (its first delivery failed) still voids the
        // tokens issued before it: the desks hear of it, though neither they nor KV keep its record.
        if (voidsTokens(record)) await Promise.all(desks.map((platform) => holdAtDesk(this.env, voiceId, platform, { version, record })));
        return 'stale';
      }
      const stored: StoredVoice = current?.version === version ? current : { version, record };
      if (stored !== current) await this.voice.keep(stored);
      await Promise.all(desks.map((platform) => holdAtDesk(this.env, voiceId, platform, stored)));
      await mirrorVoiceToKv(this.env.EDGE_INDEX, voiceId, stored);
      return stored === current ? 'stale' : 'applied';
    });
  }

  /**
   * Opens `platform`'s desk and hands it the record. Never while an update is being applied
   * (blockConcurrencyWhile holds this call back), so the desk misses no update: each later one
   * reaches it through `applyIndexUpdate`.
   */
  async openDesk(platform: string): Promise<StoredVoice> {
    const desks = (await this.ctx.storage.get<string[]>(DESKS_KEY)) ?? [];
    if (!desks.includes(platform)) await this.ctx.storage.put(DESKS_KEY, [...desks, platform]);
    return (await this.voice.read()) ?? NO_RECORD;
  }
}
