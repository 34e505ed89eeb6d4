import { limits, PROBLEM_CONTENT_TYPE, pathOf, problemSchema } from '@vip/shared-schema';
import { loginRoute } from '@vip/shared-schema/routes/origin/auth';
import { listPlatformsRoute } from '@vip/shared-schema/routes/origin/platforms';
import { checkPlatformNameRoute } from '@vip/shared-schema/routes/origin/registry/licenses';
import { setSynthesisConsentRoute } from '@vip/shared-schema/routes/origin/registry/synthesis-consent';
import { listVoicesRoute } from '@vip/shared-schema/routes/origin/voices';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loggedIn, startTestOrigin, type TestOrigin } from '../testing/origin.js';
import { PATH_PARAMETER_MAX_LENGTH } from './routes.js';

let origin: TestOrigin;
beforeAll(async () => {
  origin = await startTestOrigin();
});
afterAll(() => origin?.close());

/** Every error answer: problem+json of the shared shape, the code asked for, and the request id echoed. */
function expectProblem(response: LightMyRequestResponse, status: number, code: string) {
  expect(response.statusCode).toBe(status);
  expect(response.headers['content-type']).toContain(PROBLEM_CONTENT_TYPE);
  const problem = problemSchema.parse(response.json());
  expect(problem).toMatchObject({ status, code, type: `urn:vip:problem:${code}` });
  expect(problem.request_id).toBe(response.headers['x-request-id']);
  return problem;
}

const LOGIN = pathOf(loginRoute);

