import { SELF } from 'cloudflare:test';
import { demoResponseVariantBSchema } from '@vip/shared-schema';
import { edgeRoutes } from '@vip/shared-schema/routes/edge';
import { afterEach, beforeEach, describe, expect, it, type MockInstance, onTestFinished } from 'vitest';
import { expectApproved } from '../testing/approved.js';
import { findAuditRecord } from '../testing/audit.js';
import { expectDemoShowsTheGate } from '../testing/demo.js';
import {
  accessTokenFor,
  burst,
  decodeJwtPart,
  EDGE,
  expectProblem,
  gateCheck,
  jsonPost,
  licence,
  licensedVoice,
  newPlatformKey,
  publishVoice,
  serveOriginJwks,
  uniqueIp,
  uniqueName,
  voiceRecord,
} from '../testing/edge.js';

/**
 * Spec conformance of a Variant B deployment (GATE_VARIANT=B in this project's bindings): every
 * Variant B row of docs/CONTRACT.md#gate-results, docs/CONTRACT.md#the-demo, docs/CONTRACT.md#authentication, docs/CONTRACT.md#errors, docs/CONTRACT.md#limits, through real HTTP into the Worker.
 */

const DEMO_PATH = edgeRoutes.demo.path;
const REDEEM_PATH = edgeRoutes.redeem.path;
const UUID = expect.stringMatching(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);

const anonymous = (ip = uniqueIp()) => ({ 'cf-connecting-ip': ip });
const readJson = async (response: Response) => (await response.json()) as Record<string, unknown>;
const redeem = (token: string, headers: Record<string, string>) => SELF.fetch(`${EDGE}${REDEEM_PATH}`, jsonPost({ token }, headers));

/**
 * Limits are fixed windows on the real clock here (SELF cannot pin it): a burst that needs
 * `neededSeconds` starts in a fresh window rather than straddle two and see the count reset.
 */
async function startWithinOneWindow(windowSeconds: number, neededSeconds: number) {
  const secondsLeft = windowSeconds - (Math.floor(Date.now() / 1000) % windowSeconds);
  if (secondsLeft < neededSeconds) await new Promise((resolve) => setTimeout(resolve, (secondsLeft + 1) * 1000));
}

const tally = (statuses: number[]) => ({
  ok: statuses.filter((status) => status === 200).length,
  limited: statuses.filter((status) => status === 429).length,
});

