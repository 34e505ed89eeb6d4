import type { Worker } from 'node:worker_threads';
import { limits } from '@vip/shared-schema/limits';
import { ProblemError } from '@vip/shared-schema/problem';
import type { BackendName } from './onnx-runtime.js';
import type { FileJob, FileJobResults, PoolMessage, WorkerMessage } from './worker-protocol.js';

export interface PoolOptions {
  size: number;
  /** Files allowed to wait for a free thread; beyond that new work is refused with 503. */
  maxQueue: number;
  /** A file still being embedded after this long is answered 'unavailable'. */
  taskTimeoutMs: number;
  /**
   * A file whose Content Credentials are still being read after this long is refused as malformed
   * (422: trying again would not help); default `limits.manifestReadDeadlineMs`.
   */
  credentialsTimeoutMs?: number;
  /** Seconds a refused caller is told to wait (Retry-After). */
  retryAfterSeconds: number;
  spawn: () => Worker;
}

type JobResult = FileJobResults[FileJob['kind']];

interface Task {
  id: number;
  job: FileJob;
  resolve: (result: JobResult) => void;
  reject: (error: Error) => void;
  settled: boolean;
}

interface Slot {
  worker: Worker;
  task?: Task;
  timer?: NodeJS.Timeout;
  /** onnxruntime-node aborts the whole process if its thread is terminated mid-run. */
  inInference: boolean;
  /** Set by close(): terminate as soon as the running file is done. */
  retireWhenIdle?: () => void;
}

const shutDown = () => new ProblemError('unavailable', 'The voiceprint engine is shut down.');

function settle(task: Task, outcome: { result: JobResult } | { error: Error }): void {
  if (task.settled) return;
  task.settled = true;
  if ('result' in outcome) task.resolve(outcome.result);
  else task.reject(outcome.error);
}

/**
 * A fixed set of worker threads, one file each at a time, with a bounded wait queue, so the event
 * loop never parses an uploaded file itself (decode, VAD, ONNX, Content Credentials). A file over
 * its time is answered at once; its thread is killed and replaced if it is still parsing (where a
 * hostile file could spin), or left to finish its inference (bounded by the audio length, and unsafe
 * to interrupt) and then reused.
 */
export class WorkerPool {
  private readonly slots: Slot[] = [];
  private readonly queue: Task[] = [];
  private nextId = 1;
  private closed = false;
  backend: BackendName | undefined;

  constructor(private readonly options: PoolOptions) {}

  async start(): Promise<void> {
    await Promise.all(Array.from({ length: this.options.size }, () => this.addSlot()));
  }

  get load(): { running: number; queued: number } {
    return { running: this.slots.filter((slot) => slot.task).length, queued: this.queue.length };
  }

  /** Fails at once with 'unavailable' when `count` more files would not fit in the queue. */
  reserve(count: number): void {
    if (this.closed) throw shutDown();
    const idle = this.slots.filter((slot) => !slot.task).length;
    if (this.queue.length + count - idle > this.options.maxQueue) {
      throw new ProblemError('unavailable', 'The voiceprint engine is busy; try again shortly.', {
        headers: { 'Retry-After': String(this.options.retryAfterSeconds) },
      });
    }
  }

  run<Job extends FileJob>(job: Job): Promise<FileJobResults[Job['kind']]> {
    try {
      this.reserve(1);
    } catch (error) {
      return Promise.reject(error);
    }
    return new Promise((resolve, reject) => {
      const settleWith = resolve as (result: JobResult) => void;
      this.queue.push({ id: this.nextId++, job, resolve: settleWith, reject, settled: false });
      this.dispatch();
    });
  }

  /** Refuses what waits, answers what runs, and ends every thread once it is safe to. */
  async close(): Promise<void> {
    this.closed = true;
    for (const task of this.queue.splice(0)) settle(task, { error: shutDown() });
    await Promise.all(
      this.slots.splice(0).map(async (slot) => {
        if (slot.task) settle(slot.task, { error: shutDown() });
        if (slot.inInference) {
          await new Promise<void>((resolve) => {
            slot.retireWhenIdle = resolve;
            slot.worker.once('exit', () => resolve());
          });
        }
        await this.terminate(slot);
      }),
    );
  }

