/**
 * Runs at most `concurrency` tasks at once and lets at most `maxWaiting` more wait their turn, in
 * order; a task beyond that is refused at once (`refusal`), never queued without bound. Registrations
 * hash their passwords through one (auth/service.ts): scrypt runs on libuv's thread pool (4 threads
 * unless UV_THREADPOOL_SIZE says otherwise), first come first served, so a flood of registrations
 * from any number of addresses would otherwise queue ahead of every login's verify.
 */
export class BoundedLane {
  private running = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(
    private readonly concurrency: number,
    private readonly maxWaiting: number,
  ) {}

  async run<T>(task: () => Promise<T>, refusal: () => Error): Promise<T> {
    if (this.running < this.concurrency) this.running++;
    else if (this.waiting.length < this.maxWaiting) await new Promise<void>((resolve) => this.waiting.push(resolve));
    else throw refusal();
    try {
      return await task();
    } finally {
      // The slot passes straight to the next waiter, so `running` counts it still.
      const next = this.waiting.shift();
      if (next) next();
      else this.running--;
    }
  }
}
