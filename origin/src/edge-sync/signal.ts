/**
 * Wakes the outbox sender right after a transaction that wrote to the outbox commits, so an update
 * reaches the edge in milliseconds instead of at the next poll.
 */
export class OutboxSignal {
  private pending = false;
  private wake: (() => void) | null = null;

  nudge(): void {
    this.pending = true;
    this.wake?.();
  }

  /** Resolves on a nudge (also one that came while the sender was busy) or after `ms`. */
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
