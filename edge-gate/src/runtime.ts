/** Time and ids come from here, so tests can pin them (CONVENTIONS). */
export interface Runtime {
  /** Milliseconds since the Unix epoch. */
  now(): number;
  newId(): string;
}

export const systemRuntime: Runtime = {
  now: () => Date.now(),
  newId: () => crypto.randomUUID(),
};
