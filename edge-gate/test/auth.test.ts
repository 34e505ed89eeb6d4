import { accessToken } from '@vip/shared-schema';
import { generateKeyPair, UnsecuredJWT } from 'jose';
import { afterEach, beforeEach, describe, expect, it, type MockInstance } from 'vitest';
import {
  accessTokenFor,
  edgeFetch,
  expectProblem,
  GATE_PATH,
  gateCheck,
  jsonPost,
  keyRecord,
  newPlatformKey,
  nextVersion,
  serveOriginJwks,
  sync,
} from './testing/edge.js';

const body = (platformName = 'Any Platform') => ({ voice_id: crypto.randomUUID(), platform_name: platformName, intended_use: 'audiobook' });
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

describe('gate authentication: API keys (Variant A)', () => {
  it('accepts an active key of the platform named in the body', async () => {
    const key = await newPlatformKey();
    const response = await gateCheck(body(key.platformName), { 'x-api-key': key.apiKey });
    expect(response.status).toBe(200);
  });

  it('refuses a revoked key with 401', async () => {
    const key = await newPlatformKey();
    await sync([{ kind: 'api_key', key_hash: key.keyHash, version: nextVersion(), record: keyRecord(key, true) }]);
    await expectProblem(await gateCheck(body(key.platformName), { 'x-api-key': key.apiKey }), 401, 'invalid_credentials');
  });

  it('refuses a deleted key with 401', async () => {
    const key = await newPlatformKey();
    await sync([{ kind: 'api_key', key_hash: key.keyHash, version: nextVersion(), record: null }]);
    await expectProblem(await gateCheck(body(key.platformName), { 'x-api-key': key.apiKey }), 401, 'invalid_credentials');
  });

  it('refuses an unknown key with 401', async () => {
    await expectProblem(await gateCheck(body(), { 'x-api-key': `vip_${crypto.randomUUID()}` }), 401, 'invalid_credentials');
    await expectProblem(await gateCheck(body(), { 'x-api-key': 'not-even-a-key' }), 401, 'invalid_credentials');
  });

  it('answers 403 when the body names another platform than the key, and says so when only the case differs', async () => {
    const key = await newPlatformKey();
    const other = await expectProblem(await gateCheck(body('Someone Else'), { 'x-api-key': key.apiKey }), 403, 'platform_mismatch');
    expect(other.detail).toContain('This API key belongs to another platform');
    const shouted = key.platformName.toUpperCase();
    const caseOnly = await expectProblem(await gateCheck(body(shouted), { 'x-api-key': key.apiKey }), 403, 'platform_mismatch');
    expect(caseOnly.detail).toBe(
      `platform_name "${shouted}" differs from this API key's platform only in case; names are matched exactly: send "${key.platformName}".`,
    );
  });

  it('answers 401 authentication_required without any credential', async () => {
    const response = await gateCheck(body(), {});
    await expectProblem(response, 401, 'authentication_required');
    expect(response.headers.get('www-authenticate')).toContain('Bearer');
  });
});

describe('gate authentication: Bearer access tokens (Variant A)', () => {
  let fetchSpy: MockInstance<typeof fetch>;
  beforeEach(async () => {
    fetchSpy = await serveOriginJwks();
  });
  afterEach(() => fetchSpy.mockRestore());

  it("accepts a valid access token of the origin's administrator (the first-party caller)", async () => {
    const response = await gateCheck(body(), bearer(await accessTokenFor({ role: 'admin' })));
    expect(response.status).toBe(200);
  });

  it("refuses a valid non-admin user token asking in a platform's name with 403 platform_mismatch", async () => {
    await expectProblem(await gateCheck(body(), bearer(await accessTokenFor({ role: 'owner' }))), 403, 'platform_mismatch');
  });

  it('refuses an unsigned token (alg none)', async () => {
    const unsigned = new UnsecuredJWT({ role: 'owner' })
      .setSubject(crypto.randomUUID())
      .setIssuer(accessToken.issuer)
      .setAudience(accessToken.audience)
      .setIssuedAt()
      .setExpirationTime('10m')
      .encode();
    await expectProblem(await gateCheck(body(), bearer(unsigned)), 401, 'invalid_token');
  });

  it('refuses a token signed by another key, with or without a known kid', async () => {
    const stranger = await generateKeyPair('EdDSA', { extractable: true });
    await expectProblem(await gateCheck(body(), bearer(await accessTokenFor({}, { key: stranger.privateKey }))), 401, 'invalid_token');
    const unknownKid = await accessTokenFor({}, { key: stranger.privateKey, kid: 'someone-elses-key' });
    await expectProblem(await gateCheck(body(), bearer(unknownKid)), 401, 'invalid_token');
  });

  it('refuses an expired token', async () => {
    await expectProblem(await gateCheck(body(), bearer(await accessTokenFor({}, { expiresIn: -60 }))), 401, 'invalid_token');
  });

  it('refuses a token for another audience', async () => {
    await expectProblem(await gateCheck(body(), bearer(await accessTokenFor({ aud: 'urn:someone:else' }))), 401, 'invalid_token');
  });

  it('refuses a token of another type (e.g. an ID token)', async () => {
    await expectProblem(await gateCheck(body(), bearer(await accessTokenFor({}, { typ: 'JWT' }))), 401, 'invalid_token');
  });

  it('refuses a token whose payload was changed', async () => {
    const [header, payload, signature] = (await accessTokenFor()).split('.');
    const claims = JSON.parse(atob(payload!.replaceAll('-', '+').replaceAll('_', '/')));
    const forged = btoa(JSON.stringify({ ...claims, role: 'admin' }))
      .replaceAll('+', '-')
      .replaceAll('/', '_')
      .replace(/=+$/, '');
    await expectProblem(await gateCheck(body(), bearer(`${header}.${forged}.${signature}`)), 401, 'invalid_token');
  });

  it('refuses a token without a role claim', async () => {
    await expectProblem(await gateCheck(body(), bearer(await accessTokenFor({ role: undefined }))), 401, 'invalid_token');
  });

  it('refuses an Authorization header that is not Bearer', async () => {
    await expectProblem(await gateCheck(body(), { authorization: 'Basic dXNlcjpwYXNz' }), 401, 'invalid_token');
  });

  it('answers 503, not 401, when the origin key set cannot be fetched', async () => {
    fetchSpy.mockRejectedValue(new TypeError('network down'));
    const response = await edgeFetch(GATE_PATH, jsonPost(body(), bearer(await accessTokenFor())), {
      settings: { ORIGIN_URL: 'https://unreachable.test' },
    });
    await expectProblem(response, 503, 'unavailable');
  });

  it('serves the origin keys from a cache rather than fetching per request', async () => {
    const token = await accessTokenFor({ role: 'admin' });
    fetchSpy.mockClear();
    for (let i = 0; i < 3; i++) expect((await gateCheck(body(), bearer(token))).status).toBe(200);
    expect(fetchSpy).not.toHaveBeenCalled();
  });
});
