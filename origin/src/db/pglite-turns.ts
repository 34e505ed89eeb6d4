import type { PGlite } from '@electric-sql/pglite';
import { DatabaseUnavailableError } from './errors.js';

/**
 * PGlite's one connection, taken in turns with a bounded wait. PGlite itself queues every query and
 * transaction behind the transaction in progress for as long as it lasts; here a caller that has
 * waited `acquireMs` for its turn gives up with an `acquire_timeout` (503 to a request, a retry to a
 * background job) and leaves the queue, as a caller of the server's pool does. The turn of a
 * transaction lasts until it ends; its own statements run inside it, on the transaction object.
 */
export function takingTurns(client: PGlite, acquireMs: number): PGlite {
  const turns = new Turns(acquireMs);
  const inTurn =
    <A extends unknown[], R>(run: (...args: A) => Promise<R>) =>
    async (...args: A): Promise<R> => {
      const release = await turns.take();
      try {
        return await run(...args);
      } finally {
        release();
      }
    };
  const bounded: Partial<Record<PropertyKey, unknown>> = {
    query: inTurn(client.query.bind(client)),
    exec: inTurn(client.exec.bind(client)),
    transaction: inTurn(client.transaction.bind(client)),
  };
  return new Proxy(client, {
    get(target, key) {
      if (key in bounded) return bounded[key];
      // PGlite keeps its state in private fields: its own methods must run on it, not on the proxy.
      const value: unknown = Reflect.get(target, key, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

/** A first-come, first-served lock whose waiters give up after `waitMs`. */
export class Turns {
  private busy = false;
  private readonly waiting: (() => void)[] = [];

  constructor(private readonly waitMs: number) {}

  /** Resolves with the function that ends the turn; rejects when the turn did not come within `waitMs`. */
  take(): Promise<() => void> {
    if (!this.busy) {
      this.busy = true;
      return Promise.resolve(this.releaser());
    }
    return new Promise((resolve, reject) => {
      const granted = () => {
        clearTimeout(timer);
        resolve(this.releaser());
      };
      const timer = setTimeout(() => {
        this.waiting.splice(this.waiting.indexOf(granted), 1);
        reject(
          new DatabaseUnavailableError(`The database connection was not free within ${this.waitMs} ms.`, { reason: 'acquire_timeout' }),
        );
      }, this.waitMs);
      this.waiting.push(granted);
    });
  }

  private releaser(): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.waiting.shift();
      if (next) next();
      else this.busy = false;
    };
  }
}
