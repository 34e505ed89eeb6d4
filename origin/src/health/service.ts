import type { Readiness } from '@vip/shared-schema';
import type { Database } from '../db/client.js';
import { DatabaseUnavailableError } from '../db/errors.js';
import type { VoiceprintEngine } from '../voiceprint/index.js';
import { selectOne } from './store.js';

/** A probe that waits longer than this is itself a failure: the pool is exhausted or the server hangs. */
const DATABASE_CHECK_TIMEOUT_MS = 2_000;

export interface HealthDeps {
  db: Database;
  /** Absent where the process runs no engine; readiness then leaves its load out. */
  voiceprint?: VoiceprintEngine;
}

export class HealthService {
  constructor(private readonly deps: HealthDeps) {}

  async readiness(): Promise<Readiness> {
    try {
      await within(DATABASE_CHECK_TIMEOUT_MS, selectOne(this.deps.db));
    } catch (error) {
      // The error handler turns this into 503 unavailable with Retry-After and logs the cause as a warning.
      throw new DatabaseUnavailableError('The database did not answer the readiness check.', { cause: error });
    }
    const load = this.deps.voiceprint?.load();
    return {
      status: 'ready',
      checks: { database: 'ok', ...(load ? { voiceprint: { busy: load.running, queued: load.queued } } : {}) },
    };
  }
}

async function within(ms: number, work: Promise<void>): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  try {
    await Promise.race([work, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
