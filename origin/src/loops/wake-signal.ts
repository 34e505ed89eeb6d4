/**
 * What wakes a sleeping `BackgroundLoop` (background-loop.ts) before its idle time is up: work was
 * committed. Each loop has its own; the edge sync loop sleeps on the one every transaction that
 * writes to the edge outbox nudges on commit, so an update reaches the edge in milliseconds instead
 * of at the next poll. A nudge while the loop is busy is kept, so the next wait returns at once.
 */
export class WakeSignal {
  private pending = false;
  private wake: (() => void) | null = null;

  nudge(): void {
    this.pending = true;
    this.wake?.();
  }

  /** Resolves on a nudge (also one that came while the loop was busy) or after `ms`. */
  async wait(ms: number): Promise<void> {
    if (!this.pending) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, ms);
        this.wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.wake = null;
    }
    this.pending = false;
  }
}
