import { describe, expect, it } from 'vitest';
import { databaseFailure } from './errors.js';
import { Turns } from './pglite-turns.js';

describe("PGlite's connection, taken in turns", () => {
  it('hands the turn on first come, first served', async () => {
    const turns = new Turns(1_000);
    const order: string[] = [];
    const release = await turns.take();
    const waiting = ['b', 'c'].map(async (name) => {
      const done = await turns.take();
      order.push(name);
      done();
    });
    order.push('a');
    release();
    await Promise.all(waiting);
    expect(order).toEqual(['a', 'b', 'c']);
  });

  it('gives up with an acquire_timeout after the wait, leaving the queue to those behind', async () => {
    const turns = new Turns(50);
    const release = await turns.take();
    const error = await turns.take().then(
      () => null,
      (e: unknown) => e,
    );
    expect(databaseFailure(error)).toBe('acquire_timeout');
    release();
    // The one that gave up holds nothing: the next caller gets the turn at once, and releasing twice changes nothing.
    const next = await turns.take();
    next();
    next();
    (await turns.take())();
  });
});
