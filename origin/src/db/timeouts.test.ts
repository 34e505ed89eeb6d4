import { connect, createServer, type Server, type Socket } from 'node:net';
import { pathOf } from '@vip/shared-schema';
import { createLicenseRoute, listLicensesRoute } from '@vip/shared-schema/routes/origin/registry/licenses';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DatabaseTimeouts } from '../config.js';
import { asProblem } from '../http/problems.js';
import { bearer, loggedIn, startTestOrigin, type TestOrigin } from '../testing/origin.js';
import { platformKey } from '../testing/platforms.js';
import { expectProblem } from '../testing/problem.js';
import { insertTestVoice } from '../testing/voices.js';
import { waitForTurn } from './advisory-locks.js';
import { type DatabaseHandle, openPostgres, QUERY_DEADLINE_GRACE_MS } from './client.js';
import { databaseFailure } from './errors.js';

/** Short bounds, so a test sees each one pass; production's are in config.ts (DEFAULT_DATABASE_TIMEOUTS). */
const TIMEOUTS: DatabaseTimeouts = { statementMs: 1_000, lockMs: 300, acquireMs: 500 };
/** How late an answer may be past its bound on a busy two-core machine, and still count as bounded (without the bounds it never comes). */
const SLACK_MS = 2_000;

let origin: TestOrigin;
let owner: Awaited<ReturnType<typeof loggedIn>>;
let platformName: string;
let voiceId: string;
beforeAll(async () => {
  origin = await startTestOrigin({ databaseTimeouts: TIMEOUTS });
  owner = await loggedIn(origin);
  platformName = (await platformKey(origin)).name;
  voiceId = await insertTestVoice(origin.database.db, owner.userId, { consentStatus: 'active' });
});
afterAll(() => origin?.close());

const onServer = () => origin.database.driver === 'postgres';
const listLicenses = () =>
  origin.app.inject({ method: 'GET', url: pathOf(listLicensesRoute, { voice_id: voiceId }), headers: bearer(owner.accessToken) });
const createLicense = () =>
  origin.app.inject({
    method: 'POST',
    url: pathOf(createLicenseRoute, { voice_id: voiceId }),
    headers: bearer(owner.accessToken),
    payload: {
      platform_name: platformName,
      scopes: ['audiobook'],
      description: 'Narration of audiobook chapters for the tests',
      expires_at: new Date(Date.now() + 30 * 86_400_000).toISOString(),
    },
  });
const timed = async <T>(work: () => Promise<T>): Promise<{ result: T; ms: number }> => {
  const started = performance.now();
  const result = await work();
  return { result, ms: performance.now() - started };
};
/** The reasons the error handler logged with its 'database unavailable' warnings since `from`. */
const loggedReasons = (from: number) =>
  origin.logs
    .slice(from)
    .join('')
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as { msg?: string; reason?: string })
    .filter((line) => line.msg === 'database unavailable')
    .map((line) => line.reason);

/**
 * Holds every connection of the origin's database (PGlite's one, or the pool's) in open transactions
 * until `release` is called. More holders than connections: the extra ones give up after the bound.
 */
async function holdEveryConnection(): Promise<() => Promise<void>> {
  let release!: () => void;
  const held = new Promise<void>((resolve) => {
    release = resolve;
  });
  const holders = Array.from({ length: 8 }, () => origin.database.db.transaction(() => held).catch(() => undefined));
  await new Promise((resolve) => setTimeout(resolve, 100));
  return async () => {
    release();
    await Promise.all(holders);
  };
}

describe('bounded waits for the database', () => {
  it('answers 503 unavailable with Retry-After when no connection is free within DATABASE_ACQUIRE_TIMEOUT_MS, and serves again once one is', async () => {
    const from = origin.logs.length;
    const release = await holdEveryConnection();
    try {
      const { result, ms } = await timed(listLicenses);
      expectProblem(result, 503, 'unavailable');
      expect(result.headers['retry-after']).toBe('1');
      expect(result.json().detail).toBe('The database did not answer in time; try again shortly.');
      expect(ms).toBeLessThan(TIMEOUTS.acquireMs + SLACK_MS);
      expect(loggedReasons(from)).toContain('acquire_timeout');
    } finally {
      await release();
    }
    expect((await listLicenses()).statusCode).toBe(200);
  });

  it('answers 503 with Retry-After to a request waiting past DATABASE_LOCK_TIMEOUT_MS for a held table lock, while requests that need no such lock answer', async (context) => {
    if (!onServer()) context.skip(); // PGlite has one session: no other one can hold a lock.
    const from = origin.logs.length;
    let release!: () => void;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    let locked!: () => void;
    const lockTaken = new Promise<void>((resolve) => {
      locked = resolve;
    });
    const holder = origin.database.db.transaction(async (tx) => {
      await tx.execute(sql`lock table licenses in access exclusive mode`);
      locked();
      await held;
    });
    try {
      await lockTaken;
      const [blocked, unrelated] = await Promise.all([
        timed(createLicense),
        timed(() => origin.app.inject({ method: 'GET', url: '/readyz' })),
      ]);
      expectProblem(blocked.result, 503, 'unavailable');
      expect(blocked.result.headers['retry-after']).toBe('1');
      expect(blocked.ms).toBeLessThan(TIMEOUTS.lockMs + SLACK_MS);
      expect(loggedReasons(from)).toContain('lock_timeout');
      expect(unrelated.result.statusCode).toBe(200);
    } finally {
      release();
      await holder;
    }
    expect((await createLicense()).statusCode).toBe(201);
  });

  it("lets a background job wait its turn at an advisory lock longer than a request's lock timeout, in its own transaction only", async (context) => {
    if (!onServer()) context.skip();
    // This origin builds no background jobs, so nothing else takes the fan-out's turn here.
    const turn = 'webhookFanOut';
    let taken!: () => void;
    const turnTaken = new Promise<void>((resolve) => {
      taken = resolve;
    });
    const first = origin.database.db.transaction(async (tx) => {
      await waitForTurn(tx, turn);
      taken();
      await new Promise((resolve) => setTimeout(resolve, 3 * TIMEOUTS.lockMs));
    });
    await turnTaken;
    const { ms } = await timed(() => origin.database.db.transaction((tx) => waitForTurn(tx, turn)));
    await first;
    expect(ms).toBeGreaterThan(2 * TIMEOUTS.lockMs);
    const { rows } = (await origin.database.db.execute(sql`show lock_timeout`)) as unknown as { rows: { lock_timeout: string }[] };
    expect(rows[0]!.lock_timeout).toBe(`${TIMEOUTS.lockMs}ms`);
  });

  it('cancels a statement past DATABASE_STATEMENT_TIMEOUT_MS on the server (57014), which a request answers as 503', async (context) => {
    if (!onServer()) context.skip(); // PGlite runs a statement to its end on the event loop: nothing can cancel it.
    const { result: error, ms } = await timed(() =>
      origin.database.db.execute(sql`select pg_sleep(5)`).then(
        () => null,
        (e: unknown) => e,
      ),
    );
    expect(databaseFailure(error)).toBe('statement_timeout');
    expect(ms).toBeLessThan(TIMEOUTS.statementMs + SLACK_MS);
    expect(asProblem(error)).toMatchObject({ status: 503, code: 'unavailable', headers: { 'retry-after': '1' } });
    expect((await listLicenses()).statusCode).toBe(200);
  });
});

