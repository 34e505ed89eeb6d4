import type { Worker } from 'node:worker_threads';
import { startWorker } from '../worker-threads.js';
import type { PageCheck, RawChainPage } from './chain-page.js';

/**
 * One thread that hashes verification pages (checkPage) beside the main thread, which reads them from
 * the database: on two cores the two halves of the work overlap. Started on the first page and kept;
 * it holds the process open only while a page is being checked. A thread that fails or exits fails
 * the pages it held, and the next page starts a new one.
 */
export class ChainHashThread {
  private worker: Worker | null = null;
  private readonly pending = new Map<number, { resolve: (check: PageCheck) => void; reject: (error: Error) => void }>();
  private nextId = 0;

  check(page: RawChainPage): Promise<PageCheck> {
    const worker = this.worker ?? this.start();
    const id = this.nextId++;
    if (this.pending.size === 0) worker.ref();
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      worker.postMessage({ id, page });
    });
  }

  async close(): Promise<void> {
    await this.worker?.terminate();
  }

  private start(): Worker {
    const worker = startWorker(import.meta.url, 'chain-hash-worker');
    this.worker = worker;
    worker.on('message', ({ id, check }: { id: number; check: PageCheck }) => {
      this.pending.get(id)?.resolve(check);
      this.pending.delete(id);
      if (this.pending.size === 0) worker.unref();
    });
    const fail = (error: Error) => {
      if (this.worker === worker) this.worker = null;
      for (const { reject } of this.pending.values()) reject(error);
      this.pending.clear();
    };
    worker.on('error', fail);
    worker.on('exit', (code) => fail(new Error(`the chain hashing thread exited (code ${code})`)));
    return worker;
  }
}
