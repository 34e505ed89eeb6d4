import type { FastifyBaseLogger } from 'fastify';
import { WakeSignal } from './wake-signal.js';

/** What one round did: more may be waiting (`busy`), nothing was (`idle`), or wait this long. */
export type RoundOutcome = 'busy' | 'idle' | { waitMs: number };

export interface BackgroundLoopOptions {
  name: string;
  round: () => Promise<RoundOutcome>;
  /** Sleep when idle; a nudge ends it early. */
  idleMs: number;
  /** Sleep after a round threw. */
  errorBackoffMs?: number;
  /** What ends an idle sleep early; default the loop's own (see `nudge`). The edge sync loop wakes on the outbox's. */
  wake?: WakeSignal;
  log: FastifyBaseLogger;
}

/**
 * Runs a job's rounds one after another until stopped: the one way the origin runs background work.
 * The job keeps its state in tables, so stopping (or a crash) between rounds loses nothing; `stop`
 * waits for the round in flight.
 */
export class BackgroundLoop {
  private readonly signal: WakeSignal;
  private running: Promise<void> | null = null;
  private stopping = false;

  constructor(private readonly options: BackgroundLoopOptions) {
    this.signal = options.wake ?? new WakeSignal();
  }

  start(): void {
    if (this.running) return;
    this.stopping = false;
    this.running = this.loop();
  }

  /** Wakes an idle loop at once (work was committed). */
  nudge(): void {
    this.signal.nudge();
  }

  async stop(): Promise<void> {
    this.stopping = true;
    this.signal.nudge();
    await this.running;
    this.running = null;
  }

  private async loop(): Promise<void> {
    const { round, idleMs, errorBackoffMs = 1_000, log, name } = this.options;
    while (!this.stopping) {
      let outcome: RoundOutcome;
      try {
        outcome = await round();
      } catch (error) {
        log.warn({ err: error, job: name }, 'background round failed');
        outcome = { waitMs: errorBackoffMs };
      }
      if (outcome === 'busy' || this.stopping) continue;
      await this.signal.wait(outcome === 'idle' ? idleMs : Math.min(outcome.waitMs, idleMs));
    }
  }
}
