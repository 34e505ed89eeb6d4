import type { StoredVoice } from '../edge-index/voices.js';

const VOICE_KEY = 'voice';

/**
 * The voice's record as a VoiceGate object stores it, in either role (home or desk), kept in memory
 * once read: the object is the only writer of its storage, so the copy is what storage holds, and a
 * decision reads no storage.
 */
export class HeldVoice {
  private held: StoredVoice | null | undefined;

  constructor(private readonly storage: DurableObjectStorage) {}

  /** The record as stored, read from storage on first use only. */
  async read(): Promise<StoredVoice | null> {
    if (this.held === undefined) this.held = (await this.storage.get<StoredVoice>(VOICE_KEY)) ?? null;
    return this.held;
  }

  /** The record held at this instant, with no wait: an update that landed during a caller's waits is in it. */
  get now(): StoredVoice | null {
    return this.held ?? null;
  }

  async keep(stored: StoredVoice): Promise<void> {
    this.held = stored;
    await this.storage.put(VOICE_KEY, stored);
  }
}
