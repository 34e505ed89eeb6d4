import { randomBytes, randomUUID } from 'node:crypto';

/** Time, randomness and ids, injected everywhere so tests can pin them. */
export interface Clock {
  now(): Date;
}

export interface Runtime {
  clock: Clock;
  randomBytes(length: number): Uint8Array;
  newId(): string;
}

export const systemRuntime: Runtime = {
  clock: { now: () => new Date() },
  randomBytes: (length) => randomBytes(length),
  newId: () => randomUUID(),
};