/**
 * A TCP relay in front of the test's Postgres server that can stop passing bytes either way, as a
 * server stopped with SIGSTOP does (connections are accepted by the kernel and never answered).
 */
async function freezableRelay(targetPort: number): Promise<{ port: number; freeze(): void; thaw(): void; close(): Promise<void> }> {
  let frozen = false;
  /** Bytes that arrived while frozen, each with where it goes: passed on, in order, on thaw. */
  const held: [Socket, Buffer][] = [];
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    const upstream = connect({ host: '127.0.0.1', port: targetPort });
    for (const [from, to] of [
      [client, upstream],
      [upstream, client],
    ] as const) {
      sockets.add(from);
      from.on('data', (chunk: Buffer) => (frozen ? held.push([to, chunk]) : to.write(chunk)));
      from.on('close', () => {
        sockets.delete(from);
        to.destroy();
      });
      from.on('error', () => undefined);
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as { port: number }).port,
    freeze: () => {
      frozen = true;
    },
    thaw: () => {
      frozen = false;
      for (const [to, chunk] of held.splice(0)) if (!to.destroyed) to.write(chunk);
    },
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

describe('a server that stops answering', () => {
  it('fails each query within the bounds rather than hang, closes the stuck connections, and serves again by itself once the server answers', async (context) => {
    if (!onServer()) context.skip();
    const { rows } = (await origin.database.db.execute(sql`select current_database() as name`)) as unknown as { rows: { name: string }[] };
    const url = new URL(process.env.TEST_DATABASE_URL!);
    const relay = await freezableRelay(Number(url.port || 5432));
    url.port = String(relay.port);
    url.pathname = `/${rows[0]!.name}`;
    const handle: DatabaseHandle = await openPostgres(url.toString(), { localProxy: true, maxConnections: 2, timeouts: TIMEOUTS });
    try {
      await handle.db.execute(sql`select 1`);
      relay.freeze();
      const outcome = (work: () => Promise<unknown>) =>
        timed(() =>
          work().then(
            () => 'answered',
            (error: unknown) => databaseFailure(error),
          ),
        );
      const deadline = TIMEOUTS.statementMs + QUERY_DEADLINE_GRACE_MS;
      const outcomes = await Promise.all([
        // First, so it takes the connection the pool holds: its ROLLBACK, after its query overran, must
        // not wait out a deadline of its own.
        outcome(() => handle.db.transaction(async (tx) => tx.execute(sql`select 1`))),
        ...Array.from({ length: 4 }, () => outcome(() => handle.db.execute(sql`select 1`))),
      ]);
      for (const { result, ms } of outcomes) {
        expect(['query_deadline', 'acquire_timeout']).toContain(result);
        expect(ms).toBeLessThan(deadline + TIMEOUTS.acquireMs + SLACK_MS);
      }
      // Its connection was closed at the deadline, so the ROLLBACK failed at once: one deadline, not two.
      const transaction = outcomes[0]!;
      expect(transaction.result).toBe('query_deadline');
      expect(transaction.ms).toBeLessThan(2 * deadline);
      relay.thaw();
      // The stuck connections were closed: fresh ones answer at once, in the same process.
      const { ms } = await timed(() => handle.db.execute(sql`select 1`));
      expect(ms).toBeLessThan(SLACK_MS);
      // And no slot was lost to them: as many transactions as the pool has connections are open at once.
      let open = 0;
      let allOpen!: () => void;
      const everyoneOpen = new Promise<void>((resolve) => {
        allOpen = resolve;
        setTimeout(resolve, TIMEOUTS.acquireMs + SLACK_MS);
      });
      const transactions = await Promise.allSettled(
        [1, 2].map(() =>
          handle.db.transaction(async (tx) => {
            await tx.execute(sql`select 1`);
            if (++open === 2) allOpen();
            await everyoneOpen;
          }),
        ),
      );
      expect(transactions.map((settled) => settled.status)).toEqual(['fulfilled', 'fulfilled']);
    } finally {
      relay.thaw();
      await handle.close();
      await relay.close();
    }
  });
});