  private addSlot(): Promise<void> {
    const worker = this.options.spawn();
    const slot: Slot = { worker, inInference: false };
    return new Promise((resolve, reject) => {
      const onStartupExit = (code: number) => reject(new Error(`voiceprint worker exited during start-up (code ${code})`));
      worker.once('exit', onStartupExit);
      worker.once('error', reject);
      worker.once('message', (message: WorkerMessage) => {
        worker.off('exit', onStartupExit);
        worker.off('error', reject);
        if (message.type !== 'ready') {
          void worker.terminate();
          reject(new Error(message.type === 'setup-failed' ? message.message : 'voiceprint worker sent no ready message'));
          return;
        }
        this.backend = message.backend;
        worker.on('message', (reply: WorkerMessage) => this.onMessage(slot, reply));
        worker.on('error', (error) => this.replace(slot, new ProblemError('internal_error', `voiceprint worker failed: ${error.message}`)));
        worker.on('exit', () => this.replace(slot, new ProblemError('internal_error', 'voiceprint worker exited')));
        if (this.closed) {
          void this.terminate(slot);
        } else {
          this.slots.push(slot);
          this.dispatch();
        }
        resolve();
      });
    });
  }

  private dispatch(): void {
    for (const slot of this.slots) {
      if (slot.task) continue;
      const task = this.queue.shift();
      if (!task) return;
      slot.task = task;
      slot.inInference = false;
      slot.timer = setTimeout(() => this.onTimeout(slot), this.deadlineOf(task.job));
      const bytes = task.job.bytes.slice(); // the caller keeps its buffer; the copy moves to the thread
      slot.worker.postMessage({ type: 'run', id: task.id, job: { ...task.job, bytes } } satisfies PoolMessage, [bytes.buffer]);
    }
  }

  private deadlineOf(job: FileJob): number {
    return job.kind === 'credentials' ? (this.options.credentialsTimeoutMs ?? limits.manifestReadDeadlineMs) : this.options.taskTimeoutMs;
  }

  private onTimeout(slot: Slot): void {
    const timedOut =
      slot.task?.job.kind === 'credentials'
        ? new ProblemError(
            'malformed_manifest',
            `The file's Content Credentials could not be read within ${this.deadlineOf(slot.task.job)} ms.`,
          )
        : new ProblemError('unavailable', 'Processing the audio took too long.');
    if (slot.inInference && slot.task) settle(slot.task, { error: timedOut });
    else this.replace(slot, timedOut);
  }

  private onMessage(slot: Slot, message: WorkerMessage): void {
    const task = slot.task;
    if (!task || !('id' in message) || message.id !== task.id) return;
    if (message.type === 'inference') {
      slot.inInference = true;
      slot.worker.postMessage({ type: 'proceed', id: task.id } satisfies PoolMessage);
      return;
    }
    clearTimeout(slot.timer);
    slot.task = undefined;
    slot.inInference = false;
    if (message.type === 'result') settle(task, { result: message.result });
    else if (message.type === 'failed') settle(task, { error: new ProblemError(message.code, message.message) });
    if (slot.retireWhenIdle) slot.retireWhenIdle();
    else this.dispatch();
  }

  /** Fails the slot's task, kills its thread and starts a fresh one in its place. */
  private replace(slot: Slot, reason: Error): void {
    const index = this.slots.indexOf(slot);
    if (index < 0) return;
    this.slots.splice(index, 1);
    if (slot.task) settle(slot.task, { error: reason });
    void this.terminate(slot);
    if (this.closed) return;
    this.addSlot().catch((error: Error) => {
      for (const task of this.queue.splice(0))
        settle(task, { error: new ProblemError('internal_error', `voiceprint worker restart failed: ${error.message}`) });
    });
  }

  private async terminate(slot: Slot): Promise<void> {
    clearTimeout(slot.timer);
    slot.worker.removeAllListeners();
    slot.worker.on('error', () => {}); // a late error from a thread being torn down has nobody to tell
    await slot.worker.terminate();
  }
}