describe('docs/CONTRACT.md#gate-results: results in the Variant B schema', () => {
  it('approved: approval_token is the only token field, with no deprecation headers', async () => {
    const platform = uniqueName('Public Platform');
    const { voiceId } = await licensedVoice(platform, ['music']);
    const response = await gateCheck({ voice_id: voiceId, platform_name: platform, intended_use: 'music' }, anonymous());
    expect(response.status).toBe(200);
    const body = await readJson(response);
    expectApproved(body, { variant: 'B', voiceId });
    for (const header of ['deprecation', 'sunset', 'link']) expect(response.headers.get(header)).toBeNull();
    // "A time-bound cryptographic token": its expiry is the answer's expires_at.
    const claims = decodeJwtPart((body.approval_token as string).split('.')[1]!);
    expect(new Date((claims.exp as number) * 1000).toISOString()).toBe(body.expires_at);
    expect(claims).toMatchObject({ voice_id: voiceId, platform: platform, intended_use: 'music', check_id: body.check_id });
  });

  it('approved for a platform key as well, still approval_token only', async () => {
    const key = await newPlatformKey();
    const { voiceId } = await licensedVoice(key.platformName, ['audiobook']);
    const body = await readJson(
      await gateCheck({ voice_id: voiceId, platform_name: key.platformName, intended_use: 'audiobook' }, { 'x-api-key': key.apiKey }),
    );
    expect(body).toMatchObject({ status: 'approved', approval_token: expect.any(String) });
    expect(body).not.toHaveProperty('authorization_token');
  });

  it('the approval_token is single use', async () => {
    const platform = uniqueName('Public Platform');
    const { voiceId } = await licensedVoice(platform, ['gaming']);
    const ip = anonymous();
    const { approval_token } = (await readJson(
      await gateCheck({ voice_id: voiceId, platform_name: platform, intended_use: 'gaming' }, ip),
    )) as { approval_token: string };
    expect((await redeem(approval_token, ip)).status).toBe(200);
    await expectProblem(await redeem(approval_token, ip), 409, 'token_already_used');
  });

  it('blocked: each reason, with license_url carrying the voice and authorization_denied true', async () => {
    const platform = uniqueName('Public Platform');
    const cases = [
      { reason: 'no_consent', record: voiceRecord({ consent_status: 'withdrawn', licenses: [await licence(platform, ['podcast'])] }) },
      { reason: 'no_license', record: voiceRecord() },
      { reason: 'scope_mismatch', record: voiceRecord({ licenses: [await licence(platform, ['music'])] }) },
    ];
    for (const { record } of cases) await publishVoice(record);
    for (const { reason, record } of cases) {
      const response = await gateCheck({ voice_id: record.voice_id, platform_name: platform, intended_use: 'podcast' }, anonymous());
      expect(response.status).toBe(200);
      expect(await readJson(response)).toEqual({
        status: 'blocked',
        action: 'authorization_denied',
        reason,
        voice_id: record.voice_id,
        license_url: `https://origin.test/licensing?voice_id=${record.voice_id}`,
        check_id: UUID,
        authorization_denied: true,
      });
    }
  });

  it("an anonymously obtained approval_token is redeemed anonymously, and a platform's only by that platform", async () => {
    const platform = uniqueName('Public Platform');
    const { voiceId } = await licensedVoice(platform, ['music']);
    const ip = anonymous();
    const check = { voice_id: voiceId, platform_name: platform, intended_use: 'music' };
    const anonymousApproval = (await readJson(await gateCheck(check, ip))) as { approval_token: string };
    expect((await redeem(anonymousApproval.approval_token, ip)).status).toBe(200);

    const key = await newPlatformKey(platform);
    const keyed = (await readJson(await gateCheck(check, { 'x-api-key': key.apiKey }))) as { approval_token: string };
    await expectProblem(await redeem(keyed.approval_token, ip), 403, 'platform_mismatch');
    expect((await redeem(keyed.approval_token, { 'x-api-key': key.apiKey })).status).toBe(200);
  });

  it('no registry record: 200, not 404, and the decision is left to the platform', async () => {
    const response = await gateCheck({ voice_id: crypto.randomUUID(), platform_name: 'Anyone', intended_use: 'commercial' }, anonymous());
    expect(response.status).toBe(200);
    expect(await readJson(response)).toEqual({
      action: 'no_registry_record',
      platform_decision_required: true,
      voice_id: null,
      check_id: UUID,
    });
  });
});

describe('docs/CONTRACT.md#the-demo: the demo in the Variant B schema', () => {
  it('shows as production_responses exactly what this gate answers', async () => {
    await expectDemoShowsTheGate('B');
  });

  it('answers without credentials: no decision or statuses, an authorization_denied flag, three outcomes', async () => {
    const response = await SELF.fetch(`${EDGE}${DEMO_PATH}`, { headers: anonymous() });
    expect(response.status).toBe(200);
    const body = demoResponseVariantBSchema.parse(await response.json());
    expect(body).toMatchObject({ demo: true, variant: 'B', endpoint: 'POST /api/v1/protect/pre-synthesis-check' });
    expect(body.response_schema).toEqual({
      protected: false,
      action: 'no_registry_record',
      authorization_denied: false,
      platform_decision_required: true,
      license_url: null,
      check_id: UUID,
    });
    const { no_registry_record, protected_no_license, protected_licensed } = body.possible_responses;
    expect(no_registry_record).toMatchObject({ action: 'no_registry_record', platform_decision_required: true });
    expect(protected_no_license).toMatchObject({
      action: 'blocked',
      authorization_denied: true,
      license_url: `https://origin.test/licensing?voice_id=${body.example_request.voice_id}`,
    });
    expect(protected_licensed).toMatchObject({ action: 'allow_licensed', authorization_denied: false });
    for (const outcome of [body.response_schema, no_registry_record, protected_no_license, protected_licensed]) {
      for (const field of ['decision', 'license_status', 'consent_status']) expect(outcome).not.toHaveProperty(field);
    }
  });
});

