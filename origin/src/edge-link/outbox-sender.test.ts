import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  createdApiKeySchema,
  INTERNAL_SYNC_PATH,
  pathOf,
  platformSchema,
  type SyncUpdate,
  sha256Hex,
  syncBatchSchema,
} from '@vip/shared-schema';
import { createApiKeyRoute, createPlatformRoute, revokeApiKeyRoute } from '@vip/shared-schema/routes/origin/platforms';
import { asc, eq } from 'drizzle-orm';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { edgeOutbox } from '../db/schema.js';
import { BackgroundLoop } from '../loops/background-loop.js';
import { bearer, loggedIn, startTestOrigin, type TestOrigin } from '../testing/origin.js';
import { readSignedRequest } from '../testing/signed-request.js';
import { OutboxSender, type OutboxSenderOptions } from './outbox-sender.js';

const SECRET = 'edge-sync-test-secret-0123456789';

/** A stand-in for the edge's sync route: checks the HMAC exactly as the edge does, then answers as told. */
class FakeEdge {
  readonly received: SyncUpdate[] = [];
  readonly verdicts: string[] = [];
  /** Statuses to answer with, one per request, then 200. */
  failures: number[] = [];
  private server: Server | null = null;
  url = '';

  async start(port = 0): Promise<void> {
    this.server = createServer(async (request, response) => {
      const { body, verdict } = await readSignedRequest(request, SECRET);
      this.verdicts.push(verdict);
      const failure = this.failures.shift();
      if (verdict !== 'ok' || request.url !== INTERNAL_SYNC_PATH || failure) {
        response.writeHead(failure ?? 401).end();
        return;
      }
      const batch = syncBatchSchema.parse(JSON.parse(body));
      this.received.push(...batch.updates);
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ applied: batch.updates.length, stale: 0 }));
    });
    await new Promise<void>((resolve) => this.server!.listen(port, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async stop(): Promise<void> {
    await new Promise((resolve) => this.server?.close(resolve));
    this.server?.closeAllConnections();
  }

  updatesFor(keyHash: string) {
    return this.received.filter((update) => update.kind === 'api_key' && update.key_hash === keyHash);
  }
}

let origin: TestOrigin;
let adminToken: string;
const edge = new FakeEdge();
const senders: BackgroundLoop[] = [];

beforeAll(async () => {
  origin = await startTestOrigin();
  adminToken = (await loggedIn(origin, 'admin')).accessToken;
  await edge.start();
});
afterEach(async () => {
  await Promise.all(senders.splice(0).map((sender) => sender.stop()));
  edge.failures = [];
});
afterAll(async () => {
  await edge.stop();
  await origin?.close();
});

/** A sender in its loop, as jobs/background-jobs.ts runs it, woken by the outbox's nudge. */
function startSender({ idlePollMs = 50, ...overrides }: Partial<OutboxSenderOptions> & { idlePollMs?: number } = {}) {
  const sender = new OutboxSender({
    db: origin.database.db,
    edge: { url: edge.url, internalSecret: SECRET },
    clock: origin.runtime.clock,
    log: origin.app.log,
    retryBaseMs: 20,
    retryMaxMs: 100,
    ...overrides,
  });
  const loop = new BackgroundLoop({
    name: 'edge-sync',
    round: () => sender.sendDueBatch(),
    idleMs: idlePollMs,
    errorBackoffMs: idlePollMs,
    wake: origin.outbox,
    log: origin.app.log,
  });
  senders.push(loop);
  loop.start();
  return loop;
}

const call = (method: 'POST' | 'DELETE', url: string, payload?: object) =>
  origin.app.inject({ method, url, headers: bearer(adminToken), ...(payload ? { payload } : {}) });

async function createKey() {
  const platform = platformSchema.parse((await call('POST', pathOf(createPlatformRoute), { name: `Sync ${crypto.randomUUID()}` })).json());
  const key = createdApiKeySchema.parse((await call('POST', pathOf(createApiKeyRoute, { platform_id: platform.platform_id }), {})).json());
  return { platform, key, keyHash: await sha256Hex(key.api_key) };
}

const outboxRows = (keyHash: string) =>
  origin.database.db.select().from(edgeOutbox).where(eq(edgeOutbox.entityKey, keyHash)).orderBy(asc(edgeOutbox.id));

async function eventually(check: () => Promise<boolean> | boolean, timeoutMs = 5000): Promise<number> {
  const started = Date.now();
  while (!(await check())) {
    if (Date.now() - started > timeoutMs) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  return Date.now() - started;
}

describe('edge outbox sender', () => {
  it('delivers creation and revocation, signed, with the outbox ids as growing versions, and marks them delivered', async () => {
    startSender();
    const { platform, key, keyHash } = await createKey();
    await call('DELETE', pathOf(revokeApiKeyRoute, { platform_id: platform.platform_id, key_id: key.key_id }));
    await eventually(() => edge.updatesFor(keyHash).length === 2);

    const rows = await outboxRows(keyHash);
    const updates = edge.updatesFor(keyHash);
    expect(updates.map((update) => update.version)).toEqual(rows.map((row) => row.id));
    expect(updates[1]!.version).toBeGreaterThan(updates[0]!.version);
    expect(updates.map((update) => update.record && 'revoked' in update.record && update.record.revoked)).toEqual([false, true]);
    expect(updates[0]).toMatchObject({ kind: 'api_key', key_hash: keyHash, record: { key_id: key.key_id, platform_name: platform.name } });
    await eventually(async () => (await outboxRows(keyHash)).every((row) => row.deliveredAt !== null));
    expect(edge.verdicts.every((verdict) => verdict === 'ok')).toBe(true);
  });

  it('retries with backoff while the edge answers 500, and loses nothing', async () => {
    edge.failures = [500, 500, 503];
    startSender();
    const { keyHash } = await createKey();
    await eventually(() => edge.updatesFor(keyHash).length === 1);
    const [row] = await outboxRows(keyHash);
    await eventually(async () => (await outboxRows(keyHash))[0]!.deliveredAt !== null);
    expect(row!.attempts).toBeGreaterThanOrEqual(3);
    expect(edge.failures).toEqual([]);
  });

  it('keeps updates while the edge is down and delivers them from the table after a restart', async () => {
    const down = new FakeEdge();
    await down.start();
    const downUrl = down.url;
    await down.stop();
    const first = startSender({ edge: { url: downUrl, internalSecret: SECRET } });
    const { keyHash } = await createKey();
    await eventually(async () => (await outboxRows(keyHash))[0]!.attempts > 0);
    const [failed] = await outboxRows(keyHash);
    expect(failed!.deliveredAt).toBeNull();
    expect(failed!.lastError).toMatch(/unreachable/);
    await first.stop();

    // A new process (a new sender) finds the row in the table; the edge is back.
    startSender();
    await eventually(() => edge.updatesFor(keyHash).length === 1);
  });

  it('is nudged by a committed revocation: the edge hears of it well under a second, without polling', async () => {
    startSender({ idlePollMs: 60_000 });
    const { platform, key, keyHash } = await createKey();
    await eventually(() => edge.updatesFor(keyHash).length === 1);
    const started = Date.now();
    await call('DELETE', pathOf(revokeApiKeyRoute, { platform_id: platform.platform_id, key_id: key.key_id }));
    await eventually(() => edge.updatesFor(keyHash).length === 2, 1000);
    expect(Date.now() - started).toBeLessThan(1000);
  });

  it('does not send a row twice when two senders (two origin processes) run at once', async () => {
    startSender();
    startSender();
    const keys = await Promise.all([createKey(), createKey(), createKey()]);
    for (const { keyHash } of keys) await eventually(() => edge.updatesFor(keyHash).length === 1);
    await new Promise((resolve) => setTimeout(resolve, 200));
    for (const { keyHash } of keys) expect(edge.updatesFor(keyHash)).toHaveLength(1);
  });
});
