import { LICENSE_TOKEN_PREFIX, PLATFORM_WEBHOOK_EVENTS, pathOf, sha256Hex, type WebhookEvent } from '@vip/shared-schema';
import { approveLicenseRequestRoute, requestLicenseRoute } from '@vip/shared-schema/routes/origin/license-requests';
import {
  deleteWebhookRoute,
  listWebhookDeliveriesRoute,
  listWebhooksRoute,
  registeredWebhookSchema,
  registerWebhookRoute,
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
import { licenses, webhookEndpoints } from '../db/schema.js';
import { recordEvent } from '../events/store.js';
import { bearer, loggedIn, startTestOrigin, type TestOrigin } from '../testing/origin.js';
import { platformKey } from '../testing/platforms.js';
import { insertTestVoice } from '../testing/voices.js';
import {
  deliveriesTo,
  deliverOnce,
  dns,
  emit,
  firstKey,
  history,
  origin,
  receiver,
  register,
  registered,
  secondKey,
  settings,
  workerFor,
} from '../testing/webhooks.js';
import { SecretEncryption } from './secret-encryption.js';
import { WebhookService } from './service.js';
import { WebhookWorker } from './worker.js';

describe('POST /webhooks/register', () => {
  it('needs a Bearer token', async () => {
    const response = await origin.app.inject({
      method: 'POST',
      url: pathOf(registerWebhookRoute),
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
        url: pathOf(registerWebhookRoute),
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
});

describe('delivery', () => {
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
});

describe('GET /webhooks/{id}/deliveries', () => {
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
    const anonymous = await origin.app.inject({ method: 'GET', url: pathOf(listWebhookDeliveriesRoute, { webhook_id: hook.webhook_id }) });
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
      url: pathOf(rotateWebhookSecretRoute, { webhook_id: generated.webhook_id }),
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
        url: pathOf(registerWebhookRoute),
        headers: bearer(owner.accessToken),
        payload: { url: receiver.url(), events: ['voice.deleted'] },
      });
      const hook = registeredWebhookSchema.parse(response.json());
      // The operator puts a new key first; the old one stays in the list to decrypt.
      const rotatedSender = { ...settings.sender, secretEncryption: new SecretEncryption([secondKey, firstKey]) };
      const deliver = async () => {
        const erased = { embeddings: 1, licenses: 0, consents: 1, edge_index: true };
        const event = { type: 'voice.deleted' as const, voiceId: crypto.randomUUID(), ownerId: owner.userId, fields: { erased } };
        await recordEvent(own.database.db, event, own.runtime.clock.now());
        const worker = new WebhookWorker({
          db: own.database.db,
          clock: own.runtime.clock,
          log: own.app.log,
          sender: rotatedSender,
          retrySchedule: [0],
          concurrencyPerEndpoint: 4,
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
      url: pathOf(testWebhookRoute, { webhook_id: target.webhook_id }),
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
      url: pathOf(registerWebhookRoute),
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

    const listed = await origin.app.inject({ method: 'GET', url: pathOf(listWebhooksRoute), headers: asKey(platform.apiKey) });
    expect(webhookListSchema.parse(listed.json()).webhooks.map((each) => each.webhook_id)).toEqual([hook.webhook_id]);
    const other = await platformKey(origin, 'Hooked');
    const admin = await loggedIn(origin, 'admin');
    const owner = await loggedIn(origin);
    for (const headers of [asKey(other.apiKey), bearer(admin.accessToken), bearer(owner.accessToken)]) {
      const removed = await origin.app.inject({
        method: 'DELETE',
        url: pathOf(deleteWebhookRoute, { webhook_id: hook.webhook_id }),
        headers,
      });
      expect(removed.statusCode).toBe(404);
      const list = await origin.app.inject({ method: 'GET', url: pathOf(listWebhooksRoute), headers });
      expect(list.body).not.toContain(hook.webhook_id);
    }
    const wrongKey = await origin.app.inject({ method: 'GET', url: pathOf(listWebhooksRoute), headers: asKey('vip_wrong') });
    expect(wrongKey.statusCode).toBe(401);
    const removed = await origin.app.inject({
      method: 'DELETE',
      url: pathOf(deleteWebhookRoute, { webhook_id: hook.webhook_id }),
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
      url: pathOf(requestLicenseRoute, { voice_id: voiceId }),
      headers: asKey(platform.apiKey),
      payload: {
        platform_name: platform.name,
        scopes: ['podcast'],
        description: 'Narration of audiobook chapters for the tests',
        expires_at: new Date(Date.now() + 86_400_000).toISOString(),
      },
    });
    expect(asked.statusCode, asked.body).toBe(201);
    const requestId = asked.json().request_id as string;
    const approved = await origin.app.inject({
      method: 'POST',
      url: pathOf(approveLicenseRequestRoute, { voice_id: voiceId, request_id: requestId }),
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
      // The terms the platform asked for and the owner approved, and their hash.
      description: 'Narration of audiobook chapters for the tests',
      description_source: 'stated',
      represented_by: 'none',
      compensation: null,
      license_terms_sha256: expect.stringMatching(/^[0-9a-f]{64}$/),
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
      url: pathOf(listWebhookDeliveriesRoute, { webhook_id: hook.webhook_id }),
      headers: asKey(platform.apiKey),
    });
    expect(webhookDeliveryListSchema.parse(history.json()).deliveries).toEqual([
      expect.objectContaining({ event: 'license.granted', status: 'delivered', message_id: delivered.headers['webhook-id'] }),
    ]);
    expect(history.body).not.toContain(LICENSE_TOKEN_PREFIX);
    expect(history.body).not.toContain(payload.license_token as string);
  });
});
