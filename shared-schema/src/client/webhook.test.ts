import { describe, expect, it } from 'vitest';
import { newWebhookSecret, webhookHeaders } from '../webhooks.js';
import { verifyWebhook, WebhookVerificationError } from './webhook.js';

const NOW = 1_780_000_000;
const delivery = JSON.stringify({
  event: 'enrollment.complete',
  voice_id: '6f1c2a9e-2b0e-4c37-9a51-3f7c1f0d8a11',
  timestamp: '2026-05-28T20:26:40.000Z',
  name: 'Narrator',
  model: 'vip-speaker-v1',
});

const failure = (promise: Promise<unknown>) =>
  promise.then(
    () => null,
    (error: unknown) => (error instanceof WebhookVerificationError ? error.reason : error),
  );

describe('verifyWebhook', () => {
  it('accepts a signed delivery and returns its id, timestamp and typed payload', async () => {
    const secret = newWebhookSecret();
    const headers = await webhookHeaders(secret, 'msg_1', NOW, delivery);
    const verified = await verifyWebhook(secret, new Headers(headers), delivery, { nowSeconds: NOW });
    expect(verified).toMatchObject({ id: 'msg_1', timestamp: NOW, payload: { event: 'enrollment.complete', name: 'Narrator' } });
  });

  it('reads Node-style header records, and Service-Event when webhook-signature is missing', async () => {
    const secret = newWebhookSecret();
    const { 'webhook-signature': _, ...headers } = await webhookHeaders(secret, 'msg_2', NOW, delivery);
    const upper = Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.replace(/^./, (c) => c.toUpperCase()), v]));
    expect((await verifyWebhook(secret, upper, new TextEncoder().encode(delivery), { nowSeconds: NOW })).id).toBe('msg_2');
  });

  it('accepts either of two signatures during a secret rotation', async () => {
    const [old, fresh] = [newWebhookSecret(), newWebhookSecret()];
    const headers = await webhookHeaders([fresh, old], 'msg_3', NOW, delivery);
    expect((await verifyWebhook(old, headers, delivery, { nowSeconds: NOW })).id).toBe('msg_3');
    expect((await verifyWebhook(fresh, headers, delivery, { nowSeconds: NOW })).id).toBe('msg_3');
  });

  it('refuses a changed body, another secret, a stale timestamp and missing headers', async () => {
    const secret = newWebhookSecret();
    const headers = await webhookHeaders(secret, 'msg_4', NOW, delivery);
    expect(await failure(verifyWebhook(secret, headers, delivery.replace('Narrator', 'Impostor'), { nowSeconds: NOW }))).toBe(
      'bad_signature',
    );
    expect(await failure(verifyWebhook(newWebhookSecret(), headers, delivery, { nowSeconds: NOW }))).toBe('bad_signature');
    expect(await failure(verifyWebhook(secret, headers, delivery, { nowSeconds: NOW + 301 }))).toBe('timestamp_out_of_tolerance');
    expect(await failure(verifyWebhook(secret, {}, delivery, { nowSeconds: NOW }))).toBe('missing_headers');
  });

  it('accepts the test delivery and refuses a signed body that is not a delivery', async () => {
    const secret = newWebhookSecret();
    const test = JSON.stringify({
      event: 'webhook.test',
      voice_id: null,
      timestamp: '2026-05-28T20:26:40.000Z',
      webhook_id: '0b7e4c52-1e9a-4f3c-8d2a-5c6b7a8e9f01',
    });
    const ok = await verifyWebhook(secret, await webhookHeaders(secret, 'msg_5', NOW, test), test, { nowSeconds: NOW });
    expect(ok.payload.event).toBe('webhook.test');
    const other = '{"hello":"world"}';
    expect(await failure(verifyWebhook(secret, await webhookHeaders(secret, 'msg_6', NOW, other), other, { nowSeconds: NOW }))).toBe(
      'invalid_payload',
    );
  });
});
