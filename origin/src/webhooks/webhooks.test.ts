import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  LICENSE_TOKEN_PREFIX,
  PLATFORM_WEBHOOK_EVENTS,
  sha256Hex,
  WEBHOOK_HEADERS,
  type WebhookEvent,
  webhookDeliverySchema,
} from '@vip/shared-schema';
import {
  registeredWebhookSchema,
  rotatedWebhookSecretSchema,
  webhookDeliveryListSchema,
  webhookListSchema,
  webhookTestResultSchema,
} from '@vip/shared-schema/routes/origin-webhooks';
import { eq } from 'drizzle-orm';
import { Webhook } from 'standardwebhooks';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { licenses, webhookDeliveries, webhookEndpoints } from '../db/schema.js';
import { recordEvent } from '../events/store.js';
import { BackgroundLoop } from '../jobs/background-loop.js';
import { bearer, loggedIn, startTestOrigin, type TestOrigin } from '../testing/origin.js';
import { platformKey } from '../testing/platforms.js';
import { insertTestVoice } from '../testing/voices.js';
import type { Resolver } from './address-guard.js';
import { SecretEncryption } from './secret-encryption.js';
import { WebhookService, type WebhookSettings, webhookSettings } from './service.js';
import { WebhookWorker } from './worker.js';

interface Received {
  headers: IncomingHttpHeaders;
  body: string;
}

/** A receiver on 127.0.0.1 that answers from a script (then 200) and keeps every request. */
class Receiver {
  readonly received: Received[] = [];
  script: { status: number; headers?: Record<string, string> }[] = [];
  private server: Server | null = null;
  port = 0;

