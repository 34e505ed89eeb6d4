import { randomUUID } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPostgres, QUERY_DEADLINE_GRACE_MS } from '../../origin/src/db/client.js';
import { eventually, post, type RunningPlanes, startPlanes } from '../support/service.js';
import { DATABASE_STALLS } from './catalogue.js';
import { adminFor, approvedVoice, auditLog, type Registry, setUpRegistry } from './fixtures.js';
import { freezePostgres } from './postgres-freeze.js';
import { type PrivatePostgres, privatePostgresUnavailable, startPrivatePostgres } from './private-postgres.js';
import { type Answer, maxOf, RequestLoad, statusCounts } from './request-load.js';

const { timeouts: TIMEOUTS, slackMs: SLACK_MS, steadyMs: STEADY_MS, hangMs: HANG_MS, recoveryMs: RECOVERY_MS } = DATABASE_STALLS;

const admin = adminFor('database-stalls');
const unavailable = privatePostgresUnavailable();
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A 503 as the contract says: problem+json `unavailable`, Retry-After, and nothing of the database in it. */
function expectUnavailable(answers: readonly Answer[]): void {
  for (const answer of answers) {
    expect(answer.contentType, `${answer.kind}: ${answer.body}`).toContain('application/problem+json');
    expect(JSON.parse(answer.body)).toMatchObject({ status: 503, code: 'unavailable' });
    expect(answer.body).not.toMatch(/\bat .+:\d+:\d+|stack|timeout|55P03|57014|postgres|select|pool/i);
    expect(Number(answer.retryAfter)).toBeGreaterThan(0);
  }
}

const describeWithPostgres = describe.skipIf(unavailable !== null);

