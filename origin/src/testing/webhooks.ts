import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { WebhookEvent } from '@vip/shared-schema';
import { pathOf } from '@vip/shared-schema';
import { listWebhookDeliveriesRoute, registeredWebhookSchema, registerWebhookRoute } from '@vip/shared-schema/routes/origin/webhooks';
import { eq } from 'drizzle-orm';
import { afterAll, afterEach, beforeAll, expect } from 'vitest';
import { webhookDeliveries } from '../db/schema.js';
import { type NewEvent, recordEvent } from '../events/store.js';
import type { Resolver } from '../webhooks/address-guard.js';
import { SecretEncryption } from '../webhooks/secret-encryption.js';
import { type WebhookSettings, webhookSettings } from '../webhooks/service.js';
import { WebhookWorker } from '../webhooks/worker.js';
import { bearer, startTestOrigin, type TestOrigin } from './origin.js';

interface Received {
  headers: IncomingHttpHeaders;
  body: string;
}

type Answer = { status: number; headers?: Record<string, string> };

/**
 * A receiver on 127.0.0.1 that answers from a script (then 200) and keeps every request. `answer`,
 * when set, decides first (by the body, whatever order concurrent requests arrive in). With
 * `gather` set it holds each answer until that many requests are open at once (then answers them
 * all) or `holdMs` passed: `maxInFlight`, the most it held at once, then counts what the sender had
 * under way together, however slowly a loaded machine sends them.
 */
class Receiver {
  readonly received: Received[] = [];
  script: Answer[] = [];
  answer: ((body: string) => Answer | undefined) | null = null;
  gather = 0;
  holdMs = 500;
  maxInFlight = 0;
  private readonly held = new Set<() => void>();
  private server: Server | null = null;
  port = 0;

  reset(): void {
    this.received.length = 0;
    this.script = [];
    this.answer = null;
    this.gather = 0;
    this.holdMs = 500;
    this.maxInFlight = 0;
  }

  async start(): Promise<void> {
    this.server = createServer((request, response) => {
      let body = '';
      request.on('data', (chunk) => {
        body += chunk;
      });
      request.on('end', () => {
        this.received.push({ headers: request.headers, body });
        const next = this.answer?.(body) ?? this.script.shift() ?? { status: 200 };
        const release = () => {
          if (!this.held.delete(release)) return;
          clearTimeout(timer);
          response.writeHead(next.status, next.headers).end();
        };
        this.held.add(release);
        this.maxInFlight = Math.max(this.maxInFlight, this.held.size);
        const timer = setTimeout(release, this.gather > 0 ? this.holdMs : 0);
        if (this.held.size >= this.gather) for (const each of [...this.held]) each();
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
export const dns = new Map<string, string[]>();
const fakeResolver: Resolver = async (hostname) => {
  const addresses = dns.get(hostname);
  if (!addresses) throw new Error('ENOTFOUND');
  return addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
};

export const firstKey = { id: 'first', key: Buffer.alloc(32, 1) };
export const secondKey = { id: 'second', key: Buffer.alloc(32, 2) };
export const settings: WebhookSettings = webhookSettings({
  allowLoopback: true,
  gateVariant: 'A',
  resolve: fakeResolver,
  secretEncryption: new SecretEncryption([firstKey]),
});

/**
 * The webhook tests' origin and receiver, one each per test file: importing this module starts them
 * (beforeAll), empties the receiver and cancels what is left to retry after each test, and closes
 * them (afterAll). The tests are split by subject, as webhooks/webhooks.test.ts (what works),
 * delivery.test.ts (retries, order, concurrency, receivers or workers that fail) and
 * access-and-secrets.test.ts (who may, where deliveries may go, secrets and tokens).
 */
export let origin: TestOrigin;
export let receiver: Receiver;
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
  receiver.reset();
  // Each test starts with nothing left to retry from the one before.
  await origin.database.db.update(webhookDeliveries).set({ status: 'cancelled' }).where(eq(webhookDeliveries.status, 'pending'));
});

export const workerFor = (overrides: Partial<ConstructorParameters<typeof WebhookWorker>[0]> = {}) =>
  new WebhookWorker({
    db: origin.database.db,
    clock: origin.runtime.clock,
    log: origin.app.log,
    sender: settings.sender,
    retrySchedule: [0, 1, 1, 2],
    concurrencyPerEndpoint: 4,
    jitter: 0,
    ...overrides,
  });

export async function register(token: string, body: { url: string; events: WebhookEvent[]; secret?: string }) {
  return origin.app.inject({ method: 'POST', url: pathOf(registerWebhookRoute), headers: bearer(token), payload: body });
}

export async function registered(token: string, events: WebhookEvent[] = ['voice.deleted'], url = receiver.url()) {
  const response = await register(token, { url, events });
  expect(response.statusCode).toBe(201);
  return registeredWebhookSchema.parse(response.json());
}

/** An owner's event of `type` for the delivery tests, which exercise fan-out and delivery: its fields are left empty. */
export const emit = (type: WebhookEvent, ownerId: string, voiceId = crypto.randomUUID()) =>
  recordEvent(origin.database.db, { type, voiceId, ownerId, fields: {} } as NewEvent, origin.runtime.clock.now());

/** Runs fan-out and one delivery pass, as one worker round does. */
export async function deliverOnce(worker: WebhookWorker) {
  await worker.fanOut();
  return worker.deliverDue();
}

export const deliveriesTo = (webhookId: string) =>
  origin.database.db.select().from(webhookDeliveries).where(eq(webhookDeliveries.endpointId, webhookId));

/** An endpoint's delivery history, as its owner (or anyone holding `token`) asks for it. */
export const history = (token: string, webhookId: string, query = '') =>
  origin.app.inject({
    method: 'GET',
    url: `${pathOf(listWebhookDeliveriesRoute, { webhook_id: webhookId })}${query}`,
    headers: bearer(token),
  });
