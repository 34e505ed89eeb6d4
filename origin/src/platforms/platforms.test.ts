import {
  API_KEY_PREFIX,
  apiKeyListSchema,
  createdApiKeySchema,
  PROBLEM_CONTENT_TYPE,
  pathOf,
  platformSchema,
  sha256Hex,
} from '@vip/shared-schema';
import {
  createApiKeyRoute,
  createPlatformRoute,
  listApiKeysRoute,
  listPlatformsRoute,
  revokeApiKeyRoute,
} from '@vip/shared-schema/routes/origin/platforms';
import { asc, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { edgeOutbox } from '../db/schema.js';
import { bearer, loggedIn, startTestOrigin, type TestOrigin } from '../testing/origin.js';

let origin: TestOrigin;
let adminToken: string;
beforeAll(async () => {
  origin = await startTestOrigin();
  adminToken = (await loggedIn(origin, 'admin')).accessToken;
});
afterAll(() => origin?.close());

const call = (method: 'GET' | 'POST' | 'DELETE', url: string, payload?: unknown, token = adminToken) =>
  origin.app.inject({ method, url, headers: bearer(token), ...(payload === undefined ? {} : { payload: payload as object }) });

let platformCounter = 0;
async function createPlatform() {
  const name = `Platform ${Date.now()} ${++platformCounter}`;
  const response = await call('POST', pathOf(createPlatformRoute), { name });
  expect(response.statusCode).toBe(201);
  return platformSchema.parse(response.json());
}

const outboxRowsFor = (keyHash: string) =>
  origin.database.db.select().from(edgeOutbox).where(eq(edgeOutbox.entityKey, keyHash)).orderBy(asc(edgeOutbox.id));

describe('platforms', () => {
  it('creates a platform and lists it', async () => {
    const platform = await createPlatform();
    expect(platform.name).toMatch(/^Platform /);
    const list = await call('GET', pathOf(listPlatformsRoute));
    expect(list.statusCode).toBe(200);
    expect(list.json().platforms).toContainEqual(platform);
  });

  it('refuses a second platform of the same name with 409 conflict', async () => {
    const platform = await createPlatform();
    const response = await call('POST', pathOf(createPlatformRoute), { name: platform.name });
    expect(response.statusCode).toBe(409);
    expect(response.json().code).toBe('conflict');
  });

  it('refuses an unknown field with 422 and names it', async () => {
    const response = await call('POST', pathOf(createPlatformRoute), { name: 'Fine name', owner: 'me' });
    expect(response.statusCode).toBe(422);
    expect(response.json().errors).toEqual([{ field: 'body.owner', message: 'unknown field' }]);
  });

  it('is for admins only', async () => {
    const owner = await loggedIn(origin, 'owner');
    const response = await call('POST', pathOf(createPlatformRoute), { name: 'Sneaky' }, owner.accessToken);
    expect(response.statusCode).toBe(403);
    expect(response.json().code).toBe('forbidden');
  });
});

describe('API keys', () => {
  it('shows a new key once, lists it without its secret, and revokes it', async () => {
    const platform = await createPlatform();
    const created = await call('POST', pathOf(createApiKeyRoute, { platform_id: platform.platform_id }), {});
    expect(created.statusCode).toBe(201);
    const key = createdApiKeySchema.parse(created.json());
    expect(key.api_key).toMatch(/^vip_[A-Za-z0-9_-]{43}$/);

    const listed = await call('GET', pathOf(listApiKeysRoute, { platform_id: platform.platform_id }));
    expect(listed.statusCode).toBe(200);
    const { api_keys } = apiKeyListSchema.parse(listed.json());
    expect(api_keys).toEqual([
      {
        key_id: key.key_id,
        platform_id: platform.platform_id,
        prefix: key.api_key.slice(0, API_KEY_PREFIX.length + 8),
        created_at: key.created_at,
        revoked_at: null,
      },
    ]);
    expect(listed.body).not.toContain(key.api_key);
    expect(listed.body).not.toContain(await sha256Hex(key.api_key));

    const revoked = await call('DELETE', pathOf(revokeApiKeyRoute, { platform_id: platform.platform_id, key_id: key.key_id }));
    expect(revoked.statusCode).toBe(200);
    expect(revoked.json()).toEqual({ key_id: key.key_id, revoked: true });
    const after = apiKeyListSchema.parse((await call('GET', pathOf(listApiKeysRoute, { platform_id: platform.platform_id }))).json());
    expect(after.api_keys[0]!.revoked_at).not.toBeNull();
  });

  it('accepts a create request without a body', async () => {
    const platform = await createPlatform();
    const created = await origin.app.inject({
      method: 'POST',
      url: pathOf(createApiKeyRoute, { platform_id: platform.platform_id }),
      headers: bearer(adminToken),
    });
    expect(created.statusCode).toBe(201);
  });

  it('publishes creation and revocation to the edge outbox with growing versions, in the same commit', async () => {
    const platform = await createPlatform();
    const key = createdApiKeySchema.parse(
      (await call('POST', pathOf(createApiKeyRoute, { platform_id: platform.platform_id }), {})).json(),
    );
    const keyHash = await sha256Hex(key.api_key);
    await call('DELETE', pathOf(revokeApiKeyRoute, { platform_id: platform.platform_id, key_id: key.key_id }));

    const rows = await outboxRowsFor(keyHash);
    expect(rows).toHaveLength(2);
    expect(rows[1]!.id).toBeGreaterThan(rows[0]!.id);
    const record = { key_id: key.key_id, platform_id: platform.platform_id, platform_name: platform.name };
    expect(rows.map((row) => row.payload)).toEqual([
      { kind: 'api_key', key_hash: keyHash, record: { ...record, revoked: false } },
      { kind: 'api_key', key_hash: keyHash, record: { ...record, revoked: true } },
    ]);
    expect(rows.every((row) => row.deliveredAt === null)).toBe(true);
  });

  it('answers a second revocation with 200 and publishes nothing more', async () => {
    const platform = await createPlatform();
    const key = createdApiKeySchema.parse(
      (await call('POST', pathOf(createApiKeyRoute, { platform_id: platform.platform_id }), {})).json(),
    );
    const url = pathOf(revokeApiKeyRoute, { platform_id: platform.platform_id, key_id: key.key_id });
    await call('DELETE', url);
    const again = await call('DELETE', url);
    expect(again.statusCode).toBe(200);
    expect(again.json()).toEqual({ key_id: key.key_id, revoked: true });
    expect(await outboxRowsFor(await sha256Hex(key.api_key))).toHaveLength(2);
  });

  it('answers 404 not_found for an unknown platform or a key of another platform', async () => {
    const unknown = await call('POST', pathOf(createApiKeyRoute, { platform_id: crypto.randomUUID() }), {});
    expect(unknown.statusCode).toBe(404);
    expect(unknown.headers['content-type']).toContain(PROBLEM_CONTENT_TYPE);
    expect(unknown.json().code).toBe('not_found');

    const [a, b] = [await createPlatform(), await createPlatform()];
    const key = createdApiKeySchema.parse((await call('POST', pathOf(createApiKeyRoute, { platform_id: a.platform_id }), {})).json());
    const crossed = await call('DELETE', pathOf(revokeApiKeyRoute, { platform_id: b.platform_id, key_id: key.key_id }));
    expect(crossed.statusCode).toBe(404);
    expect((await call('GET', pathOf(listApiKeysRoute, { platform_id: crypto.randomUUID() }))).statusCode).toBe(404);
  });

  it('refuses a malformed platform id with 422 naming the parameter', async () => {
    const response = await call('GET', pathOf(listApiKeysRoute, { platform_id: 'not-a-uuid' }));
    expect(response.statusCode).toBe(422);
    expect(response.json().errors).toEqual([{ field: 'params.platform_id', message: expect.any(String) }]);
  });
});
