import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { newWebhookSecret, WEBHOOK_HEADERS, webhookHeaders } from './webhooks.js';

describe('webhook signatures', () => {
  it('verify with the independent standardwebhooks implementation', async () => {
    const secret = newWebhookSecret();
    const body = JSON.stringify({ event: 'voice.deleted', voice_id: null, timestamp: new Date().toISOString() });
    const now = Math.floor(Date.now() / 1000);
    const headers = await webhookHeaders(secret, 'msg_1', now, body);
    expect(new Webhook(secret).verify(body, headers)).toEqual(JSON.parse(body));
    expect(headers[WEBHOOK_HEADERS.serviceEvent]).toBe(headers[WEBHOOK_HEADERS.signature]);
  });

  it('do not verify once the body is changed', async () => {
    const secret = newWebhookSecret();
    const now = Math.floor(Date.now() / 1000);
    const headers = await webhookHeaders(secret, 'msg_2', now, '{"a":1}');
    expect(() => new Webhook(secret).verify('{"a":2}', headers)).toThrow();
  });
});