describe('problem+json on every error path', () => {
  it('404 route_not_found for an unknown route', async () => {
    const problem = expectProblem(await origin.app.inject({ method: 'GET', url: '/api/v1/nothing-here?secret=x' }), 404, 'route_not_found');
    expect(problem.instance).toBe('/api/v1/nothing-here');
  });

  it('405 method_not_allowed with Allow for a known path and the wrong method', async () => {
    const response = await origin.app.inject({ method: 'PUT', url: LOGIN });
    expectProblem(response, 405, 'method_not_allowed');
    expect(response.headers.allow).toBe('POST');
  });

  it('413 payload_too_large for a JSON body over the limit', async () => {
    const payload = JSON.stringify({ email: 'a@example.com', password: 'x'.repeat(limits.jsonBodyMaxBytes) });
    expectProblem(
      await origin.app.inject({ method: 'POST', url: LOGIN, payload, headers: { 'content-type': 'application/json' } }),
      413,
      'payload_too_large',
    );
  });

  it('415 unsupported_media_type for a body that is not JSON', async () => {
    expectProblem(
      await origin.app.inject({
        method: 'POST',
        url: LOGIN,
        payload: 'email=a',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      }),
      415,
      'unsupported_media_type',
    );
    expectProblem(
      await origin.app.inject({ method: 'POST', url: LOGIN, payload: 'hello', headers: { 'content-type': 'text/plain' } }),
      415,
      'unsupported_media_type',
    );
  });

  it('422 malformed_json for a body that does not parse, or is empty', async () => {
    const headers = { 'content-type': 'application/json' };
    expectProblem(await origin.app.inject({ method: 'POST', url: LOGIN, payload: '{"email": ', headers }), 422, 'malformed_json');
    expectProblem(await origin.app.inject({ method: 'POST', url: LOGIN, payload: '', headers }), 422, 'malformed_json');
  });

  it('422 validation_failed with one entry per field, unknown fields included', async () => {
    const response = await origin.app.inject({
      method: 'POST',
      url: LOGIN,
      payload: { email: 'not-an-email', password: 'x', admin: true },
    });
    const problem = expectProblem(response, 422, 'validation_failed');
    expect(problem.errors).toEqual(
      expect.arrayContaining([
        { field: 'body.email', message: expect.any(String) },
        { field: 'body.admin', message: 'unknown field' },
      ]),
    );
  });

  it('422 malformed_json for JSON prototype poisoning', async () => {
    const payload = '{"email":"a@example.com","password":"x","__proto__":{"role":"admin"}}';
    expectProblem(
      await origin.app.inject({ method: 'POST', url: LOGIN, payload, headers: { 'content-type': 'application/json' } }),
      422,
      'malformed_json',
    );
  });

  it('says what to send instead of a body it cannot read, and names the part of the request that is invalid', async () => {
    const json = { 'content-type': 'application/json' };
    const malformed = expectProblem(
      await origin.app.inject({ method: 'POST', url: LOGIN, payload: '{"email": ', headers: json }),
      422,
      'malformed_json',
    );
    expect(malformed.detail).toMatch(/Send one JSON object, with names and strings in double quotes.*\/docs/);
    const empty = expectProblem(await origin.app.inject({ method: 'POST', url: LOGIN, payload: '', headers: json }), 422, 'malformed_json');
    expect(empty.detail).toContain('Send a JSON object, or leave Content-Type out');
    const form = { 'content-type': 'application/x-www-form-urlencoded' };
    const wrongType = expectProblem(
      await origin.app.inject({ method: 'POST', url: LOGIN, payload: 'email=a', headers: form }),
      415,
      'unsupported_media_type',
    );
    expect(wrongType.detail).toContain('Content-Type: application/json');

    const owner = await loggedIn(origin);
    const badParam = expectProblem(
      await origin.app.inject({
        method: 'PUT',
        url: pathOf(setSynthesisConsentRoute, { voice_id: 'not-a-voice-id' }),
        headers: { authorization: `Bearer ${owner.accessToken}` },
        payload: { status: 'granted' },
      }),
      422,
      'validation_failed',
    );
    expect(badParam.detail).toBe('A path parameter is invalid: `errors` names each field and what is wrong with it.');
    expect(badParam.errors?.map((error) => error.field)).toEqual(['params.voice_id']);
  });

  it('401 invalid_token says how to get a token that works', async () => {
    const call = (authorization: string) => origin.app.inject({ method: 'GET', url: pathOf(listVoicesRoute), headers: { authorization } });
    const notBearer = expectProblem(await call('Token abc'), 401, 'invalid_token');
    expect(notBearer.detail).toContain('Authorization: Bearer <access_token>');
    const forged = expectProblem(await call('Bearer eyJhbGciOiJub25lIn0.e30.'), 401, 'invalid_token');
    expect(forged.detail).toMatch(
      /not an access token of this service\. Get a new one with POST \/api\/v1\/auth\/refresh .* POST \/api\/v1\/auth\/login/,
    );
    const owner = await loggedIn(origin);
    origin.runtime.advance((limits.accessTokenTtlSeconds + 60) * 1000);
    try {
      const expired = expectProblem(await call(`Bearer ${owner.accessToken}`), 401, 'invalid_token');
      expect(expired.detail).toMatch(
        /^The access token has expired \(access tokens last 15 minutes\)\. Get a new one with POST \/api\/v1\/auth\/refresh/,
      );
    } finally {
      origin.runtime.advance(-(limits.accessTokenTtlSeconds + 60) * 1000);
    }
  });

  it('422 validation_failed for a path parameter longer than any route accepts, before its route runs', async () => {
    const tooLong = 'A'.repeat(PATH_PARAMETER_MAX_LENGTH + 1);
    for (const url of [
      pathOf(checkPlatformNameRoute, { platform_name: tooLong }),
      // Under a path no GET route serves, so the router alone answers.
      `/api/v1/voices/${'x'.repeat(5000)}`,
    ]) {
      // No credentials: the router refuses it before the route's guard would answer 401.
      const problem = expectProblem(await origin.app.inject({ method: 'GET', url }), 422, 'validation_failed');
      expect(problem.instance).toBe(url);
      expect(problem.detail).toContain(`${PATH_PARAMETER_MAX_LENGTH} characters`);
    }
  });

  it('sets that limit at the longest path parameter a route documents (a wildcard, which the router does not measure, aside)', async () => {
    type PathParameter = { in: string; schema: { format?: string; maxLength?: number } };
    const document = (await origin.app.inject({ method: 'GET', url: '/openapi.json' })).json() as {
      paths: Record<string, Record<string, { parameters?: PathParameter[] }>>;
    };
    const wildcardPaths = origin.routeTable.routes
      .filter((route) => route.url.endsWith('*'))
      .map((route) => route.url.replace(/\/\*$/, ''));
    const longest = Object.entries(document.paths)
      .filter(([path]) => !wildcardPaths.some((prefix) => path.startsWith(`${prefix}/{`)))
      .flatMap(([, operations]) => Object.values(operations).flatMap((operation) => operation.parameters ?? []))
      .filter((parameter) => parameter.in === 'path')
      .map(({ schema }) => (schema.format === 'uuid' ? 36 : schema.maxLength));
    expect(longest).not.toContain(undefined);
    expect(Math.max(...(longest as number[]))).toBe(PATH_PARAMETER_MAX_LENGTH);
  });

  it('404 route_not_found for a path whose percent-encoding is broken', async () => {
    expectProblem(
      await origin.app.inject({ method: 'GET', url: checkPlatformNameRoute.path.replace('{platform_name}', '%E0%A4%A') }),
      404,
      'route_not_found',
    );
  });

  it('logs a line for a request the router refuses, without its URL', async () => {
    origin.logs.length = 0;
    const response = await origin.app.inject({ method: 'GET', url: `/api/v1/voices/secret-${'x'.repeat(5000)}` });
    const lines = origin.logs.map((line) => JSON.parse(line));
    expect(lines).toContainEqual(
      expect.objectContaining({ msg: 'request', request_id: response.headers['x-request-id'], route: '(unmatched)', status: 422 }),
    );
    expect(origin.logs.join('')).not.toContain('secret-');
  });

  it('401 authentication_required without credentials', async () => {
    expectProblem(await origin.app.inject({ method: 'GET', url: pathOf(listPlatformsRoute) }), 401, 'authentication_required');
  });
});

describe('request ids', () => {
  it('keeps a well-formed x-request-id and echoes it', async () => {
    const response = await origin.app.inject({ method: 'GET', url: '/nope', headers: { 'x-request-id': 'trace-abc-12345' } });
    expect(response.headers['x-request-id']).toBe('trace-abc-12345');
    expect(response.json().request_id).toBe('trace-abc-12345');
  });

  it('replaces a malformed one with a fresh UUID', async () => {
    const response = await origin.app.inject({ method: 'GET', url: '/nope', headers: { 'x-request-id': 'bad id <script>' } });
    expect(response.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('sets one on successful answers too', async () => {
    const response = await origin.app.inject({ method: 'GET', url: '/.well-known/jwks.json' });
    expect(response.statusCode).toBe(200);
    expect(response.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
  });
});
