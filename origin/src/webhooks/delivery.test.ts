import { pathOf, WEBHOOK_HEADERS, webhookDeliverySchema } from '@vip/shared-schema';
import { enableWebhookRoute, testWebhookRoute, webhookDeliveryListSchema } from '@vip/shared-schema/routes/origin/webhooks';
import { eq } from 'drizzle-orm';
import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { webhookEndpoints } from '../db/schema.js';
import { BackgroundLoop } from '../loops/background-loop.js';
import { bearer, loggedIn } from '../testing/origin.js';
import { deliveriesTo, deliverOnce, emit, history, origin, receiver, registered, workerFor } from '../testing/webhooks.js';

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

  it("gives up after the last scheduled attempt and moves on to the voice's next event", async () => {
    const owner = await loggedIn(origin);
    const hook = await registered(owner.accessToken);
    const voiceId = crypto.randomUUID();
    await emit('voice.deleted', owner.userId, voiceId);
    origin.runtime.advance(10);
    await emit('voice.deleted', owner.userId, voiceId);
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

  it("keeps one voice's state events in order: its next event waits while one is retried, other voices' go on", async () => {
    const owner = await loggedIn(origin);
    await registered(owner.accessToken, ['license.renewed']);
    const [first, second] = [crypto.randomUUID(), crypto.randomUUID()];
    for (const voiceId of [first, first, second]) {
      await emit('license.renewed', owner.userId, voiceId);
      origin.runtime.advance(10);
    }
    // The first voice's first event is refused once, whenever it arrives among the others.
    let refusals = 1;
    receiver.answer = (body) => (JSON.parse(body).voice_id === first && refusals-- > 0 ? { status: 500 } : undefined);
    const worker = workerFor();
    await deliverOnce(worker);
    await deliverOnce(worker);
    const sent = () => receiver.received.map((request) => JSON.parse(request.body).voice_id);
    expect(sent().sort()).toEqual([first, second].sort());
    origin.runtime.advance(1_500);
    await deliverOnce(worker);
    await deliverOnce(worker);
    expect(sent().slice(2)).toEqual([first, first]);
  });

  it("still delivers other voices' events at once while one event's deliveries keep failing", async () => {
    const owner = await loggedIn(origin);
    const hook = await registered(owner.accessToken, ['license.renewed', 'pre_synthesis.blocked']);
    const failing = crypto.randomUUID();
    await emit('license.renewed', owner.userId, failing);
    receiver.answer = (body) => (JSON.parse(body).voice_id === failing ? { status: 503 } : undefined);
    const worker = workerFor();
    await deliverOnce(worker);
    // Events of other voices, state changes and reports alike, arrive while the first is being retried.
    const others = [crypto.randomUUID(), crypto.randomUUID(), crypto.randomUUID()];
    origin.runtime.advance(10);
    await emit('license.renewed', owner.userId, others[0]);
    await emit('pre_synthesis.blocked', owner.userId, others[1]);
    await emit('pre_synthesis.blocked', owner.userId, others[2]);
    await deliverOnce(worker);
    const delivered = (await deliveriesTo(hook.webhook_id)).filter((row) => row.status === 'delivered');
    expect(delivered.map((row) => JSON.parse(row.body).voice_id).sort()).toEqual([...others].sort());
    const [retrying] = (await deliveriesTo(hook.webhook_id)).filter((row) => row.status === 'pending');
    expect(retrying).toMatchObject({ attempts: 1, lastStatusCode: 503 });
  });

  it("sends up to the endpoint's concurrency at once, never more, and one voice's state events one at a time", async () => {
    const owner = await loggedIn(origin);
    await registered(owner.accessToken, ['license.renewed', 'pre_synthesis.blocked']);
    const ordered = crypto.randomUUID();
    for (let i = 0; i < 10; i++) {
      await emit('pre_synthesis.blocked', owner.userId);
      await emit('license.renewed', owner.userId, ordered);
      origin.runtime.advance(10);
    }
    // Answers wait until a fifth request is open (never, if the bound holds) or 500 ms passed.
    receiver.gather = 5;
    const worker = workerFor({ concurrencyPerEndpoint: 4 });
    await worker.fanOut();
    const renewals = async () =>
      (
        await deliveriesTo(
          (
            await origin.database.db.select().from(webhookEndpoints).where(eq(webhookEndpoints.ownerId, owner.userId))
          )[0]!.id,
        )
      )
        .filter((row) => row.eventType === 'license.renewed')
        .sort((a, b) => a.occurredAt.getTime() - b.occurredAt.getTime());
    let leasedAtOnce = 0;
    while (receiver.received.length < 20) {
      const pass = worker.deliverDue();
      leasedAtOnce = Math.max(leasedAtOnce, (await renewals()).filter((row) => row.leasedUntil !== null).length);
      await pass;
    }
    expect(receiver.maxInFlight).toBe(4);
    expect(leasedAtOnce).toBeLessThanOrEqual(1);
    const arrived = receiver.received.filter((request) => JSON.parse(request.body).event === 'license.renewed');
    const messageIds = (await renewals()).map((row) => row.messageId);
    expect(arrived.map((request) => request.headers['webhook-id'])).toEqual(messageIds);
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
    // One voice's: the second waits for the first, so it is still queued when the 410 comes.
    const voiceId = crypto.randomUUID();
    await emit('voice.deleted', owner.userId, voiceId);
    origin.runtime.advance(10);
    await emit('voice.deleted', owner.userId, voiceId);
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
    const url = pathOf(enableWebhookRoute, { webhook_id: hook.webhook_id });
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
  it('records a failed test delivery with the reason', async () => {
    const owner = await loggedIn(origin);
    const hook = await registered(owner.accessToken);
    receiver.script = [{ status: 500 }];
    await origin.app.inject({
      method: 'POST',
      url: pathOf(testWebhookRoute, { webhook_id: hook.webhook_id }),
      headers: bearer(owner.accessToken),
    });
    const [test] = webhookDeliveryListSchema.parse((await history(owner.accessToken, hook.webhook_id)).json()).deliveries;
    expect(test).toMatchObject({ event: 'webhook.test', status: 'failed', attempts: 1, last_status_code: 500, last_error: 'HTTP 500' });
  });
});
