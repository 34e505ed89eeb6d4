/**
 * Steady request load for a fault test: loops that each send one kind of request, one after
 * another, and keep what every request answered, when it started and how long it took.
 */

export interface Answer {
  kind: string;
  /** The HTTP status, or why there was none: no answer within the hang limit, or the connection failed. */
  status: number | 'hung' | 'network_error';
  startedAt: number;
  ms: number;
  contentType: string;
  retryAfter: string | null;
  body: string;
}

export class RequestLoad {
  readonly answers: Answer[] = [];
  private running = true;
  private readonly loops: Promise<void>[] = [];

  /** `hangMs`: a request not answered in this long is aborted and counted as hung. */
  constructor(private readonly hangMs: number) {}

  /** Starts a loop sending `send` (given the abort signal to pass to fetch) until `stop`, `pauseMs` apart. */
  loop(kind: string, send: (signal: AbortSignal) => Promise<Response>, pauseMs = 25): void {
    this.loops.push(
      (async () => {
        while (this.running) {
          await this.once(kind, send);
          await new Promise((resolve) => setTimeout(resolve, pauseMs));
        }
      })(),
    );
  }

  async stop(): Promise<void> {
    this.running = false;
    await Promise.all(this.loops);
  }

  /** The answers of one kind, started within [from, to) when given. */
  of(kind: string, from = Number.NEGATIVE_INFINITY, to = Number.POSITIVE_INFINITY): Answer[] {
    return this.answers.filter((answer) => answer.kind === kind && answer.startedAt >= from && answer.startedAt < to);
  }

  /** Resolves with how long after `since` a request of `kind` started after `since` answered `ok`; throws after `withinMs`. */
  async firstSuccess(kind: string, since: number, withinMs: number, ok = (status: number) => status < 300): Promise<number> {
    while (Date.now() < since + withinMs) {
      const answered = this.of(kind, since).find((answer) => typeof answer.status === 'number' && ok(answer.status));
      if (answered) return answered.startedAt + answered.ms - since;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    throw new Error(`no ${kind} request succeeded within ${withinMs} ms`);
  }

  private async once(kind: string, send: (signal: AbortSignal) => Promise<Response>): Promise<void> {
    const startedAt = Date.now();
    const answer: Answer = { kind, status: 'network_error', startedAt, ms: 0, contentType: '', retryAfter: null, body: '' };
    try {
      const response = await send(AbortSignal.timeout(this.hangMs));
      answer.status = response.status;
      answer.contentType = response.headers.get('content-type') ?? '';
      answer.retryAfter = response.headers.get('retry-after');
      answer.body = await response.text();
    } catch (error) {
      if ((error as Error).name === 'TimeoutError') answer.status = 'hung';
    }
    answer.ms = Date.now() - startedAt;
    this.answers.push(answer);
  }
}

/** Statuses by count, for a log line: `{"200":40,"503":12}`. */
export function statusCounts(answers: readonly Answer[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const answer of answers) counts[String(answer.status)] = (counts[String(answer.status)] ?? 0) + 1;
  return counts;
}

/** The largest of `values` (0 for none), rounded: for figures in a log line. */
export const maxOf = (values: readonly number[]): number => Math.round(Math.max(0, ...values));