describeWithPostgres(`the origin's database stalls under load${unavailable ? ` (skipped: ${unavailable})` : ''}`, () => {
  let postgres: PrivatePostgres;
  let service: RunningPlanes;
  let registry: Registry;
  let voiceId: string;
  let login: { email: string; password: string };
  /** Set by each test's last line: a failed run keeps its data folder (and planes.log) to read. */
  let passed = 0;

  beforeAll(async () => {
    postgres = await startPrivatePostgres();
    service = await startPlanes({
      env: {
        ADMIN_EMAIL: admin.email,
        ADMIN_PASSWORD: admin.password,
        DATABASE_URL: postgres.url,
        DATABASE_STATEMENT_TIMEOUT_MS: String(TIMEOUTS.statementMs),
        DATABASE_LOCK_TIMEOUT_MS: String(TIMEOUTS.lockMs),
        DATABASE_ACQUIRE_TIMEOUT_MS: String(TIMEOUTS.acquireMs),
      },
    });
    registry = await setUpRegistry(service.originUrl, service.edgeUrl, admin);
    voiceId = await approvedVoice(registry, 'Database Stalls Voice');
    login = { email: `login-${randomUUID().slice(0, 8)}@faults.example`, password: 'database-stalls-login-password' };
    expect((await post(`${service.originUrl}/api/v1/auth/register`, login)).status).toBe(201);
  }, 150_000);

  afterAll(async () => {
    await service?.stop({ removeData: passed === 2 });
    await postgres?.destroy();
  });

  const asOwner = () => ({ authorization: `Bearer ${registry.ownerToken}` });
  const licences = () => `${service.originUrl}/api/v1/voices/${voiceId}/licenses`;
  /** Loops of the requests that need the licences table, and of those that do not. */
  function startLoad(licenceRequesters: number): RequestLoad {
    const load = new RequestLoad(HANG_MS);
    for (let i = 0; i < licenceRequesters; i++) {
      if (i % 2 === 0) {
        load.loop('licence-create', (signal) =>
          fetch(licences(), {
            method: 'POST',
            headers: { 'content-type': 'application/json', ...asOwner() },
            body: JSON.stringify({
              platform_name: registry.platformName,
              scopes: ['audiobook'],
              description: 'Narration of audiobook chapters for the tests',
              expires_at: new Date(Date.now() + 30 * 86_400_000).toISOString(),
            }),
            signal,
          }),
        );
      } else {
        load.loop('licence-list', (signal) => fetch(licences(), { headers: asOwner(), signal }));
      }
    }
    load.loop(
      'login',
      (signal) =>
        fetch(`${service.originUrl}/api/v1/auth/login`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(login),
          signal,
        }),
      200,
    );
    load.loop('webhook-list', (signal) => fetch(`${service.originUrl}/api/v1/webhooks`, { headers: asOwner(), signal }));
    load.loop('checkpoint', (signal) => fetch(`${service.originUrl}/tlog/checkpoint`, { signal }));
    load.loop('readyz', (signal) => fetch(`${service.originUrl}/readyz`, { signal }), 100);
    return load;
  }
  const UNRELATED = ['login', 'webhook-list', 'checkpoint', 'readyz'] as const;
  const LICENCE = ['licence-create', 'licence-list'] as const;

  it('answers 503 with Retry-After to requests waiting on a held table lock, keeps answering every other request, and recovers when it is released', async () => {
    const originPid = service.origin.pid();
    // Another session, as an operator's migration or a stuck job elsewhere would be.
    const holder = await openPostgres(postgres.url, {
      localProxy: true,
      maxConnections: 1,
      timeouts: { statementMs: 600_000, lockMs: 60_000, acquireMs: 60_000 },
    });
    let release!: () => void;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    let lockedAt = 0;
    let releasedAt = 0;
    let locked!: () => void;
    const lockTaken = new Promise<void>((resolve) => {
      locked = resolve;
    });
    const load = startLoad(DATABASE_STALLS.licenceRequesters);
    const recoveries: Record<string, number> = {};
    let holding: Promise<void> | null = null;
    try {
      await sleep(STEADY_MS);
      holding = holder.db.transaction(async (tx) => {
        await tx.execute(sql`lock table licenses in access exclusive mode`);
        lockedAt = Date.now();
        locked();
        await held;
      });
      await lockTaken;
      await sleep(DATABASE_STALLS.lockHeldSeconds * 1000);
      release();
      await holding;
      releasedAt = Date.now();
      for (const kind of LICENCE) recoveries[kind] = await load.firstSuccess(kind, releasedAt, RECOVERY_MS);
      await sleep(STEADY_MS);
    } finally {
      release();
      await holding?.catch(() => undefined);
      await load.stop();
      await holder.close();
    }
    const duringLock = (kind: string) => load.of(kind, lockedAt, releasedAt);
    // A licence request that started with time to wait out the lock timeout before the release.
    const blockedWindowEnd = releasedAt - TIMEOUTS.lockMs - TIMEOUTS.acquireMs;
    const blocked = LICENCE.flatMap((kind) => load.of(kind, lockedAt, blockedWindowEnd));
    console.log(
      `[faults] table lock held ${releasedAt - lockedAt} ms: ${load.answers.length} requests; during the lock ${JSON.stringify(
        Object.fromEntries([...LICENCE, ...UNRELATED].map((kind) => [kind, statusCounts(duringLock(kind))])),
      )}; licence 503 in max ${maxOf(blocked.map((a) => a.ms))} ms; other requests answered in max ${maxOf(
        UNRELATED.flatMap((kind) => duringLock(kind).map((a) => a.ms)),
      )} ms; licences served again ${JSON.stringify(recoveries)} ms after the release`,
    );

    expect(service.origin.pid()).toBe(originPid);
    // Never a hang, a dropped connection or a 500.
    const unclean = load.answers.filter((a) => a.status !== 200 && a.status !== 201 && a.status !== 503);
    expect(unclean.map((a) => `${a.kind} ${a.status} after ${a.ms} ms: ${a.body.slice(0, 200)}`)).toEqual([]);
    // The requests that need the locked table: a 503 within the bound, none served while it is held.
    expect(blocked.length).toBeGreaterThan(DATABASE_STALLS.licenceRequesters);
    expect(blocked.filter((a) => a.status !== 503).map((a) => `${a.kind} ${a.status}`)).toEqual([]);
    expectUnavailable(blocked);
    for (const a of LICENCE.flatMap((kind) => load.of(kind))) expect(a.ms).toBeLessThan(TIMEOUTS.acquireMs + TIMEOUTS.lockMs + SLACK_MS);
    // Those that do not: answered throughout, the pool never exhausted by the waiting ones.
    for (const kind of UNRELATED) {
      const answers = duringLock(kind);
      expect(answers.length, kind).toBeGreaterThan(0);
      expect(answers.filter((a) => a.status !== 200).map((a) => `${a.kind} ${a.status}: ${a.body.slice(0, 200)}`)).toEqual([]);
    }
    // And after the release the licences are served again, created ones included.
    expect(load.of('licence-create', releasedAt).some((a) => a.status === 201)).toBe(true);
    passed++;
  });

  it('answers 503 with Retry-After within the bounds while the server is frozen, readiness 503, and serves again by itself after it thaws', async () => {
    const originPid = service.origin.pid();
    const load = startLoad(4);
    let frozenAt = 0;
    let thawedAt = 0;
    const recoveries: Record<string, number> = {};
    let thaw: (() => void) | null = null;
    try {
      await sleep(STEADY_MS);
      thaw = freezePostgres(postgres);
      frozenAt = Date.now();
      await sleep(DATABASE_STALLS.freezeSeconds * 1000);
      thaw();
      thawedAt = Date.now();
      for (const kind of [...LICENCE, ...UNRELATED]) recoveries[kind] = await load.firstSuccess(kind, thawedAt, RECOVERY_MS);
      await sleep(STEADY_MS);
    } finally {
      thaw?.();
      await load.stop();
    }
    /** The longest a request may wait while the server answers nothing: a connection's wait, then one query's deadline. */
    const stalledMs = TIMEOUTS.acquireMs + TIMEOUTS.statementMs + QUERY_DEADLINE_GRACE_MS;
    const bound = stalledMs + SLACK_MS;
    // Requests that started in the freeze (not in the moment it took hold) early enough to end before the thaw.
    const frozen = (kind: string) => load.of(kind, frozenAt + 250, thawedAt - stalledMs);
    console.log(
      `[faults] server frozen ${thawedAt - frozenAt} ms: ${load.answers.length} requests; during the freeze ${JSON.stringify(
        Object.fromEntries([...LICENCE, ...UNRELATED].map((kind) => [kind, statusCounts(load.of(kind, frozenAt, thawedAt))])),
      )}; answered in max ${maxOf(load.of('licence-create', frozenAt, thawedAt).map((a) => a.ms))} ms (licence create), ${maxOf(
        load.answers.filter((a) => a.startedAt >= frozenAt && a.startedAt < thawedAt).map((a) => a.ms),
      )} ms (any); served again ${JSON.stringify(recoveries)} ms after the thaw`,
    );

    expect(service.origin.pid()).toBe(originPid);
    const unclean = load.answers.filter((a) => a.status !== 200 && a.status !== 201 && a.status !== 503);
    expect(unclean.map((a) => `${a.kind} ${a.status} after ${a.ms} ms: ${a.body.slice(0, 200)}`)).toEqual([]);
    // Every request answered within the bound: none waited for the thaw.
    const slow = load.answers.filter((a) => a.ms >= bound);
    expect(slow.map((a) => `${a.kind} ${a.status} after ${a.ms} ms`)).toEqual([]);
    // Whatever needs the database answered 503 problem+json with Retry-After, readiness included.
    for (const kind of ['licence-create', 'licence-list', 'login', 'webhook-list', 'readyz']) {
      const answers = frozen(kind);
      expect(answers.length, kind).toBeGreaterThan(0);
      expect(answers.filter((a) => a.status !== 503).map((a) => `${a.kind} ${a.status}`)).toEqual([]);
      expectUnavailable(answers);
    }
    // The background jobs came back too: a licence created after the thaw is chained by the audit appender.
    const created = load.of('licence-create', thawedAt).find((a) => a.status === 201);
    const licenceId = JSON.parse(created!.body).license_id as string;
    const chained = async () =>
      (await auditLog(registry, { voice_id: voiceId })).some((entry) => entry.reason === `license_created:${licenceId}`);
    await eventually(chained, 30_000);
    passed++;
  });
});
