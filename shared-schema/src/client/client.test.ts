import { afterAll, afterEach, beforeAll, describe, expect, expectTypeOf, it } from 'vitest';
import { DEMO_NO_REGISTRY_RECORD_VARIANT_A } from '../gate.js';
import { type RecordedAnswer, type RecordedRequest, type RecordedServer, startRecordedServer } from '../testing/recorded-server.mjs';
import {
  authorizationTokenOf,
  ContractError,
  createGateClient,
  createOriginClient,
  isApproved,
  isBlocked,
  isNoRegistryRecord,
  ProblemError,
  screenThenCheck,
} from './index.js';

/** Bodies shaped as the planes answer them (taken from a running service, ids replaced). */
const VOICE_ID = '6f1c2a9e-2b0e-4c37-9a51-3f7c1f0d8a11';
const CHECK_ID = '0b7e4c52-1e9a-4f3c-8d2a-5c6b7a8e9f01';
const JTI = '9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d';
const approved = {
  status: 'approved',
  authorization_token: 'eyJhbGciOiJFZERTQSJ9.e30.sig',
  approval_token: 'eyJhbGciOiJFZERTQSJ9.e30.sig',
  voice_id: VOICE_ID,
  consented: true,
  licensed: true,
  expires_at: '2026-05-01T12:05:00.000Z',
  check_id: CHECK_ID,
};
const blocked = {
  status: 'blocked',
  action: 'authorization_denied',
  reason: 'no_license',
  voice_id: VOICE_ID,
  license_url: `http://127.0.0.1:8080/licensing?voice_id=${VOICE_ID}`,
  check_id: CHECK_ID,
  authorization_denied: true,
};
const noRecord = { action: 'no_registry_record', platform_decision_required: true, voice_id: null, check_id: CHECK_ID };
const problem = (code: string, status: number, title: string, detail: string, extra: Record<string, unknown> = {}) => ({
  type: `urn:vip:problem:${code}`,
  title,
  status,
  detail,
  instance: '/api/v1/protect/authorizations/redeem',
  code,
  request_id: 'req-0123456789',
  ...extra,
});
const request = { voice_id: VOICE_ID, platform_name: 'Acme TTS', intended_use: 'audiobook' } as const;

let server: RecordedServer;
let answer: (request: RecordedRequest) => RecordedAnswer = () => ({ status: 500, body: {} });

beforeAll(async () => {
  server = await startRecordedServer((req) => answer(req));
});
afterAll(async () => {
  await server.close();
});
afterEach(() => {
  server.requests.length = 0;
});

