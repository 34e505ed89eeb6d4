/**
 * A short-lived per-isolate memo of edge-index reads. Every gate request needs its API key and its
 * voice; within one isolate, requests for the same key or voice reuse one read while it is fresh.
 * Writes made through this isolate (index sync, the voice's home) drop the entry at once; other isolates
 * see them once the entry expires. Nothing approves on this copy (an approval is always re-judged
 * by the voice's desk) and nothing trusts it for a key's revocation (the key's home shard is
 * asked on every request): see DECISIONS.md, "The gate's reads off the hot path".
 *
 * One reader per expired entry: the first request to find an entry expired reads it again; the
 * requests that come while that read is under way keep answering on the expired value, for at most
 * `ttl` more. So a change is seen by every isolate within twice the entry's lifetime, and a hot
 * entry costs one read per lifetime rather than one per request that finds it expired.
 */
export class ReadCache<T> {
  private readonly entries = new Map<string, { at: number; ttl: number; value: T; refreshingSince: number | null }>();
  private generation = 0;

  constructor(
    private readonly ttlOf: (value: T) => number,
    private readonly maxEntries: number,
    /** The isolate's clock; a test's own. */
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * Only settled values are kept (workerd ties a pending read to the request that made it). `at` is
   * taken before the read starts, so an entry never outlives its ttl from the read's beginning, and
   * a write that lands while a read is under way is never hidden behind that older value for longer.
   */
  async get(key: string, read: () => Promise<T>): Promise<T> {
    const now = this.now();
    const hit = this.entries.get(key);
    if (hit && now >= hit.at) {
      const age = now - hit.at;
      if (age < hit.ttl) return hit.value;
      if (hit.refreshingSince !== null && age < 2 * hit.ttl) return hit.value;
      // This request reads; others answer on the expired value meanwhile, up to twice the ttl (so a
      // read that never ends, its request cancelled, hands the turn on by then).
      hit.refreshingSince = now;
    }
    const generation = this.generation;
    const value = await read();
    if (generation === this.generation) {
      if (this.entries.size >= this.maxEntries && !this.entries.has(key)) this.entries.clear();
      this.entries.set(key, { at: now, ttl: this.ttlOf(value), value, refreshingSince: null });
    }
    return value;
  }

  /** Drops the entry; a read already under way for it will not be kept either. */
  forget(key: string): void {
    this.entries.delete(key);
    // Reads started before this call must not store their (possibly older) result.
    this.generation++;
  }
}

/**
 * How long an API key read may be reused. Who a live key is (its id and platform) never changes,
 * and its revocation is judged by its home shard on every request, so a live key is kept long; a key
 * the index does not know (or not yet: a key just issued may be tried before its sync arrives) is
 * asked again soon.
 */
export const API_KEY_READ_TTL_MS = 60_000;
export const API_KEY_MISS_TTL_MS = 500;
/**
 * How long a voice read may be reused. The KV copy can only answer "no record" or "blocked"; a
 * possible approval is always re-judged by the voice's desk, so a withdrawal stops approvals at once
 * whatever this copy says. A grant or enrolment made elsewhere is seen by every isolate after at
 * most twice this, 10 s, small beside KV's own propagation between locations (up to about 60 s).
 * Measured side by side, 1 s here cost the blocked path 16 % more CPU per request (a KV read of a
 * stored value costs more than a whole request), 5 s nothing measurable on either path.
 */
export const VOICE_READ_TTL_MS = 5000;
export const INDEX_READ_MAX_ENTRIES = 10_000;
