import { describe, expect, it } from 'vitest';
import { INTERNAL_HEADERS, signInternalRequest, verifyInternalRequest } from './internal-auth.js';

const secret = 'internal-secret-for-tests';
const now = 1_800_000_000;

async function verify(overrides: { body?: string; path?: string; at?: number; secret?: string } = {}) {
  const headers = await signInternalRequest(secret, 'POST', '/internal/v1/index-sync', '{"a":1}', now);
  return verifyInternalRequest(
    overrides.secret ?? secret,
    'POST',
    overrides.path ?? '/internal/v1/index-sync',
    overrides.body ?? '{"a":1}',
    { timestamp: headers[INTERNAL_HEADERS.timestamp], signature: headers[INTERNAL_HEADERS.signature] },
    overrides.at ?? now,
  );
}

describe('internal request signatures', () => {
  it('accepts a request signed with the shared secret', async () => {
    expect(await verify()).toBe('ok');
  });

  it('refuses a changed body, another path or another secret', async () => {
    expect(await verify({ body: '{"a":2}' })).toBe('bad_signature');
    expect(await verify({ path: '/internal/v1/audit' })).toBe('bad_signature');
    expect(await verify({ secret: 'another-secret' })).toBe('bad_signature');
  });

  it('refuses a request replayed after the allowed clock skew', async () => {
    expect(await verify({ at: now + 301 })).toBe('stale');
  });

  it('reports missing headers', async () => {
    expect(await verifyInternalRequest(secret, 'POST', '/x', '', { timestamp: null, signature: null }, now)).toBe('missing');
  });
});