describe('the gate client', () => {
  it('sends the API key and the JSON body to the gate path and returns the parsed approval', async () => {
    answer = () => ({
      status: 200,
      body: approved,
      headers: { ratelimit: '"default";r=998;t=41', 'ratelimit-policy': '"default";q=1000;w=60' },
    });
    const seen: unknown[] = [];
    const gate = createGateClient({ baseUrl: `${server.url}/`, apiKey: 'vip_test', onResponse: (info) => seen.push(info.rateLimit) });
    const result = await gate.preSynthesisCheck(request, { requestId: 'my-trace-0001' });

    expect(result).toEqual(approved);
    expect(isApproved(result)).toBe(true);
    expect(authorizationTokenOf(result)).toBe(approved.authorization_token);
    const sent = server.requests[0]!;
    expect(sent).toMatchObject({ method: 'POST', url: '/api/v1/protect/pre-synthesis-check' });
    expect(sent.headers).toMatchObject({ 'x-api-key': 'vip_test', 'content-type': 'application/json', 'x-request-id': 'my-trace-0001' });
    expect(sent.headers.authorization).toBeUndefined();
    expect(JSON.parse(sent.body)).toEqual(request);
    expect(seen).toEqual([{ quota: 1000, windowSeconds: 60, remaining: 998, resetSeconds: 41 }]);
  });

  it('tells the three outcomes apart, and takes approval_token when it is the only token (Variant B)', async () => {
    const gate = createGateClient({ baseUrl: server.url, apiKey: 'vip_test' });
    answer = () => ({ status: 200, body: blocked });
    const denied = await gate.preSynthesisCheck(request);
    expect(isBlocked(denied) && denied.reason).toBe('no_license');
    expect(authorizationTokenOf(denied)).toBeNull();

    answer = () => ({ status: 200, body: noRecord });
    expect(isNoRegistryRecord(await gate.preSynthesisCheck(request))).toBe(true);

    const { authorization_token: _, ...variantB } = approved;
    answer = () => ({ status: 200, body: variantB });
    expect(authorizationTokenOf(await gate.preSynthesisCheck(request))).toBe(approved.approval_token);
  });

  it('sends a Bearer token from a function, asked again on every call', async () => {
    answer = () => ({ status: 200, body: noRecord });
    let n = 0;
    const gate = createGateClient({ baseUrl: server.url, bearerToken: () => `token-${++n}` });
    await gate.preSynthesisCheck(request);
    await gate.preSynthesisCheck(request);
    expect(server.requests.map((r) => r.headers.authorization)).toEqual(['Bearer token-1', 'Bearer token-2']);
  });

  it('redeems a token and surfaces a repeat as ProblemError 409 token_already_used with its request id', async () => {
    const claims = {
      voice_id: VOICE_ID,
      platform_name: 'Acme TTS',
      intended_use: 'audiobook',
      check_id: CHECK_ID,
      jti: JTI,
      redemption_check_id: CHECK_ID,
      watermark: { alg: 'org.vip.audio-watermark.qim-band-pairs.2', id: '5a3c0e91b7' },
    };
    answer = () => ({ status: 200, body: claims });
    const gate = createGateClient({ baseUrl: server.url, apiKey: 'vip_test' });
    expect(await gate.redeemAuthorization('tok')).toEqual(claims);
    expect(JSON.parse(server.requests[0]!.body)).toEqual({ token: 'tok' });

    answer = () => ({
      status: 409,
      contentType: 'application/problem+json',
      body: problem('token_already_used', 409, 'Authorization token already used', 'This authorization token has already been redeemed.'),
    });
    const error = await gate.redeemAuthorization('tok').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ProblemError);
    expect(error).toMatchObject({
      status: 409,
      code: 'token_already_used',
      detail: 'This authorization token has already been redeemed.',
      requestId: 'req-0123456789',
      type: 'urn:vip:problem:token_already_used',
      retryAfter: null,
      errors: [],
    });
  });

  it('maps 429 to ProblemError with Retry-After and the rate-limit headers', async () => {
    answer = () => ({
      status: 429,
      contentType: 'application/problem+json',
      headers: { 'retry-after': '17', ratelimit: '"default";r=0;t=17', 'ratelimit-policy': '"default";q=1000;w=60' },
      body: problem('rate_limited', 429, 'Too many requests', 'Limit of 1000 requests per 60 s reached.'),
    });
    const error = (await createGateClient({ baseUrl: server.url, apiKey: 'vip_test' })
      .preSynthesisCheck(request)
      .catch((e: unknown) => e)) as ProblemError;
    expect(error).toBeInstanceOf(ProblemError);
    expect(error.code).toBe('rate_limited');
    expect(error.retryAfter).toBe(17);
    expect(error.rateLimit).toEqual({ quota: 1000, windowSeconds: 60, remaining: 0, resetSeconds: 17 });
  });

  it('keeps the field errors of a 422', async () => {
    answer = () => ({
      status: 422,
      contentType: 'application/problem+json',
      body: problem('validation_failed', 422, 'Validation failed', 'The request body is invalid.', {
        errors: [{ field: 'body.licence_token', message: 'unknown field' }],
      }),
    });
    const error = (await createGateClient({ baseUrl: server.url, apiKey: 'vip_test' })
      .preSynthesisCheck(request)
      .catch((e: unknown) => e)) as ProblemError;
    expect(error.errors).toEqual([{ field: 'body.licence_token', message: 'unknown field' }]);
  });

  it('throws ContractError when a success answer drifts from the schema', async () => {
    const { check_id: _, ...withoutCheckId } = blocked;
    answer = () => ({ status: 200, body: { ...withoutCheckId, checkId: CHECK_ID } });
    const error = (await createGateClient({ baseUrl: server.url, apiKey: 'vip_test' })
      .preSynthesisCheck(request)
      .catch((e: unknown) => e)) as ContractError;
    expect(error).toBeInstanceOf(ContractError);
    expect(error.operationId).toBe('preSynthesisCheck');
    expect(error.issues.length).toBeGreaterThan(0);
  });

  it('throws ContractError for an error that is not one of our problems, and for a body that is not JSON', async () => {
    const gate = createGateClient({ baseUrl: server.url, apiKey: 'vip_test' });
    answer = () => ({ status: 418, contentType: 'application/problem+json', body: problem('teapot', 418, 'Teapot', 'short and stout') });
    expect(await gate.preSynthesisCheck(request).catch((e: unknown) => e)).toBeInstanceOf(ContractError);
    answer = () => ({ status: 502, contentType: 'text/html', body: '<html>Bad gateway</html>' });
    const error = (await gate.preSynthesisCheck(request).catch((e: unknown) => e)) as ContractError;
    expect(error).toBeInstanceOf(ContractError);
    expect(error.status).toBe(502);
    expect(error.bodyExcerpt).toContain('Bad gateway');
  });

  it('calls the public demo without credentials', async () => {
    const outcome = { ...DEMO_NO_REGISTRY_RECORD_VARIANT_A, check_id: CHECK_ID };
    answer = () => ({
      status: 200,
      body: {
        demo: true,
        variant: 'A',
        endpoint: 'POST /api/v1/protect/pre-synthesis-check',
        example_request: request,
        response_schema: outcome,
        possible_responses: { no_registry_record: outcome, protected_no_license: outcome, protected_licensed: outcome },
        production_responses: {
          approved: {
            status: 'approved',
            authorization_token: 'token',
            voice_id: request.voice_id,
            consented: true,
            licensed: true,
            expires_at: '2026-11-24T04:00:00.000Z',
            check_id: CHECK_ID,
          },
          blocked: {
            status: 'blocked',
            action: 'authorization_denied',
            reason: 'no_license',
            voice_id: request.voice_id,
            license_url: `https://origin.example/licensing?voice_id=${request.voice_id}`,
            check_id: CHECK_ID,
            authorization_denied: true,
          },
          no_registry_record: { action: 'no_registry_record', platform_decision_required: true, voice_id: null, check_id: CHECK_ID },
        },
      },
    });
    const demo = await createGateClient({ baseUrl: server.url, apiKey: 'vip_test' }).demo();
    expect(demo.variant).toBe('A');
    expect(server.requests[0]).toMatchObject({ method: 'GET', url: '/api/v1/protect/demo/pre-synthesis-check' });
    expect(server.requests[0]!.headers['x-api-key']).toBeUndefined();
  });

  it('refuses two credentials at once', () => {
    expect(() => createGateClient({ baseUrl: server.url, apiKey: 'vip_a', bearerToken: 'b' } as never)).toThrow(TypeError);
  });

  it('derives its types from the shared schemas', () => {
    const gate = createGateClient({ baseUrl: 'http://127.0.0.1:1' });
    type Result = Awaited<ReturnType<typeof gate.preSynthesisCheck>>;
    expectTypeOf<Extract<Result, { status: 'blocked' }>['reason']>().toEqualTypeOf<'no_consent' | 'no_license' | 'scope_mismatch'>();
    expectTypeOf<Parameters<typeof gate.preSynthesisCheck>[0]['intended_use']>().toEqualTypeOf<
      'commercial' | 'audiobook' | 'podcast' | 'music' | 'gaming'
    >();
  });
});

