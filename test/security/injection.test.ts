import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json, post } from '../support/service.js';
import { type Actor, expectProblem, GATE_PATH, type Platform, Security, SPEAKERS } from './support.js';

/**
 * Threat: injection (OWASP API8): SQL metacharacters, unicode, NUL bytes and markup in every string
 * field, and CR/LF aimed at response headers. Each input must be refused (4xx problem+json) or stored
 * and returned unchanged; afterwards the database is intact and no response header was split.
 */

const PAYLOADS: string[] = [
  "' OR 1=1 --",
  "'; DROP TABLE voices; --",
  '" OR ""="',
  "1'; SELECT pg_sleep(10); --",
  "admin'--",
  "') UNION SELECT email, password_hash FROM users --",
  '$1',
  '%s%s%s%n',
  'Ω≈ç√ 名前 🎙️ \u202Eevil',
  'a\u0000b',
  '\u0000',
  'line\r\nX-Injected: yes',
  '%0d%0aX-Injected:%20yes',
  '<script>alert(1)</script>',
  '../../../../etc/passwd',
  '{"$gt": ""}',
];

/** Accepted or refused, but never a 5xx and never anything else than problem+json when refused. */
async function refusedOrStored(response: Response, label: string): Promise<Record<string, unknown> | null> {
  if (response.status < 300) return json(response);
  try {
    await expectProblem(response, [400, 401, 403, 404, 409, 413, 415, 422, 429]);
  } catch (error) {
    throw new Error(`${label}: ${(error as Error).message}`);
  }
  return null;
}

/** Header names and values must hold no CR or LF, and no header may have been injected. */
function expectUnsplit(response: Response, label: string) {
  for (const [name, value] of response.headers) {
    expect(/[\r\n]/.test(value), `${label}: header ${name} carries CR/LF`).toBe(false);
    expect(name.toLowerCase(), label).not.toBe('x-injected');
  }
}