describe('docs/CONTRACT.md#authentication: a public gate; credentials raise its limit and enable full audit logging', () => {
  let jwks: MockInstance;
  beforeEach(async () => {
    jwks = await serveOriginJwks();
  });
  afterEach(() => jwks.mockRestore());

  it('records an anonymous caller by a keyed hash of the address, never the address itself', async () => {
    const ip = uniqueIp();
    const body = await readJson(
      await gateCheck({ voice_id: crypto.randomUUID(), platform_name: 'Anyone', intended_use: 'music' }, anonymous(ip)),
    );
    const record = await findAuditRecord(body.check_id as string);
    expect(record).toMatchObject({ caller_type: 'anonymous', caller_id: expect.stringMatching(/^ip:[0-9a-f]{32}$/) });
    expect(JSON.stringify(record)).not.toContain(ip);
  });

  it('records an API key caller by key and a Bearer caller by user', async () => {
    const key = await newPlatformKey();
    const keyed = await readJson(
      await gateCheck(
        { voice_id: crypto.randomUUID(), platform_name: key.platformName, intended_use: 'music' },
        { 'x-api-key': key.apiKey },
      ),
    );
    expect(await findAuditRecord(keyed.check_id as string)).toMatchObject({
      caller_type: 'api_key',
      caller_id: key.keyId,
      platform_name: key.platformName,
    });

    const userId = crypto.randomUUID();
    const bearer = await readJson(
      await gateCheck(
        { voice_id: crypto.randomUUID(), platform_name: 'Own Studio', intended_use: 'music' },
        { authorization: `Bearer ${await accessTokenFor({ sub: userId, role: 'admin' })}` },
      ),
    );
    expect(await findAuditRecord(bearer.check_id as string)).toMatchObject({ caller_type: 'user', caller_id: userId });
  });

  it('gives an address that spent its anonymous quota the per-credential quota once it sends a key or a token', async () => {
    await startWithinOneWindow(3600, 30);
    const ip = uniqueIp();
    const request = (platformName: string) => ({ voice_id: crypto.randomUUID(), platform_name: platformName, intended_use: 'music' });
    const anonymousStatuses = await burst(101, () => gateCheck(request('Anyone'), anonymous(ip)));
    expect(tally(anonymousStatuses)).toEqual({ ok: 100, limited: 1 });

    const key = await newPlatformKey();
    const withKey = await gateCheck(request(key.platformName), { ...anonymous(ip), 'x-api-key': key.apiKey });
    expect(withKey.status).toBe(200);
    expect(withKey.headers.get('ratelimit-policy')).toBe('"default";q=1000;w=60');
    const withToken = await gateCheck(request('Own Studio'), {
      ...anonymous(ip),
      authorization: `Bearer ${await accessTokenFor({ role: 'admin' })}`,
    });
    expect(withToken.status).toBe(200);
    expect(withToken.headers.get('ratelimit-policy')).toBe('"default";q=1000;w=60');
  });
});