describe('the origin client', () => {
  it('fills path parameters, sends JSON and parses a created licence', async () => {
    const licence = {
      license_id: JTI,
      voice_id: VOICE_ID,
      platform_name: 'Acme TTS',
      scopes: ['audiobook'],
      expires_at: '2027-01-01T00:00:00.000Z',
      status: 'active',
      created_at: '2026-05-01T12:00:00.000Z',
      revoked_at: null,
      description: 'Narration of audiobook chapters for the tests',
      description_source: 'stated',
      represented_by: 'none',
      compensation: null,
      license_terms_sha256: 'a'.repeat(64),
      license_token: 'vlt_abc',
    };
    answer = () => ({ status: 201, body: licence });
    const origin = createOriginClient({ baseUrl: server.url, bearerToken: 'owner-token' });
    const created = await origin.licenses.create(VOICE_ID, {
      platform_name: 'Acme TTS',
      scopes: ['audiobook'],
      description: 'Narration of audiobook chapters for the tests',
      expires_at: licence.expires_at,
    });
    expect(created.license_token).toBe('vlt_abc');
    expect(server.requests[0]).toMatchObject({ method: 'POST', url: `/api/v1/voices/${VOICE_ID}/licenses` });
    expect(server.requests[0]!.headers.authorization).toBe('Bearer owner-token');
  });

  it('sends a bodiless POST without a content type, and serialises audit queries', async () => {
    const origin = createOriginClient({ baseUrl: server.url, bearerToken: 'owner-token' });
    answer = () => ({ status: 200, body: { license_id: JTI, status: 'revoked' } });
    await origin.licenses.revoke(VOICE_ID, JTI);
    expect(server.requests[0]).toMatchObject({ url: `/api/v1/voices/${VOICE_ID}/licenses/${JTI}/revoke`, body: '' });
    expect(server.requests[0]!.headers['content-type']).toBeUndefined();

    answer = () => ({ status: 200, body: { entries: [], next_cursor: null } });
    await origin.audit.list({ check_id: CHECK_ID, limit: 5 });
    expect(server.requests[1]!.url).toBe(`/api/v1/protect/audit-log?check_id=${CHECK_ID}&limit=5`);
  });

  it('waits for a pending receipt only when asked to, within its bound, and never for a check it may not see', async () => {
    const origin = createOriginClient({ baseUrl: server.url, apiKey: 'vip_test_key' });
    const receipt = { check_id: CHECK_ID, index: 3, leaf: '{}', proof: 'c2sp.org/tlog-proof@v1' };
    const pending = (retryAfter: string) => ({
      status: 503,
      headers: { 'retry-after': retryAfter },
      body: problem(
        'receipt_pending',
        503,
        'Receipt not yet available',
        'The gate decided this check; the audit chain has not collected it yet.',
      ),
    });
    let asked = 0;
    answer = () => (++asked < 3 ? pending('0') : { status: 200, body: receipt });
    // Without waitMs a pending receipt throws at once.
    await expect(origin.audit.receipt(CHECK_ID)).rejects.toMatchObject({ code: 'receipt_pending', retryAfter: 0 });
    asked = 0;
    const waits: number[] = [];
    expect(await origin.audit.receipt(CHECK_ID, { waitMs: 5_000, onPending: (seconds) => waits.push(seconds) })).toEqual(receipt);
    expect([asked, waits]).toEqual([3, [0, 0]]);

    // A Retry-After past the bound is not waited for: the pending problem comes back at once.
    answer = () => pending('30');
    const started = Date.now();
    await expect(origin.audit.receipt(CHECK_ID, { waitMs: 1_000 })).rejects.toMatchObject({ code: 'receipt_pending', retryAfter: 30 });
    expect(Date.now() - started).toBeLessThan(1_000);
    asked = 0;
    answer = () => {
      asked++;
      return { status: 404, body: problem('not_found', 404, 'Not found', 'No audit entry with this check_id is visible to this caller.') };
    };
    await expect(origin.audit.receipt(CHECK_ID, { waitMs: 5_000 })).rejects.toMatchObject({ code: 'not_found' });
    expect(asked).toBe(1);
  });

  it('sends enrollment audio as multipart with the text fields', async () => {
    answer = () => ({
      status: 201,
      body: {
        voice_id: VOICE_ID,
        name: 'Narrator',
        status: 'ready',
        speech_seconds: 12.5,
        quality: {
          files: [{ filename: 'narrator.wav', duration_seconds: 14, speech_seconds: 12.5, clipping_ratio: 0, snr_db: 30 }],
          clipping_ratio: 0,
          snr_db: 30,
          warnings: [],
        },
        model: 'vip-speaker-v1',
      },
    });
    const origin = createOriginClient({ baseUrl: server.url, bearerToken: 'owner-token' });
    const voice = await origin.voices.enroll({
      name: 'Narrator',
      consent_id: CHECK_ID,
      audio: [{ data: new Uint8Array([1, 2, 3]), filename: 'a.wav' }],
    });
    expect(voice.quality.warnings).toEqual([]);
    const sent = server.requests[0]!;
    expect(sent.headers['content-type']).toMatch(/^multipart\/form-data; boundary=/);
    expect(sent.body).toContain('name="audio"; filename="a.wav"');
    expect(sent.body).toContain('name="consent_id"');
  });

  it('sends a spoken consent with its challenge, and keeps what the decoder heard on its refusal', async () => {
    const heard =
      'i am the owner of this voice and i do not agree that it may be enrolled for voice protection one two three four five six';
    answer = () => ({
      status: 422,
      contentType: 'application/problem+json',
      body: problem('consent_statement_not_spoken', 422, 'Consent statement not heard', `Heard: "${heard}".`, { heard }),
    });
    const origin = createOriginClient({ baseUrl: server.url, bearerToken: 'owner-token' });
    const error = await origin.voices
      .reenroll(VOICE_ID, [{ data: new Uint8Array([1, 2, 3]), filename: 'a.wav' }], {
        challenge_id: CHECK_ID,
        recording: { data: new Uint8Array([4, 5, 6]), filename: 'consent.webm', type: 'audio/webm' },
      })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ProblemError);
    expect((error as ProblemError).problem.heard).toBe(heard);
    const sent = server.requests[0]!;
    expect(sent.url).toBe(`/api/v1/voices/${VOICE_ID}/re-enroll`);
    expect(sent.body).toContain(`name="challenge_id"\r\n\r\n${CHECK_ID}\r\n`);
    expect(sent.body).toContain('name="spoken_consent"; filename="consent.webm"\r\nContent-Type: audio/webm');
  });

  it('keeps the names from before its namespaces followed the origin folders, as the same calls', () => {
    const origin = createOriginClient({ baseUrl: 'http://origin.invalid' });
    expect(origin.consents.grantBiometric).toBe(origin.biometricConsent.grant);
    expect(origin.voices.setConsent).toBe(origin.synthesisConsent.set);
    expect(origin.voiceReviews).toEqual({ list: origin.voices.listReviews, decide: origin.voices.decideReview });
    expect(origin.protect).toEqual({
      screen: origin.screening.screen,
      requestLicense: origin.licenseRequests.request,
      licenseRequest: origin.licenseRequests.get,
    });
  });
});

