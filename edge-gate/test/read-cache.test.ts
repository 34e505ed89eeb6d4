import { describe, expect, it } from 'vitest';
import { ReadCache } from '../src/edge-index/read-cache.js';

/** A read that settles when the test says so, counting how often it was asked. */
function controlledReads<T>() {
  const pending: ((value: T) => void)[] = [];
  const read = () => new Promise<T>((resolve) => pending.push(resolve));
  return { read, pending };
}

const TTL = 100;

function cacheAt(clock: { ms: number }, ttlOf: (value: string | null) => number = () => TTL) {
  return new ReadCache<string | null>(ttlOf, 100, () => clock.ms);
}

describe('the edge index read memo', () => {
  it('reuses a read while it is fresh', async () => {
    const clock = { ms: 0 };
    const cache = cacheAt(clock);
    let reads = 0;
    const read = async () => `v${++reads}`;
    expect(await cache.get('k', read)).toBe('v1');
    clock.ms = TTL - 1;
    expect(await cache.get('k', read)).toBe('v1');
    expect(reads).toBe(1);
  });

  it('lets one request read an expired entry while the others answer on it, for at most twice its lifetime', async () => {
    const clock = { ms: 0 };
    const cache = cacheAt(clock);
    expect(await cache.get('k', async () => 'old')).toBe('old');

    clock.ms = TTL + 10;
    const { read, pending } = controlledReads<string>();
    const refreshing = cache.get('k', read);
    clock.ms = TTL + 50;
    expect(await cache.get('k', read)).toBe('old');
    expect(pending).toHaveLength(1);

    // Past twice the lifetime nobody answers on it any more, reader or not.
    clock.ms = 2 * TTL;
    const second = cache.get('k', read);
    expect(pending).toHaveLength(2);
    pending[0]!('new');
    pending[1]!('newer');
    expect(await refreshing).toBe('new');
    expect(await second).toBe('newer');
  });

  it('keeps each value as long as its own lifetime says (a miss is asked again sooner)', async () => {
    const clock = { ms: 0 };
    const cache = cacheAt(clock, (value) => (value === null ? 10 : 1000));
    let reads = 0;
    const miss = async () => {
      reads++;
      return null;
    };
    await cache.get('absent', miss);
    clock.ms = 25;
    await cache.get('absent', miss);
    expect(reads).toBe(2);
    await cache.get('present', async () => 'yes');
    clock.ms = 900;
    expect(await cache.get('present', async () => 'changed')).toBe('yes');
  });

  it('forgets an entry at once, and does not keep a read that was under way when it forgot', async () => {
    const clock = { ms: 0 };
    const cache = cacheAt(clock);
    await cache.get('k', async () => 'old');
    clock.ms = TTL + 1;
    const { read, pending } = controlledReads<string>();
    const underWay = cache.get('k', read);
    cache.forget('k');
    pending[0]!('read before the write');
    await underWay;
    expect(await cache.get('k', async () => 'after the write')).toBe('after the write');
  });
});