describe('docs/CONTRACT.md#errors: errors of the pre-synthesis check in Variant B', () => {
  it('401 is Variant A only: no credential is never refused', async () => {
    const response = await gateCheck({ voice_id: crypto.randomUUID(), platform_name: 'Anyone', intended_use: 'podcast' }, {});
    expect(response.status).toBe(200);
    expect(response.headers.get('www-authenticate')).toBeNull();
  });

  it('401 for a key that is sent but wrong: a credential is checked when it is there', async () => {
    const key = await newPlatformKey();
    await expectProblem(
      await gateCheck(
        { voice_id: crypto.randomUUID(), platform_name: key.platformName, intended_use: 'podcast' },
        { 'x-api-key': 'vip_not_a_real_key' },
      ),
      401,
      'invalid_credentials',
    );
  });

  it('403 when a key names another platform', async () => {
    const key = await newPlatformKey();
    await expectProblem(
      await gateCheck({ voice_id: crypto.randomUUID(), platform_name: 'Not Mine', intended_use: 'podcast' }, { 'x-api-key': key.apiKey }),
      403,
      'platform_mismatch',
    );
  });

  it("403 when a non-admin user's token names a platform (a credential is never silently ignored)", async () => {
    const jwks = await serveOriginJwks();
    onTestFinished(() => jwks.mockRestore());
    await expectProblem(
      await gateCheck(
        { voice_id: crypto.randomUUID(), platform_name: 'Anyone', intended_use: 'podcast' },
        { authorization: `Bearer ${await accessTokenFor({ role: 'owner' })}` },
      ),
      403,
      'platform_mismatch',
    );
  });

  it('422 for an invalid body, anonymous or not', async () => {
    await expectProblem(
      await gateCheck({ voice_id: 'not-a-uuid', platform_name: 'Anyone', intended_use: 'podcast' }, anonymous()),
      422,
      'validation_failed',
    );
    await expectProblem(
      await gateCheck({ voice_id: crypto.randomUUID(), platform_name: 'Anyone', intended_use: 'radio' }, anonymous()),
      422,
      'validation_failed',
    );
    const key = await newPlatformKey();
    await expectProblem(await gateCheck({ platform_name: key.platformName }, { 'x-api-key': key.apiKey }), 422, 'validation_failed');
  });
});

describe('docs/CONTRACT.md#limits: limits of a Variant B deployment', () => {
  it('allows 100 unauthenticated gate requests per hour per IP, then 429 with Retry-After and RateLimit headers', async () => {
    await startWithinOneWindow(3600, 30);
    const ip = uniqueIp();
    const send = () => gateCheck({ voice_id: crypto.randomUUID(), platform_name: 'Anyone', intended_use: 'music' }, anonymous(ip));
    expect(tally(await burst(105, send))).toEqual({ ok: 100, limited: 5 });

    const refused = await send();
    await expectProblem(refused, 429, 'rate_limited');
    expect(refused.headers.get('ratelimit-policy')).toBe('"default";q=100;w=3600');
    const retryAfter = Number(refused.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(3600);
    expect(refused.headers.get('ratelimit')).toBe(`"default";r=0;t=${retryAfter}`);
    expect((await gateCheck({ voice_id: crypto.randomUUID(), platform_name: 'Anyone', intended_use: 'music' }, anonymous())).status).toBe(
      200,
    );
  });

  it('counts an authenticated caller against 1,000 per minute per credential, not against its address', async () => {
    // Exhausting the 1,000 needs a pinned clock to be exact and quick: the edge-gate project does
    // that through the same limiter (limits.test.ts). Here, the policy a Variant B caller is given.
    const ip = uniqueIp();
    const key = await newPlatformKey();
    const send = (headers: Record<string, string>) =>
      gateCheck(
        { voice_id: crypto.randomUUID(), platform_name: key.platformName, intended_use: 'music' },
        { ...anonymous(ip), ...headers },
      );
    const first = await send({ 'x-api-key': key.apiKey });
    expect(first.headers.get('ratelimit-policy')).toBe('"default";q=1000;w=60');
    expect(first.headers.get('ratelimit')).toMatch(/^"default";r=999;t=([1-9]|[1-5][0-9]|60)$/);
    const anonymousFromSameAddress = await send({});
    expect(anonymousFromSameAddress.headers.get('ratelimit')).toMatch(/^"default";r=99;t=\d+$/);
  });
});