describe('the protection loop in the client', () => {
  const OTHER_VOICE = '7a2d3b0f-3c1f-4d48-8b62-4e8d2e1f9b22';
  const screening = {
    check_id: CHECK_ID,
    model: 'vip-speaker-v1',
    matches: [
      { voice_id: VOICE_ID, confidence: 0.97, license_url: `http://127.0.0.1:8080/licensing?voice_id=${VOICE_ID}` },
      { voice_id: OTHER_VOICE, confidence: 0.81, license_url: `http://127.0.0.1:8080/licensing?voice_id=${OTHER_VOICE}` },
    ],
  };

  it('screens a sample with the API key, then asks the gate about each match, best first', async () => {
    answer = (req) => {
      if (req.url === '/api/v1/protect/screen') return { status: 200, body: screening };
      const voiceId = (JSON.parse(req.body) as { voice_id: string }).voice_id;
      return { status: 200, body: voiceId === VOICE_ID ? approved : { ...blocked, voice_id: OTHER_VOICE } };
    };
    const options = { baseUrl: server.url, apiKey: 'vip_key' };
    const checks = await screenThenCheck(
      { origin: createOriginClient(options), gate: createGateClient(options) },
      { audio: { data: new Uint8Array([1, 2, 3]), filename: 'sample.wav' }, platform_name: 'Acme TTS', intended_use: 'audiobook' },
    );
    expect(checks.map(({ match, check }) => [match.voice_id, isApproved(check), isBlocked(check)])).toEqual([
      [VOICE_ID, true, false],
      [OTHER_VOICE, false, true],
    ]);
    const [screen, ...gateCalls] = server.requests;
    expect(screen).toMatchObject({ method: 'POST', url: '/api/v1/protect/screen' });
    expect(screen!.headers['x-api-key']).toBe('vip_key');
    expect(screen!.body).toContain('name="platform_name"');
    expect(screen!.body).toContain('name="audio"; filename="sample.wav"');
    expect(gateCalls.map((call) => JSON.parse(call.body))).toEqual([
      { voice_id: VOICE_ID, platform_name: 'Acme TTS', intended_use: 'audiobook' },
      { voice_id: OTHER_VOICE, platform_name: 'Acme TTS', intended_use: 'audiobook' },
    ]);
  });

  it('asks no gate question when nothing matched', async () => {
    answer = () => ({ status: 200, body: { ...screening, matches: [] } });
    const options = { baseUrl: server.url, apiKey: 'vip_key' };
    const checks = await screenThenCheck(
      { origin: createOriginClient(options), gate: createGateClient(options) },
      { audio: new Blob([new Uint8Array([1])]), platform_name: 'Acme TTS', intended_use: 'podcast' },
    );
    expect(checks).toEqual([]);
    expect(server.requests).toHaveLength(1);
  });

  it('requests a licence and reads the request back', async () => {
    const created = {
      request_id: JTI,
      voice_id: VOICE_ID,
      platform_name: 'Acme TTS',
      scopes: ['audiobook'],
      expires_at: '2027-01-01T00:00:00.000Z',
      description: 'Narration of audiobook chapters for the tests',
      represented_by: 'none',
      compensation: null,
      status: 'pending',
      created_at: '2026-05-01T12:00:00.000Z',
    };
    answer = () => ({ status: 201, body: created });
    const origin = createOriginClient({ baseUrl: server.url, apiKey: 'vip_key' });
    const request = await origin.licenseRequests.request(VOICE_ID, {
      platform_name: 'Acme TTS',
      scopes: ['audiobook'],
      description: 'Narration of audiobook chapters for the tests',
      expires_at: created.expires_at,
      message: 'For our audiobooks',
    });
    expect(request.status).toBe('pending');
    expect(server.requests[0]).toMatchObject({ method: 'POST', url: `/api/v1/voices/${VOICE_ID}/license-requests` });
    answer = () => ({
      status: 200,
      body: {
        ...created,
        message: null,
        description_source: 'stated',
        status: 'approved',
        answered_at: created.created_at,
        license_id: CHECK_ID,
        decline_reason: null,
        closed_reason: null,
      },
    });
    expect((await origin.licenseRequests.get(JTI)).license_id).toBe(CHECK_ID);
    expect(server.requests[1]!.url).toBe(`/api/v1/license-requests/${JTI}`);
  });
});
