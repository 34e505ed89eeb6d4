import { pathOf } from '@vip/shared-schema';
import {
  deleteWebhookRoute,
  listWebhooksRoute,
  registeredWebhookSchema,
  rotatedWebhookSecretSchema,
  rotateWebhookSecretRoute,
  testWebhookRoute,
  webhookDeliveryListSchema,
  webhookListSchema,
  webhookTestResultSchema,
} from '@vip/shared-schema/routes/origin/webhooks';
import { eq } from 'drizzle-orm';
import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { webhookEndpoints } from '../db/schema.js';
import { BackgroundLoop } from '../loops/background-loop.js';
import { bearer, loggedIn } from '../testing/origin.js';
import { deliverOnce, dns, emit, history, origin, receiver, register, registered, workerFor } from '../testing/webhooks.js';

describe('POST /webhooks/register', () => {
  it('registers an endpoint, generates a whsec_ secret, and lists it without the secret', async () => {
    const owner = await loggedIn(origin);
    const hook = await registered(owner.accessToken, ['enrollment.complete', 'voice.deleted']);
    expect(hook.secret).toMatch(/^whsec_[A-Za-z0-9+/]{32}$/);
    expect(hook.events).toEqual(['enrollment.complete', 'voice.deleted']);

    const listed = await origin.app.inject({ method: 'GET', url: pathOf(listWebhooksRoute), headers: bearer(owner.accessToken) });
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

  it('accepts a public host name', async () => {
    dns.set('public.example', ['93.184.216.34']);
    const owner = await loggedIn(origin);
    const response = await register(owner.accessToken, { url: 'https://public.example/hook', events: ['voice.deleted'] });
    expect(response.statusCode).toBe(201);
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
});

describe('managing endpoints', () => {
  it('deletes an endpoint; another owner gets 404', async () => {
    const owner = await loggedIn(origin);
    const stranger = await loggedIn(origin);
    const hook = await registered(owner.accessToken);
    const url = pathOf(deleteWebhookRoute, { webhook_id: hook.webhook_id });
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
      url: pathOf(testWebhookRoute, { webhook_id: hook.webhook_id }),
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
      url: pathOf(rotateWebhookSecretRoute, { webhook_id: hook.webhook_id }),
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

describe('GET /webhooks/{id}/deliveries', () => {
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
        await origin.app.inject({
          method: 'POST',
          url: pathOf(testWebhookRoute, { webhook_id: hook.webhook_id }),
          headers: bearer(owner.accessToken),
        })
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
});

describe('several origin processes on one database', () => {
  it("share the endpoint's concurrency: every event delivered once, never more in flight than the bound, one voice's state events in order", async () => {
    const owner = await loggedIn(origin);
    await registered(owner.accessToken, ['license.renewed', 'pre_synthesis.blocked']);
    const voices = [crypto.randomUUID(), crypto.randomUUID()];
    for (let i = 0; i < 6; i++) {
      for (const voiceId of voices) await emit('license.renewed', owner.userId, voiceId);
      await emit('pre_synthesis.blocked', owner.userId);
      await emit('pre_synthesis.blocked', owner.userId);
      origin.runtime.advance(5);
    }
    // Answers wait until a fourth request is open (never, if the bound holds) or 500 ms passed.
    receiver.gather = 4;
    // Three workers, as three replicas run them, each with its own loop; each lets at most 3 through.
    const loops = Array.from({ length: 3 }, () => {
      const worker = workerFor({ concurrencyPerEndpoint: 3 });
      return new BackgroundLoop({ name: 'webhooks', round: () => worker.round(), idleMs: 20, log: origin.app.log });
    });
    for (const loop of loops) loop.start();
    try {
      await expect.poll(() => receiver.received.length, { timeout: 60_000, interval: 50 }).toBe(24);
      await new Promise((resolve) => setTimeout(resolve, 200));
    } finally {
      await Promise.all(loops.map((loop) => loop.stop()));
    }
    const bodies = receiver.received.map((request) => JSON.parse(request.body) as { event: string; voice_id: string; timestamp: string });
    expect(receiver.received).toHaveLength(24);
    expect(new Set(receiver.received.map((request) => request.headers['webhook-id'])).size).toBe(24);
    expect(receiver.maxInFlight).toBeLessThanOrEqual(3);
    expect(receiver.maxInFlight).toBeGreaterThan(1);
    for (const voiceId of voices) {
      const times = bodies.filter((body) => body.voice_id === voiceId).map((body) => body.timestamp);
      expect(times).toHaveLength(6);
      expect(times).toEqual([...times].sort());
    }
  }, 90_000);
});