describe('injection: SQL, unicode, NUL and CR/LF in every string field', () => {
  let s: Security;
  let owner: Actor;
  let platform: Platform;
  let voiceId: string;
  let tried = 0;

  beforeAll(async () => {
    // Every payload in a registration field that passes validation is a new account, all from this
    // one address within the minute: far more than the default REGISTRATIONS_PER_MINUTE.
    s = await Security.start('inject', { REGISTRATIONS_PER_MINUTE: '1000' });
    owner = await s.owner('inject-owner');
    platform = await s.platform('Inject Platform');
    voiceId = await s.enroll(owner, 'Inject Voice');
    await s.setSynthesisConsent(owner, voiceId, 'active');
    await s.keyLive(platform.apiKey, platform.name);
  }, 240_000);

  afterAll(async () => {
    await s?.stop();
  });

  /** Every JSON string field a caller controls, as a request built around one payload. */
  const fields: {
    field: string;
    send: (payload: string) => Promise<Response>;
    roundTrip?: (payload: string, answer: Record<string, unknown>) => Promise<void>;
  }[] = [
    { field: 'register.email', send: (p) => post(`${s.origin}/api/v1/auth/register`, { email: p, password: 'long-enough-password' }) },
    {
      field: 'register.email (local part)',
      send: (p) => post(`${s.origin}/api/v1/auth/register`, { email: `${p}@owners.example`, password: 'long-enough-password' }),
    },
    {
      field: 'register.password',
      send: (p) => post(`${s.origin}/api/v1/auth/register`, { email: `pw-${tried}@inject.example`, password: `${p}-padding-to-twelve` }),
      roundTrip: async (p) => {
        // The stored password is the one sent: logging in with it works, with a trimmed one does not.
        const login = await post(`${s.origin}/api/v1/auth/login`, {
          email: `pw-${tried}@inject.example`,
          password: `${p}-padding-to-twelve`,
        });
        expect(login.status).toBe(200);
      },
    },
    { field: 'login.email', send: (p) => post(`${s.origin}/api/v1/auth/login`, { email: p, password: 'whatever-password' }) },
    { field: 'login.password', send: (p) => post(`${s.origin}/api/v1/auth/login`, { email: owner.email, password: p }) },
    { field: 'refresh.refresh_token', send: (p) => post(`${s.origin}/api/v1/auth/refresh`, { refresh_token: p }) },
    {
      field: 'platforms.name',
      send: (p) => post(`${s.origin}/api/v1/platforms`, { name: `${p} #${tried}` }, s.admin.auth),
      roundTrip: async (p) => {
        const list = await json(await fetch(`${s.origin}/api/v1/platforms`, { headers: s.admin.auth }));
        expect((list.platforms as { name: string }[]).map((x) => x.name)).toContain(`${p} #${tried}`);
      },
    },
    {
      field: 'consents.statement_version',
      send: (p) => post(`${s.origin}/api/v1/consents`, { type: 'biometric', statement_version: p, accepted: true }, owner.auth),
      roundTrip: async (p, answer) => expect(answer.statement_version).toBe(p),
    },
    {
      field: 'consents.type',
      send: (p) => post(`${s.origin}/api/v1/consents`, { type: p, statement_version: '1', accepted: true }, owner.auth),
    },
    {
      field: 'voice consent.status',
      send: (p) => s.send('consent', 'PUT', `${s.origin}/api/v1/voices/${voiceId}/consent`, { status: p }, owner.auth),
    },
    {
      field: 'licences.platform_name',
      send: (p) =>
        post(
          `${s.origin}/api/v1/voices/${voiceId}/licenses`,
          {
            platform_name: p,
            scopes: ['audiobook'],
            description: 'Narration of audiobook chapters for the tests',
            expires_at: new Date(Date.now() + 86_400_000).toISOString(),
          },
          owner.auth,
        ),
    },
    {
      field: 'licences.scopes[]',
      send: (p) =>
        post(
          `${s.origin}/api/v1/voices/${voiceId}/licenses`,
          {
            platform_name: platform.name,
            scopes: [p],
            description: 'Narration of audiobook chapters for the tests',
            expires_at: new Date(Date.now() + 86_400_000).toISOString(),
          },
          owner.auth,
        ),
    },
    {
      field: 'licences.expires_at',
      send: (p) =>
        post(
          `${s.origin}/api/v1/voices/${voiceId}/licenses`,
          {
            platform_name: platform.name,
            scopes: ['audiobook'],
            description: 'Narration of audiobook chapters for the tests',
            expires_at: p,
          },
          owner.auth,
        ),
    },
    {
      field: 'webhooks.url',
      send: (p) =>
        post(`${s.origin}/api/v1/webhooks/register`, { url: `https://93.184.215.14/${p}`, events: ['voice.deleted'] }, owner.auth),
    },
    {
      field: 'webhooks.url (host)',
      send: (p) => post(`${s.origin}/api/v1/webhooks/register`, { url: `https://${p}/hook`, events: ['voice.deleted'] }, owner.auth),
    },
    {
      field: 'webhooks.secret',
      send: (p) =>
        post(
          `${s.origin}/api/v1/webhooks/register`,
          { url: 'https://93.184.215.14/hook', secret: `whsec_${p}`, events: ['voice.deleted'] },
          owner.auth,
        ),
    },
    {
      field: 'webhooks.events[]',
      send: (p) => post(`${s.origin}/api/v1/webhooks/register`, { url: 'https://93.184.215.14/hook', events: [p] }, owner.auth),
    },
    {
      field: 'gate.voice_id',
      send: (p) =>
        post(
          `${s.edge}${GATE_PATH}`,
          { voice_id: p, platform_name: platform.name, intended_use: 'audiobook' },
          { 'x-api-key': platform.apiKey },
        ),
    },
    {
      field: 'gate.platform_name',
      send: (p) =>
        post(`${s.edge}${GATE_PATH}`, { voice_id: voiceId, platform_name: p, intended_use: 'audiobook' }, { 'x-api-key': platform.apiKey }),
    },
    {
      field: 'gate.intended_use',
      send: (p) =>
        post(
          `${s.edge}${GATE_PATH}`,
          { voice_id: voiceId, platform_name: platform.name, intended_use: p },
          { 'x-api-key': platform.apiKey },
        ),
    },
    {
      field: 'gate.license_token',
      send: (p) =>
        post(
          `${s.edge}${GATE_PATH}`,
          { voice_id: voiceId, platform_name: platform.name, intended_use: 'audiobook', license_token: p },
          { 'x-api-key': platform.apiKey },
        ),
      roundTrip: async (_p, answer) => expect(answer.status).toBe('blocked'),
    },
    {
      field: 'redeem.token',
      send: (p) => post(`${s.edge}/api/v1/protect/authorizations/redeem`, { token: p }, { 'x-api-key': platform.apiKey }),
    },
    {
      field: 'X-API-Key',
      send: (p) =>
        post(
          `${s.edge}${GATE_PATH}`,
          { voice_id: voiceId, platform_name: platform.name, intended_use: 'audiobook' },
          { 'x-api-key': `vip_${encodeURIComponent(p)}` },
        ),
    },
  ];

  /** Query and path parameters, sent percent-encoded. */
  const urls: { field: string; url: (p: string) => string; headers: () => Record<string, string> }[] = [
    {
      field: 'audit-log?check_id',
      url: (p) => `${s.origin}/api/v1/protect/audit-log?check_id=${encodeURIComponent(p)}`,
      headers: () => owner.auth,
    },
    {
      field: 'audit-log?platform_name',
      url: (p) => `${s.origin}/api/v1/protect/audit-log?platform_name=${encodeURIComponent(p)}`,
      headers: () => s.admin.auth,
    },
    {
      field: 'audit-log?decision',
      url: (p) => `${s.origin}/api/v1/protect/audit-log?decision=${encodeURIComponent(p)}`,
      headers: () => s.admin.auth,
    },
    {
      field: 'audit-log?from',
      url: (p) => `${s.origin}/api/v1/protect/audit-log?from=${encodeURIComponent(p)}`,
      headers: () => s.admin.auth,
    },
    {
      field: 'audit-log?cursor',
      url: (p) => `${s.origin}/api/v1/protect/audit-log?cursor=${encodeURIComponent(p)}`,
      headers: () => s.admin.auth,
    },
    {
      field: 'audit-log?limit',
      url: (p) => `${s.origin}/api/v1/protect/audit-log?limit=${encodeURIComponent(p)}`,
      headers: () => s.admin.auth,
    },
    { field: 'voices?cursor', url: (p) => `${s.origin}/api/v1/voices?cursor=${encodeURIComponent(p)}`, headers: () => owner.auth },
    {
      field: 'voices/{voice_id}/licenses',
      url: (p) => `${s.origin}/api/v1/voices/${encodeURIComponent(p)}/licenses`,
      headers: () => owner.auth,
    },
    {
      field: 'platforms/{platform_id}/api-keys',
      url: (p) => `${s.origin}/api/v1/platforms/${encodeURIComponent(p)}/api-keys`,
      headers: () => s.admin.auth,
    },
    { field: 'licensing?voice_id', url: (p) => `${s.origin}/licensing?voice_id=${encodeURIComponent(p)}`, headers: () => ({}) },
    {
      field: 'audit-log/verify?from_seq',
      url: (p) => `${s.origin}/api/v1/protect/audit-log/verify?from_seq=${encodeURIComponent(p)}`,
      headers: () => s.admin.auth,
    },
  ];

  it('refuses or stores unchanged every payload in every JSON string field', async () => {
    for (const { field, send, roundTrip } of fields) {
      for (const payload of PAYLOADS) {
        tried += 1;
        const response = await send(payload);
        expectUnsplit(response, `${field} ← ${JSON.stringify(payload)}`);
        const answer = await refusedOrStored(response, `${field} ← ${JSON.stringify(payload)}`);
        if (answer && roundTrip) await roundTrip(payload, answer);
      }
    }
  }, 180_000);

  it('refuses or answers every payload in every query and path parameter', async () => {
    for (const { field, url, headers } of urls) {
      for (const payload of PAYLOADS) {
        tried += 1;
        const response = await fetch(url(payload), { headers: headers() });
        expectUnsplit(response, `${field} ← ${JSON.stringify(payload)}`);
        const answer = await refusedOrStored(response, `${field} ← ${JSON.stringify(payload)}`);
        if (answer && 'entries' in answer) expect(answer.entries).toEqual([]);
      }
    }
  });

  it('stores a voice name made of payloads unchanged, and escapes it on the licensing page', async () => {
    const names = PAYLOADS.filter((p) => p.trim().length > 0 && !p.includes('\u0000'));
    for (const name of names) {
      tried += 1;
      const form = await s.enrollForm(name, await s.consent(owner), []);
      const response = await fetch(`${s.origin}/api/v1/voices/enroll`, { method: 'POST', headers: owner.auth, body: form });
      // Without audio the request is refused, whatever the name; the name alone must not break it.
      await expectProblem(response, 422);
    }
    // One enrollment with the nastiest name: stored and listed unchanged, escaped in HTML.
    const nasty = "<script>alert(1)</script>'; DROP TABLE voices; -- 名前";
    tried += 1;
    const renamed = await s.enroll(owner, nasty, SPEAKERS.a);
    const list = await json(await fetch(`${s.origin}/api/v1/voices`, { headers: owner.auth }));
    expect((list.voices as { voice_id: string; name: string }[]).find((v) => v.voice_id === renamed)?.name).toBe(nasty);
    const page = await (await fetch(`${s.origin}/licensing?voice_id=${renamed}`)).text();
    expect(page).not.toContain('<script>alert(1)</script>');
    expect(page).toContain('&lt;script&gt;');
    // NUL bytes in a multipart name are refused cleanly (Postgres text cannot hold them).
    tried += 1;
    const withNul = await s.enrollForm('nul\u0000name', await s.consent(owner), SPEAKERS.a.slice(0, 1));
    const refused = await expectProblem(
      await fetch(`${s.origin}/api/v1/voices/enroll`, { method: 'POST', headers: owner.auth, body: withNul }),
      422,
      'validation_failed',
    );
    expect(refused.errors).toEqual([expect.objectContaining({ field: 'body.name' })]);
  });

  it('splits no response header with CR/LF sent in the path, the query or a raw header', async () => {
    const raw = async (target: string, host: string, extraHeaders = '') => {
      const { hostname, port } = new URL(host);
      return new Promise<string>((resolve, reject) => {
        const socket = connect(Number(port), hostname, () => {
          socket.write(`GET ${target} HTTP/1.1\r\nHost: ${hostname}\r\n${extraHeaders}Connection: close\r\n\r\n`);
        });
        let text = '';
        // The head is all that matters; some servers keep the connection open after the body.
        socket.on('data', (chunk) => {
          text += chunk.toString('latin1');
          if (text.includes('\r\n\r\n')) {
            socket.destroy();
            resolve(text);
          }
        });
        socket.on('end', () => resolve(text));
        socket.on('error', reject);
      });
    };
    const attempts = [
      '/api/v1/nowhere%0d%0aX-Injected:%20yes',
      '/api/v1/voices?cursor=%0d%0aX-Injected:%20yes',
      '/api/v1/protect/demo/pre-synthesis-check?x=%0d%0aSet-Cookie:%20a=b',
      '/licensing?voice_id=%0d%0aLocation:%20http://evil.example',
    ];
    for (const host of [s.origin, s.edge]) {
      for (const target of attempts) {
        tried += 1;
        const answer = await raw(target, host);
        const head = answer.split('\r\n\r\n')[0]!.toLowerCase();
        expect(head, `${host}${target}`).toMatch(/^http\/1\.1 [2-5]\d\d/);
        expect(head).not.toMatch(/\r\n(x-injected|set-cookie|location):/);
      }
      // A request id carrying CR/LF-looking text is not echoed into the response headers.
      tried += 1;
      const answer = await raw('/api/v1/protect/demo/pre-synthesis-check', host, 'X-Request-Id: abc%0d%0aX-Injected: yes\r\n');
      const head = answer.split('\r\n\r\n')[0]!.toLowerCase();
      expect(head).not.toContain('x-injected');
      expect(head).not.toContain('%0d%0a');
    }
    // Rate-limit headers at the edge are built from our own numbers, not from the request.
    const gate = await post(
      `${s.edge}${GATE_PATH}`,
      { voice_id: voiceId, platform_name: platform.name, intended_use: 'audiobook' },
      { 'x-api-key': platform.apiKey },
    );
    expect(gate.headers.get('ratelimit')).toMatch(/^"default";r=\d+;t=\d+$/);
  });

  it('leaves the database intact afterwards', async () => {
    const voices = await fetch(`${s.origin}/api/v1/voices`, { headers: owner.auth });
    expect(voices.status).toBe(200);
    expect(((await json(voices)).voices as { voice_id: string }[]).map((v) => v.voice_id)).toContain(voiceId);
    expect((await post(`${s.origin}/api/v1/auth/login`, { email: s.admin.email, password: s.admin.password })).status).toBe(200);
    expect((await fetch(`${s.origin}/api/v1/platforms`, { headers: s.admin.auth })).status).toBe(200);
    const verdict = await json(await fetch(`${s.origin}/api/v1/protect/audit-log/verify`, { headers: s.admin.auth }));
    expect(verdict).toMatchObject({ valid: true, first_invalid_seq: null });
    const answer = await post(
      `${s.edge}${GATE_PATH}`,
      { voice_id: voiceId, platform_name: platform.name, intended_use: 'audiobook' },
      { 'x-api-key': platform.apiKey },
    );
    expect(await json(answer)).toMatchObject({ status: 'blocked', reason: 'no_license' });
    expect(tried).toBeGreaterThan(500);
    // No request made the service print a stack trace or a database error.
    expect(s.service.output()).not.toMatch(/syntax error at or near|invalid byte sequence|unterminated quoted/i);
  });
});
