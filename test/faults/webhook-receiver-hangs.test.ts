import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, json, post, type RunningPlanes, startPlanes } from '../support/service.js';
import { WEBHOOK_RECEIVER_HANGS } from './catalogue.js';
import { adminFor, createLicense, enrollVoice, type Registry, setUpRegistry } from './fixtures.js';

const {
  hungAttempts: HUNG_ATTEMPTS,
  timeoutSeconds: TIMEOUT_SECONDS,
  retrySchedule: RETRY_SCHEDULE,
  promptMs: PROMPT_MS,
} = WEBHOOK_RECEIVER_HANGS;

const admin = adminFor('webhook-hangs');

interface Received {
  webhookId: string;
  body: string;
  receivedAt: number;
  answered: boolean;
  closedAt: number | null;
  verified: boolean;
}

/** A local receiver; `hang` makes it read the request and never answer. */
async function receiver(secret: string) {
  const received: Received[] = [];
  const state = { hang: false };
  const hooks = new Webhook(secret);
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString();
      let verified = true;
      try {
        hooks.verify(body, req.headers as Record<string, string>);
      } catch {
        verified = false;
      }
      const entry: Received = {
        webhookId: String(req.headers['webhook-id']),
        body,
        receivedAt: Date.now(),
        answered: !state.hang,
        closedAt: null,
        verified,
      };
      received.push(entry);
      res.on('close', () => {
        entry.closedAt = Date.now();
      });
      if (!state.hang) res.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`,
    received,
    state,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

describe('a webhook receiver that never answers', () => {
  let service: RunningPlanes;
  /** Set by the test's last line: a failed run keeps its data folder (and planes.log) to read. */
  let passed = false;
  let registry: Registry;
  let voiceId: string;
  let licenseId: string;
  const hungSecret = `whsec_${randomBytes(32).toString('base64')}`;
  const healthySecret = `whsec_${randomBytes(32).toString('base64')}`;
  let hung: Awaited<ReturnType<typeof receiver>>;
  let healthy: Awaited<ReturnType<typeof receiver>>;

  beforeAll(async () => {
    [hung, healthy] = await Promise.all([receiver(hungSecret), receiver(healthySecret)]);
    service = await startPlanes({
      env: {
        ADMIN_EMAIL: admin.email,
        ADMIN_PASSWORD: admin.password,
        WEBHOOK_ALLOW_LOOPBACK: 'true',
        WEBHOOK_RETRY_SCHEDULE: RETRY_SCHEDULE,
        WEBHOOK_TIMEOUT_SECONDS: String(TIMEOUT_SECONDS),
      },
    });
    registry = await setUpRegistry(service.originUrl, service.edgeUrl, admin);
    voiceId = await enrollVoice(registry, 'Webhook Hang Voice');
    const licence = await createLicense(registry, voiceId);
    expect(licence.status).toBe(201);
    licenseId = (await json(licence)).license_id as string;
    for (const [endpoint, secret] of [
      [hung, hungSecret],
      [healthy, healthySecret],
    ] as const) {
      const registered = await post(
        `${service.originUrl}/api/v1/webhooks/register`,
        { url: endpoint.url, secret, events: ['license.renewed'] },
        { authorization: `Bearer ${registry.ownerToken}` },
      );
      expect(registered.status).toBe(201);
    }
  }, 120_000);

  afterAll(async () => {
    await service?.stop({ removeData: passed });
    await Promise.all([hung?.close(), healthy?.close()]);
  });

  /** Renews the licence to a distinct expiry: one `license.renewed` event; resolves with its body's expiry and commit time. */
  let renewals = 0;
  const renew = async () => {
    renewals++;
    const expiresAt = new Date(Date.now() + (40 + renewals) * 86_400_000).toISOString();
    const response = await post(
      `${service.originUrl}/api/v1/voices/${voiceId}/licenses/${licenseId}/renew`,
      { expires_at: expiresAt },
      { authorization: `Bearer ${registry.ownerToken}` },
    );
    expect(response.status).toBe(200);
    return { expiresAt: (await json(response)).expires_at as string, committedAt: Date.now() };
  };
  const about = (expiresAt: string) => (entry: Received) => (JSON.parse(entry.body) as { expires_at?: string }).expires_at === expiresAt;
  const healthyDelays: number[] = [];
  const healthyDelay = async (event: { expiresAt: string; committedAt: number }) => {
    await eventually(async () => healthy.received.some(about(event.expiresAt)), 15_000);
    healthyDelays.push(healthy.received.find(about(event.expiresAt))!.receivedAt - event.committedAt);
    return healthyDelays.at(-1)!;
  };

  it('times out and retries the hung endpoint, keeps the other prompt, then delivers each event exactly once with a stable webhook-id', async () => {
    hung.state.hang = true;
    const events = [await renew()];
    expect(await healthyDelay(events[0]!)).toBeLessThan(PROMPT_MS);
    await eventually(async () => hung.received.length === 1, 10_000);

    // While the first attempt hangs, new events still reach the healthy endpoint promptly.
    events.push(await renew());
    expect(await healthyDelay(events[1]!)).toBeLessThan(PROMPT_MS);

    await eventually(async () => hung.received.length === HUNG_ATTEMPTS, (TIMEOUT_SECONDS + 5) * 1000);
    events.push(await renew());
    expect(await healthyDelay(events[2]!)).toBeLessThan(PROMPT_MS);
    hung.state.hang = false;

    // The receiver answers again: every event arrives, oldest first, and nothing is sent again after its 200.
    await eventually(
      async () => events.every((event) => hung.received.some((entry) => entry.answered && about(event.expiresAt)(entry))),
      (TIMEOUT_SECONDS + 10) * 1000,
    );
    await new Promise((r) => setTimeout(r, 3_000));

    const firstEvent = hung.received.filter(about(events[0]!.expiresAt));
    expect(firstEvent.length).toBeGreaterThanOrEqual(HUNG_ATTEMPTS + 1);
    expect(new Set(firstEvent.map((entry) => entry.webhookId)).size, 'one webhook-id on every attempt').toBe(1);
    for (const attempt of firstEvent.filter((entry) => !entry.answered)) {
      // The sender gave up on the hung attempt at its timeout, not earlier and not never.
      expect(attempt.closedAt).not.toBeNull();
      expect(attempt.closedAt! - attempt.receivedAt).toBeGreaterThanOrEqual(TIMEOUT_SECONDS * 1000 - 500);
      expect(attempt.closedAt! - attempt.receivedAt).toBeLessThan(TIMEOUT_SECONDS * 1000 + 3_000);
    }

    const lost: string[] = [];
    for (const [endpoint, name] of [
      [hung, 'hung'],
      [healthy, 'healthy'],
    ] as const) {
      for (const event of events) {
        const deliveries = endpoint.received.filter((entry) => entry.answered && about(event.expiresAt)(entry));
        if (deliveries.length !== 1) lost.push(`${name}: ${event.expiresAt} answered ${deliveries.length} times`);
      }
      expect(endpoint.received.every((entry) => entry.verified)).toBe(true);
      expect(new Set(endpoint.received.map((entry) => entry.webhookId)).size).toBe(events.length);
    }
    expect(lost, 'events not delivered exactly once').toEqual([]);

    const firstDelivered = events.map((event) => hung.received.findIndex((entry) => entry.answered && about(event.expiresAt)(entry)));
    expect(firstDelivered).toEqual([...firstDelivered].sort((a, b) => a - b));
    console.log(
      `[faults] webhooks: healthy endpoint got each event after ${healthyDelays.join(', ')} ms; hung endpoint: ${hung.received.length} requests, ${firstEvent.length} attempts of the first event`,
    );
    passed = true;
  });
});