  async start(): Promise<void> {
    this.server = createServer((request, response) => {
      let body = '';
      request.on('data', (chunk) => {
        body += chunk;
      });
      request.on('end', () => {
        this.received.push({ headers: request.headers, body });
        const next = this.script.shift() ?? { status: 200 };
        response.writeHead(next.status, next.headers).end();
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.port = (this.server.address() as AddressInfo).port;
  }

  url(path = '/hook') {
    return `http://127.0.0.1:${this.port}${path}`;
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise((resolve) => this.server?.close(resolve));
  }
}

/** DNS the test controls: names map to addresses until a test changes them. */
const dns = new Map<string, string[]>();
const fakeResolver: Resolver = async (hostname) => {
  const addresses = dns.get(hostname);
  if (!addresses) throw new Error('ENOTFOUND');
  return addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
};

const firstKey = { id: 'first', key: Buffer.alloc(32, 1) };
const secondKey = { id: 'second', key: Buffer.alloc(32, 2) };
const settings: WebhookSettings = webhookSettings({
  allowLoopback: true,
  gateVariant: 'A',
  resolve: fakeResolver,
  secretEncryption: new SecretEncryption([firstKey]),
});

let origin: TestOrigin;
let receiver: Receiver;
beforeAll(async () => {
  origin = await startTestOrigin({ webhooks: settings });
  receiver = new Receiver();
  await receiver.start();
});
afterAll(async () => {
  await receiver?.stop();
  await origin?.close();
});
afterEach(async () => {
  receiver.received.length = 0;
  receiver.script = [];
  // Each test starts with nothing left to retry from the one before.
  await origin.database.db.update(webhookDeliveries).set({ status: 'cancelled' }).where(eq(webhookDeliveries.status, 'pending'));
});

const workerFor = (overrides: Partial<ConstructorParameters<typeof WebhookWorker>[0]> = {}) =>
  new WebhookWorker({
    db: origin.database.db,
    clock: origin.runtime.clock,
    log: origin.app.log,
    sender: settings.sender,
    retrySchedule: [0, 1, 1, 2],
    jitter: 0,
    ...overrides,
  });

async function register(token: string, body: { url: string; events: WebhookEvent[]; secret?: string }) {
  return origin.app.inject({ method: 'POST', url: '/api/v1/webhooks/register', headers: bearer(token), payload: body });
}

async function registered(token: string, events: WebhookEvent[] = ['voice.deleted'], url = receiver.url()) {
  const response = await register(token, { url, events });
  expect(response.statusCode).toBe(201);
  return registeredWebhookSchema.parse(response.json());
}

const emit = (type: WebhookEvent, ownerId: string, voiceId = crypto.randomUUID()) =>
  recordEvent(origin.database.db, { type, voiceId, ownerId }, origin.runtime.clock.now());

/** Runs fan-out and one delivery pass, as one worker round does. */
async function deliverOnce(worker: WebhookWorker) {
  await worker.fanOut();
  return worker.deliverDue();
}

const deliveriesTo = (webhookId: string) =>
  origin.database.db.select().from(webhookDeliveries).where(eq(webhookDeliveries.endpointId, webhookId));

describe('POST /webhooks/register', () => {
  it('registers an endpoint, generates a whsec_ secret, and lists it without the secret', async () => {
    const owner = await loggedIn(origin);
    const hook = await registered(owner.accessToken, ['enrollment.complete', 'voice.deleted']);
    expect(hook.secret).toMatch(/^whsec_[A-Za-z0-9+/]{32}$/);
    expect(hook.events).toEqual(['enrollment.complete', 'voice.deleted']);

    const listed = await origin.app.inject({ method: 'GET', url: '/api/v1/webhooks', headers: bearer(owner.accessToken) });
    const { webhooks } = webhookListSchema.parse(listed.json());
    expect(webhooks.map((webhook) => webhook.webhook_id)).toEqual([hook.webhook_id]);
    expect(listed.body).not.toContain(hook.secret);
  });

  it('keeps a secret the caller brings', async () => {
    const owner = await loggedIn(origin);
    const secret = `whsec_${Buffer.alloc(32, 7).toString('base64')}`;
    const response = await register(owner.accessToken, { url: receiver.url(), events: ['voice.deleted'], secret });
    expect(registeredWebhookSchema.parse(response.json()).secret).toBe(secret);
  });

  it('takes voice.detected in either variant (screening sends it), and refuses the events only platforms receive', async () => {
    const owner = await loggedIn(origin);
    expect((await register(owner.accessToken, { url: receiver.url(), events: ['voice.detected', 'license.requested'] })).statusCode).toBe(
      201,
    );
    const response = await register(owner.accessToken, { url: receiver.url(), events: ['license.granted'] });
    expect(response.statusCode).toBe(422);
    expect(response.json().errors).toEqual([{ field: 'body.events', message: expect.stringContaining('only to platforms') }]);
  });

  it('needs a Bearer token', async () => {
    const response = await origin.app.inject({
      method: 'POST',
      url: '/api/v1/webhooks/register',
      payload: { url: receiver.url(), events: ['voice.deleted'] },
    });
    expect(response.statusCode).toBe(401);
  });

  it.each([
    ['loopback (not allowed here)', 'http://127.0.0.2:9/hook', false],
    ['the metadata address', 'http://169.254.169.254/latest/meta-data', true],
    ['a private network', 'http://10.1.2.3/hook', true],
    ['172.16/12', 'http://172.20.0.1/hook', true],
    ['192.168/16', 'https://192.168.1.10/hook', true],
    ['CGNAT', 'http://100.64.0.1/hook', true],
    ['the unspecified address', 'http://0.0.0.0/hook', true],
    ['IPv6 loopback', 'http://[::1]/hook', false],
    ['IPv6 unique-local', 'http://[fd00::1]/hook', true],
    ['IPv6 link-local', 'http://[fe80::1]/hook', true],
    ['an IPv4-mapped private address', 'http://[::ffff:10.0.0.1]/hook', true],
    ['a name resolving to a private address', 'http://internal.example/hook', true],
    ['a name with one private address among public ones', 'http://mixed.example/hook', true],
    ['credentials in the URL', 'http://user:pass@public.example/hook', true],
    ['a scheme other than http(s)', 'ftp://public.example/hook', true],
    ['an unresolvable name', 'http://nowhere.example/hook', true],
  ])('refuses %s with 422 on url', async (_label, url, withLoopbackAllowed) => {
    dns.set('internal.example', ['10.0.0.7']);
    dns.set('mixed.example', ['93.184.216.34', '192.168.0.3']);
    dns.set('public.example', ['93.184.216.34']);
    const strict = withLoopbackAllowed
      ? origin
      : await startTestOrigin({ webhooks: { ...settings, sender: { ...settings.sender, allowLoopback: false } } });
    try {
      const owner = await loggedIn(strict);
      const response = await strict.app.inject({
        method: 'POST',
        url: '/api/v1/webhooks/register',
        headers: bearer(owner.accessToken),
        payload: { url, events: ['voice.deleted'] },
      });
      expect(response.statusCode).toBe(422);
      // A loopback receiver is refused only for want of the setting, and the answer names it.
      const naming = expect.stringContaining('WEBHOOK_ALLOW_LOOPBACK');
      expect(response.json().errors).toEqual([
        { field: 'body.url', message: withLoopbackAllowed ? expect.not.stringContaining('WEBHOOK_ALLOW_LOOPBACK') : naming },
      ]);
    } finally {
      if (strict !== origin) await strict.close();
    }
  });

  it('accepts a public host name', async () => {
    dns.set('public.example', ['93.184.216.34']);
    const owner = await loggedIn(origin);
    const response = await register(owner.accessToken, { url: 'https://public.example/hook', events: ['voice.deleted'] });
    expect(response.statusCode).toBe(201);
  });
});

describe('managing endpoints', () => {
  it('deletes an endpoint; another owner gets 404', async () => {
    const owner = await loggedIn(origin);
    const stranger = await loggedIn(origin);
    const hook = await registered(owner.accessToken);
    const url = `/api/v1/webhooks/${hook.webhook_id}`;
    expect((await origin.app.inject({ method: 'DELETE', url, headers: bearer(stranger.accessToken) })).statusCode).toBe(404);
    const deleted = await origin.app.inject({ method: 'DELETE', url, headers: bearer(owner.accessToken) });
    expect(deleted.json()).toEqual({ webhook_id: hook.webhook_id, deleted: true });
    expect((await origin.app.inject({ method: 'DELETE', url, headers: bearer(owner.accessToken) })).statusCode).toBe(404);
  });

  it('sends a signed test delivery', async () => {
    const owner = await loggedIn(origin);
    const hook = await registered(owner.accessToken);
    const response = await origin.app.inject({
      method: 'POST',
      url: `/api/v1/webhooks/${hook.webhook_id}/test`,
      headers: bearer(owner.accessToken),
    });
    const result = webhookTestResultSchema.parse(response.json());
    expect(result).toMatchObject({ delivered: true, status_code: 200 });
    const [request] = receiver.received;
    expect(request!.headers['webhook-id']).toBe(result.message_id);
    expect(new Webhook(hook.secret).verify(request!.body, request!.headers as Record<string, string>)).toMatchObject({
      event: 'webhook.test',
    });
  });

  it('rotates the secret: both secrets sign during the grace period, only the new one after it', async () => {
    const owner = await loggedIn(origin);
    const hook = await registered(owner.accessToken);
    const response = await origin.app.inject({
      method: 'POST',
      url: `/api/v1/webhooks/${hook.webhook_id}/rotate-secret`,
      headers: bearer(owner.accessToken),
    });
    const rotated = rotatedWebhookSecretSchema.parse(response.json());
    expect(rotated.secret).not.toBe(hook.secret);

    await emit('voice.deleted', owner.userId);
    await deliverOnce(workerFor());
    const [request] = receiver.received;
    const headers = request!.headers as Record<string, string>;
    expect(headers['webhook-signature']!.split(' ')).toHaveLength(2);
    expect(new Webhook(rotated.secret).verify(request!.body, headers)).toBeTruthy();
    expect(new Webhook(hook.secret).verify(request!.body, headers)).toBeTruthy();

    await origin.database.db
      .update(webhookEndpoints)
      .set({ previousSecretUntil: new Date(Date.now() - 1000) })
      .where(eq(webhookEndpoints.id, hook.webhook_id));
    await emit('voice.deleted', owner.userId);
    await deliverOnce(workerFor());
    const later = receiver.received[1]!.headers as Record<string, string>;
    expect(() => new Webhook(hook.secret).verify(receiver.received[1]!.body, later)).toThrow();
    expect(new Webhook(rotated.secret).verify(receiver.received[1]!.body, later)).toBeTruthy();
  });
});

describe('delivery', () => {
  it('retries a failing receiver and delivers each event once, with one webhook-id across attempts', async () => {
    const owner = await loggedIn(origin);
    const hook = await registered(owner.accessToken);
    const voiceId = crypto.randomUUID();
    await emit('voice.deleted', owner.userId, voiceId);
    receiver.script = [{ status: 500 }, { status: 502 }, { status: 503 }];
    const worker = workerFor();

    for (let attempt = 0; attempt < 4; attempt++) {
      await deliverOnce(worker);
      origin.runtime.advance(2_000);
    }
    expect(receiver.received).toHaveLength(4);
    const ids = new Set(receiver.received.map((request) => request.headers['webhook-id']));
    expect(ids.size).toBe(1);
    const [delivery] = await deliveriesTo(hook.webhook_id);
    expect(delivery).toMatchObject({ status: 'delivered', attempts: 4, lastStatusCode: 200 });
    const last = receiver.received[3]!;
    const payload = webhookDeliverySchema.parse(new Webhook(hook.secret).verify(last.body, last.headers as Record<string, string>));
    expect(payload).toMatchObject({ event: 'voice.deleted', voice_id: voiceId });
    expect(last.headers[WEBHOOK_HEADERS.serviceEvent]).toBe(last.headers['webhook-signature']);

    await deliverOnce(worker);
    expect(receiver.received).toHaveLength(4);
  });

  it('gives up after the last scheduled attempt and moves on to the next event', async () => {
    const owner = await loggedIn(origin);
    const hook = await registered(owner.accessToken);
    await emit('voice.deleted', owner.userId);
    await emit('voice.deleted', owner.userId);
    receiver.script = [{ status: 500 }, { status: 500 }, { status: 500 }, { status: 500 }];
    const worker = workerFor();
    for (let round = 0; round < 5; round++) {
      await deliverOnce(worker);
      origin.runtime.advance(2_000);
    }
    const rows = await deliveriesTo(hook.webhook_id);
    expect(rows.map((row) => [row.status, row.attempts])).toEqual([
      ['failed', 4],
      ['delivered', 1],
    ]);
  });

  it('keeps per-endpoint order: event N+1 waits while N is being retried', async () => {
    const owner = await loggedIn(origin);
    await registered(owner.accessToken);
    const first = crypto.randomUUID();
    const second = crypto.randomUUID();
    await emit('voice.deleted', owner.userId, first);
    origin.runtime.advance(10);
    await emit('voice.deleted', owner.userId, second);
    receiver.script = [{ status: 500 }];
    const worker = workerFor();
    await deliverOnce(worker);
    await deliverOnce(worker);
    expect(receiver.received.map((request) => JSON.parse(request.body).voice_id)).toEqual([first]);
    origin.runtime.advance(1_500);
    await deliverOnce(worker);
    await deliverOnce(worker);
    expect(receiver.received.map((request) => JSON.parse(request.body).voice_id)).toEqual([first, first, second]);
  });

  it('honours Retry-After over the schedule', async () => {
    const owner = await loggedIn(origin);
    const hook = await registered(owner.accessToken);
    await emit('voice.deleted', owner.userId);
    receiver.script = [{ status: 429, headers: { 'retry-after': '120' } }];
    const worker = workerFor();
    await deliverOnce(worker);
    origin.runtime.advance(60_000);
    await deliverOnce(worker);
    expect(receiver.received).toHaveLength(1);
    const [pending] = await deliveriesTo(hook.webhook_id);
    expect(pending!.nextAttemptAt.getTime() - origin.runtime.clock.now().getTime()).toBeGreaterThan(55_000);
    origin.runtime.advance(61_000);
    await deliverOnce(worker);
    expect(receiver.received).toHaveLength(2);
    expect((await deliveriesTo(hook.webhook_id))[0]!.status).toBe('delivered');
  });

  it('disables the endpoint on 410 Gone and drops its queue', async () => {
    const owner = await loggedIn(origin);
    const hook = await registered(owner.accessToken);
    await emit('voice.deleted', owner.userId);
    await emit('voice.deleted', owner.userId);
    receiver.script = [{ status: 410 }];
    const worker = workerFor();
    await deliverOnce(worker);
    await deliverOnce(worker);
    expect(receiver.received).toHaveLength(1);
    const [endpoint] = await origin.database.db.select().from(webhookEndpoints).where(eq(webhookEndpoints.id, hook.webhook_id));
    expect(endpoint!.disabledAt).not.toBeNull();
    expect((await deliveriesTo(hook.webhook_id)).map((row) => row.status)).toEqual(['failed', 'cancelled']);
    await emit('voice.deleted', owner.userId);
    await deliverOnce(worker);
    expect(receiver.received).toHaveLength(1);
  });

  it('lets the owner, and no one else, enable an endpoint a 410 disabled; new events flow again', async () => {
    const owner = await loggedIn(origin);
    const stranger = await loggedIn(origin);
    const hook = await registered(owner.accessToken);
    await emit('voice.deleted', owner.userId);
    receiver.script = [{ status: 410 }];
    const worker = workerFor();
    await deliverOnce(worker);
    const url = `/api/v1/webhooks/${hook.webhook_id}/enable`;
    expect((await origin.app.inject({ method: 'POST', url, headers: bearer(stranger.accessToken) })).statusCode).toBe(404);
    await emit('voice.deleted', owner.userId); // while disabled: never sent
    await deliverOnce(worker);
    expect(receiver.received).toHaveLength(1);

    const enabled = await origin.app.inject({ method: 'POST', url, headers: bearer(owner.accessToken) });
    expect(enabled.statusCode).toBe(200);
    expect(enabled.json()).toMatchObject({ webhook_id: hook.webhook_id, disabled_at: null });
    await emit('voice.deleted', owner.userId);
    await deliverOnce(worker);
    expect(receiver.received).toHaveLength(2);
    expect((await deliveriesTo(hook.webhook_id)).map((row) => row.status)).toEqual(['failed', 'delivered']);
  });

  it('does not follow redirects', async () => {
    const owner = await loggedIn(origin);
    const hook = await registered(owner.accessToken);
    await emit('voice.deleted', owner.userId);
    receiver.script = [{ status: 307, headers: { location: 'http://169.254.169.254/' } }];
    await deliverOnce(workerFor());
    expect(receiver.received).toHaveLength(1);
    expect((await deliveriesTo(hook.webhook_id))[0]).toMatchObject({ status: 'pending', attempts: 1, lastStatusCode: 307 });
  });

  it('refuses at delivery time when the name now resolves to a private address', async () => {
    dns.set('rebinding.example', ['93.184.216.34']);
    const owner = await loggedIn(origin);
    const hook = await registered(owner.accessToken, ['voice.deleted'], 'http://rebinding.example/hook');
    dns.set('rebinding.example', ['169.254.169.254']);
    await emit('voice.deleted', owner.userId);
    await deliverOnce(workerFor());
    const [delivery] = await deliveriesTo(hook.webhook_id);
    expect(delivery).toMatchObject({ status: 'pending', attempts: 1, lastStatusCode: null });
    expect(delivery!.lastError).toMatch(/^refused: /);
  });

  it('connects to the address it checked (pinned), whatever the name resolves to later', async () => {
    dns.set('receiver.example', ['127.0.0.1']);
    const owner = await loggedIn(origin);
    const hook = await registered(owner.accessToken, ['voice.deleted'], `http://receiver.example:${receiver.port}/hook`);
    await emit('voice.deleted', owner.userId);
    await deliverOnce(workerFor());
    expect(receiver.received).toHaveLength(1);
    expect(receiver.received[0]!.headers.host).toBe(`receiver.example:${receiver.port}`);
    expect((await deliveriesTo(hook.webhook_id))[0]!.status).toBe('delivered');
  });

  it('sends owners only the events of their voices; admins get all', async () => {
    const owner = await loggedIn(origin);
    const other = await loggedIn(origin);
    const admin = await loggedIn(origin, 'admin');
    const ownerHook = await registered(owner.accessToken, ['license.revoked']);
    const adminHook = await registered(admin.accessToken, ['license.revoked']);
    await emit('license.revoked', other.userId);
    await emit('voice.deleted', owner.userId);
    await deliverOnce(workerFor());
    expect(await deliveriesTo(ownerHook.webhook_id)).toHaveLength(0);
    expect((await deliveriesTo(adminHook.webhook_id)).map((row) => row.eventType)).toEqual(['license.revoked']);
  });

  it('loses nothing when the worker stops between the commit and the delivery', async () => {
    const owner = await loggedIn(origin);
    const hook = await registered(owner.accessToken);
    const voiceId = crypto.randomUUID();
    // Committed while no worker runs (a crash right after the change's transaction).
    await emit('voice.deleted', owner.userId, voiceId);
    const crashed = workerFor();
    await crashed.fanOut();
    // ...and stopped again before sending anything. A new process starts with a real loop.
    const restarted = workerFor();
    const loop = new BackgroundLoop({ name: 'webhooks', round: () => restarted.round(), idleMs: 50, log: origin.app.log });
    loop.start();
    try {
      await expect.poll(async () => (await deliveriesTo(hook.webhook_id))[0]?.status, { timeout: 10_000 }).toBe('delivered');
    } finally {
      await loop.stop();
    }
    expect(receiver.received).toHaveLength(1);
    expect(JSON.parse(receiver.received[0]!.body).voice_id).toBe(voiceId);
  });

  it('retries in real time under WEBHOOK_RETRY_SCHEDULE=0,1,1,2 with the background loop', async () => {
    const owner = await loggedIn(origin);
    const hook = await registered(owner.accessToken);
    await emit('voice.deleted', owner.userId);
    receiver.script = [{ status: 500 }, { status: 500 }];
    const worker = workerFor();
    const loop = new BackgroundLoop({ name: 'webhooks', round: () => worker.round(), idleMs: 5_000, log: origin.app.log });
    loop.start();
    try {
      await expect.poll(async () => (await deliveriesTo(hook.webhook_id))[0]?.status, { timeout: 10_000, interval: 100 }).toBe('delivered');
    } finally {
      await loop.stop();
    }
    expect(receiver.received).toHaveLength(3);
    expect((await deliveriesTo(hook.webhook_id))[0]).toMatchObject({ status: 'delivered', attempts: 3 });
  });
});

describe('GET /webhooks/{id}/deliveries', () => {
  const history = (token: string, webhookId: string, query = '') =>
    origin.app.inject({ method: 'GET', url: `/api/v1/webhooks/${webhookId}/deliveries${query}`, headers: bearer(token) });

  it("lists an endpoint's deliveries newest first, tests beside events: status, attempts, last answer and times, never a body", async () => {
    const owner = await loggedIn(origin);
    const hook = await registered(owner.accessToken);
    const voiceId = crypto.randomUUID();
    await emit('voice.deleted', owner.userId, voiceId);
    receiver.script = [{ status: 503 }];
    const worker = workerFor();
    await deliverOnce(worker);
    const tested = webhookTestResultSchema.parse(
      (
        await origin.app.inject({ method: 'POST', url: `/api/v1/webhooks/${hook.webhook_id}/test`, headers: bearer(owner.accessToken) })
      ).json(),
    );

    const response = await history(owner.accessToken, hook.webhook_id);
    expect(response.statusCode).toBe(200);
    const { deliveries } = webhookDeliveryListSchema.parse(response.json());
    const [test, event] = deliveries;
    expect(deliveries).toHaveLength(2);
    expect(test).toMatchObject({
      message_id: tested.message_id,
      event: 'webhook.test',
      status: 'delivered',
      attempts: 1,
      last_status_code: 200,
      last_error: null,
      next_attempt_at: null,
    });
    expect(test!.finished_at).toBe(test!.last_attempt_at);
    expect(event).toMatchObject({ event: 'voice.deleted', status: 'pending', attempts: 1, last_status_code: 503, last_error: 'HTTP 503' });
    expect(event!.message_id).toBe(receiver.received[0]!.headers['webhook-id']);
    expect(Date.parse(event!.next_attempt_at!)).toBeGreaterThan(Date.parse(event!.last_attempt_at!));
    expect(event!.finished_at).toBeNull();
    expect(response.body).not.toContain(voiceId);

    origin.runtime.advance(2_000);
    await deliverOnce(worker);
    const after = webhookDeliveryListSchema.parse((await history(owner.accessToken, hook.webhook_id)).json()).deliveries;
    expect(after.find((each) => each.message_id === event!.message_id)).toMatchObject({
      status: 'delivered',
      attempts: 2,
      last_status_code: 200,
      last_error: null,
      next_attempt_at: null,
    });
    expect(webhookDeliveryListSchema.parse((await history(owner.accessToken, hook.webhook_id, '?limit=1')).json()).deliveries).toEqual([
      after[0],
    ]);
  });

  it('records a failed test delivery with the reason', async () => {
    const owner = await loggedIn(origin);
    const hook = await registered(owner.accessToken);
    receiver.script = [{ status: 500 }];
    await origin.app.inject({ method: 'POST', url: `/api/v1/webhooks/${hook.webhook_id}/test`, headers: bearer(owner.accessToken) });
    const [test] = webhookDeliveryListSchema.parse((await history(owner.accessToken, hook.webhook_id)).json()).deliveries;
    expect(test).toMatchObject({ event: 'webhook.test', status: 'failed', attempts: 1, last_status_code: 500, last_error: 'HTTP 500' });
  });

  it("answers another owner's endpoint and a missing one with 404, a bad limit with 422, and no token with 401", async () => {
    const owner = await loggedIn(origin);
    const stranger = await loggedIn(origin);
    const hook = await registered(owner.accessToken);
    for (const response of [await history(stranger.accessToken, hook.webhook_id), await history(owner.accessToken, crypto.randomUUID())]) {
      expect(response.statusCode).toBe(404);
      expect(response.json()).toMatchObject({ code: 'not_found' });
      expect(response.headers['content-type']).toContain('application/problem+json');
    }
    for (const limit of ['0', '101', 'many']) {
      const response = await history(owner.accessToken, hook.webhook_id, `?limit=${limit}`);
      expect(response.statusCode).toBe(422);
      expect(response.json().errors).toEqual([expect.objectContaining({ field: 'query.limit' })]);
    }
    const anonymous = await origin.app.inject({ method: 'GET', url: `/api/v1/webhooks/${hook.webhook_id}/deliveries` });
    expect(anonymous.statusCode).toBe(401);
  });
});

describe('secrets at rest', () => {
  const endpointRow = async (db: TestOrigin['database']['db'], webhookId: string) =>
    (await db.select().from(webhookEndpoints).where(eq(webhookEndpoints.id, webhookId)))[0]!;
  /** The secret's key bytes, as they would appear in a dump in any of the usual encodings. */
  const traces = (secret: string) => {
    const bytes = Buffer.from(secret.slice('whsec_'.length), 'base64');
    return [secret, bytes.toString('base64'), bytes.toString('base64url'), bytes.toString('hex')];
  };
  const expectEncrypted = (stored: string | null, ...secrets: string[]) => {
    expect(stored).toMatch(/^v1\.first\.[\w-]{16}\.[\w-]+$/);
    for (const trace of secrets.flatMap(traces)) expect(stored).not.toContain(trace);
  };

  it('never stores a secret in plaintext: not at registration, not after a rotation', async () => {
    const owner = await loggedIn(origin);
    const generated = await registered(owner.accessToken);
    expectEncrypted((await endpointRow(origin.database.db, generated.webhook_id)).secret, generated.secret);
    const given = `whsec_${Buffer.alloc(32, 9).toString('base64')}`;
    const brought = registeredWebhookSchema.parse(
      (await register(owner.accessToken, { url: receiver.url(), events: ['voice.deleted'], secret: given })).json(),
    );
    expectEncrypted((await endpointRow(origin.database.db, brought.webhook_id)).secret, given);

    const response = await origin.app.inject({
      method: 'POST',
      url: `/api/v1/webhooks/${generated.webhook_id}/rotate-secret`,
      headers: bearer(owner.accessToken),
    });
    const rotated = rotatedWebhookSecretSchema.parse(response.json());
    const row = await endpointRow(origin.database.db, generated.webhook_id);
    expectEncrypted(row.secret, rotated.secret, generated.secret);
    expectEncrypted(row.previousSecret, rotated.secret, generated.secret);

    await emit('voice.deleted', owner.userId);
    await deliverOnce(workerFor());
    const [sent] = await deliveriesTo(generated.webhook_id);
    const delivery = receiver.received.find((request) => request.headers['webhook-id'] === sent!.messageId);
    const headers = delivery!.headers as Record<string, string>;
    expect(new Webhook(rotated.secret).verify(delivery!.body, headers)).toMatchObject({ event: 'voice.deleted' });
    expect(new Webhook(generated.secret).verify(delivery!.body, headers)).toMatchObject({ event: 'voice.deleted' });
  });

  it('still delivers a secret encrypted under a key that is no longer first, and re-encrypts it at start-up', async () => {
    const own = await startTestOrigin({ webhooks: settings });
    try {
      const owner = await loggedIn(own);
      const response = await own.app.inject({
        method: 'POST',
        url: '/api/v1/webhooks/register',
        headers: bearer(owner.accessToken),
        payload: { url: receiver.url(), events: ['voice.deleted'] },
      });
      const hook = registeredWebhookSchema.parse(response.json());
      // The operator puts a new key first; the old one stays in the list to decrypt.
      const rotatedSender = { ...settings.sender, secretEncryption: new SecretEncryption([secondKey, firstKey]) };
      const deliver = async () => {
        const event = { type: 'voice.deleted' as const, voiceId: crypto.randomUUID(), ownerId: owner.userId };
        await recordEvent(own.database.db, event, own.runtime.clock.now());
        const worker = new WebhookWorker({
          db: own.database.db,
          clock: own.runtime.clock,
          log: own.app.log,
          sender: rotatedSender,
          retrySchedule: [0],
        });
        await deliverOnce(worker);
        const last = receiver.received.at(-1)!;
        return new Webhook(hook.secret).verify(last.body, last.headers as Record<string, string>);
      };
      expect(await deliver()).toMatchObject({ event: 'voice.deleted' });

      const restarted = new WebhookService({ db: own.database.db, runtime: own.runtime, settings: { ...settings, sender: rotatedSender } });
      expect(await restarted.reencryptStoredSecrets()).toEqual({ reencrypted: 1, unreadable: [] });
      expect((await endpointRow(own.database.db, hook.webhook_id)).secret).toMatch(/^v1\.second\./);
      expect(await deliver()).toMatchObject({ event: 'voice.deleted' });
      expect(receiver.received).toHaveLength(2);
    } finally {
      await own.close();
    }
  });

  it('sends nothing for a ciphertext copied onto another row, and says so loudly in the log without the secret', async () => {
    const owner = await loggedIn(origin);
    const source = await registered(owner.accessToken);
    const target = await registered(owner.accessToken);
    const copied = (await endpointRow(origin.database.db, source.webhook_id)).secret;
    await origin.database.db.update(webhookEndpoints).set({ secret: copied }).where(eq(webhookEndpoints.id, target.webhook_id));
    const logsBefore = origin.logs.length;

    await emit('voice.deleted', owner.userId);
    await deliverOnce(workerFor());
    expect(receiver.received).toHaveLength(1);
    const [sent] = receiver.received;
    expect(new Webhook(source.secret).verify(sent!.body, sent!.headers as Record<string, string>)).toBeTruthy();
    const [refused] = await deliveriesTo(target.webhook_id);
    expect(refused).toMatchObject({ status: 'pending', attempts: 1, lastStatusCode: null });
    expect(refused!.lastError).toMatch(/^not sent: the stored secret could not be decrypted/);

    const tested = await origin.app.inject({
      method: 'POST',
      url: `/api/v1/webhooks/${target.webhook_id}/test`,
      headers: bearer(owner.accessToken),
    });
    expect(webhookTestResultSchema.parse(tested.json())).toMatchObject({
      delivered: false,
      status_code: null,
      error: expect.stringMatching(/^not sent: /),
    });
    expect(receiver.received).toHaveLength(1);

    const logged = origin.logs.slice(logsBefore).map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(logged).toContainEqual(
      expect.objectContaining({ level: 50, webhook_id: target.webhook_id, msg: expect.stringContaining('could not be decrypted') }),
    );
    const text = origin.logs.slice(logsBefore).join('\n');
    for (const trace of [...traces(source.secret), ...traces(target.secret), copied]) expect(text).not.toContain(trace);
  });

  it('upgrades a plaintext row stored before encryption existed; its receiver keeps verifying with the secret it has', async () => {
    const owner = await loggedIn(origin);
    const id = crypto.randomUUID();
    const secret = `whsec_${Buffer.alloc(24, 5).toString('base64')}`;
    const previous = `whsec_${Buffer.alloc(24, 6).toString('base64')}`;
    await origin.database.db.insert(webhookEndpoints).values({
      id,
      ownerId: owner.userId,
      url: receiver.url(),
      events: ['voice.deleted'],
      secret,
      previousSecret: previous,
      previousSecretUntil: new Date(Date.now() + 3_600_000),
      createdAt: new Date(),
    });

    const upgraded = await origin.webhooks.reencryptStoredSecrets();
    expect(upgraded.reencrypted).toBeGreaterThanOrEqual(1);
    expect(upgraded.unreadable).not.toContain(id);
    const row = await endpointRow(origin.database.db, id);
    expectEncrypted(row.secret, secret, previous);
    expectEncrypted(row.previousSecret, secret, previous);
    await origin.webhooks.reencryptStoredSecrets();
    expect(await endpointRow(origin.database.db, id)).toEqual(row);

    await emit('voice.deleted', owner.userId);
    await deliverOnce(workerFor());
    const [delivery] = receiver.received;
    const headers = delivery!.headers as Record<string, string>;
    expect(new Webhook(secret).verify(delivery!.body, headers)).toMatchObject({ event: 'voice.deleted' });
    expect(new Webhook(previous).verify(delivery!.body, headers)).toMatchObject({ event: 'voice.deleted' });
  });
});

describe('webhooks of a platform (X-API-Key)', () => {
  const asKey = (apiKey: string) => ({ 'x-api-key': apiKey });
  const registerAsPlatform = (apiKey: string, events: WebhookEvent[]) =>
    origin.app.inject({
      method: 'POST',
      url: '/api/v1/webhooks/register',
      headers: asKey(apiKey),
      payload: { url: receiver.url(), events },
    });

  async function platformHook(events: WebhookEvent[] = [...PLATFORM_WEBHOOK_EVENTS]) {
    const platform = await platformKey(origin, 'Hooked');
    const response = await registerAsPlatform(platform.apiKey, events);
    expect(response.statusCode, response.body).toBe(201);
    return { platform, hook: registeredWebhookSchema.parse(response.json()) };
  }

  it('registers for its licence events only, and manages its own endpoints alone', async () => {
    const { platform, hook } = await platformHook();
    const refused = await registerAsPlatform(platform.apiKey, ['voice.deleted']);
    expect(refused.statusCode).toBe(422);
    expect(refused.json().errors).toEqual([{ field: 'body.events', message: expect.stringContaining('license.granted') }]);

    const listed = await origin.app.inject({ method: 'GET', url: '/api/v1/webhooks', headers: asKey(platform.apiKey) });
    expect(webhookListSchema.parse(listed.json()).webhooks.map((each) => each.webhook_id)).toEqual([hook.webhook_id]);
    const other = await platformKey(origin, 'Hooked');
    const admin = await loggedIn(origin, 'admin');
    const owner = await loggedIn(origin);
    for (const headers of [asKey(other.apiKey), bearer(admin.accessToken), bearer(owner.accessToken)]) {
      const removed = await origin.app.inject({ method: 'DELETE', url: `/api/v1/webhooks/${hook.webhook_id}`, headers });
      expect(removed.statusCode).toBe(404);
      const list = await origin.app.inject({ method: 'GET', url: '/api/v1/webhooks', headers });
      expect(list.body).not.toContain(hook.webhook_id);
    }
    const wrongKey = await origin.app.inject({ method: 'GET', url: '/api/v1/webhooks', headers: asKey('vip_wrong') });
    expect(wrongKey.statusCode).toBe(401);
    const removed = await origin.app.inject({
      method: 'DELETE',
      url: `/api/v1/webhooks/${hook.webhook_id}`,
      headers: asKey(platform.apiKey),
    });
    expect(removed.statusCode).toBe(200);
  });

  it('delivers license.granted to the requesting platform only, the token opened and signed; other platforms and admins get nothing', async () => {
    const { platform, hook } = await platformHook();
    const bystander = await platformHook();
    const admin = await loggedIn(origin, 'admin');
    const adminHook = await registered(admin.accessToken, ['license.requested', 'license.renewed']);
    const owner = await loggedIn(origin);
    const voiceId = await insertTestVoice(origin.database.db, owner.userId, { consentStatus: 'active' });
    const asked = await origin.app.inject({
      method: 'POST',
      url: `/api/v1/voices/${voiceId}/license-requests`,
      headers: asKey(platform.apiKey),
      payload: { platform_name: platform.name, scopes: ['podcast'], expires_at: new Date(Date.now() + 86_400_000).toISOString() },
    });
    expect(asked.statusCode, asked.body).toBe(201);
    const requestId = asked.json().request_id as string;
    const approved = await origin.app.inject({
      method: 'POST',
      url: `/api/v1/voices/${voiceId}/license-requests/${requestId}/approve`,
      headers: bearer(owner.accessToken),
      payload: {},
    });
    expect(approved.statusCode, approved.body).toBe(200);
    await deliverOnce(workerFor());

    const toPlatform = receiver.received.filter((each) => JSON.parse(each.body).event === 'license.granted');
    expect(toPlatform).toHaveLength(1);
    const delivered = toPlatform[0]!;
    // Verified as a receiver would, with the secret the platform was given at registration.
    const payload = new Webhook(hook.secret).verify(delivered.body, delivered.headers as Record<string, string>) as Record<string, unknown>;
    expect(payload).toEqual({
      event: 'license.granted',
      timestamp: expect.any(String),
      voice_id: voiceId,
      license_id: approved.json().license_id,
      request_id: requestId,
      scopes: ['podcast'],
      expires_at: expect.any(String),
      license_token: expect.stringMatching(new RegExp(`^${LICENSE_TOKEN_PREFIX}`)),
    });
    const [licence] = await origin.database.db.select().from(licenses).where(eq(licenses.id, approved.json().license_id));
    expect(licence!.tokenHash).toBe(await sha256Hex(payload.license_token as string));
    // The admin's endpoint got the owner's license.requested, never the platform's event or its token.
    const toAdmin = (await deliveriesTo(adminHook.webhook_id)).map((row) => row.eventType);
    expect(toAdmin).toEqual(['license.requested']);
    expect((await deliveriesTo(bystander.hook.webhook_id)).length).toBe(0);
    for (const each of receiver.received) {
      if (each !== delivered) expect(each.body).not.toContain(LICENSE_TOKEN_PREFIX);
    }
    // The platform's delivery history says the token went out, without the token.
    const history = await origin.app.inject({
      method: 'GET',
      url: `/api/v1/webhooks/${hook.webhook_id}/deliveries`,
      headers: asKey(platform.apiKey),
    });
    expect(webhookDeliveryListSchema.parse(history.json()).deliveries).toEqual([
      expect.objectContaining({ event: 'license.granted', status: 'delivered', message_id: delivered.headers['webhook-id'] }),
    ]);
    expect(history.body).not.toContain(LICENSE_TOKEN_PREFIX);
    expect(history.body).not.toContain(payload.license_token as string);
  });
});
