/**
 * A short-lived per-isolate memo of edge-index reads. Every gate request reads its API key and its
 * voice from KV; within one isolate, requests for the same key or voice inside `ttlMs` reuse one
 * read. Writes made through this isolate (index sync, VoiceGate) drop the entry at once; other
 * isolates see them after the TTL (below the 1 s revocation target for keys). Nothing approves on
 * this copy: an approval is always re-judged by the voice's VoiceGate.
 */
export class ReadCache<T> {
  private readonly entries = new Map<string, { at: number; value: T }>();

  constructor(
    private readonly ttlMs: number,
    private readonly maxEntries: number,
  ) {}

  /**
   * Only settled values are kept (workerd ties a pending read to the request that made it). `at` is
   * taken before the read starts, so an entry never outlives `ttlMs` from the read's beginning, and
   * a write that lands while a read is under way is never hidden behind that older value for longer.
   */
  async get(key: string, read: () => Promise<T>): Promise<T> {
    const now = Date.now();
    const hit = this.entries.get(key);
    if (hit && now >= hit.at && now - hit.at < this.ttlMs) return hit.value;
    const generation = this.generation;
    const value = await read();
    if (generation === this.generation) {
      if (this.entries.size >= this.maxEntries) this.entries.clear();
      this.entries.set(key, { at: now, value });
    }
    return value;
  }

  /** Drops the entry; a read already under way for it will not be kept either. */
  forget(key: string): void {
    this.entries.delete(key);
    // Reads started before this call must not store their (possibly older) result.
    this.generation++;
  }

  private generation = 0;
}

/** How long an API key read may be reused: a revoked key is refused by every isolate after this. */
export const API_KEY_READ_TTL_MS = 250;
/**
 * How long a voice read may be reused. The KV copy can only answer "no record" or "blocked"; a
 * possible approval is always re-judged by VoiceGate, so a withdrawal stops approvals at once
 * whatever this copy says. A grant made elsewhere is seen by every isolate after this.
 */
export const VOICE_READ_TTL_MS = 1000;
export const INDEX_READ_MAX_ENTRIES = 10_000;
