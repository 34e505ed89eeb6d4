import { SELF } from 'cloudflare:test';
import { limits } from '@vip/shared-schema';
import { edgeRoutes } from '@vip/shared-schema/routes/edge';
import { describe, expect, it } from 'vitest';
import { EDGE, expectProblem, GATE_PATH, newPlatformKey } from './testing/edge.js';

async function post(body: string, headers: Record<string, string>) {
  return SELF.fetch(`${EDGE}${GATE_PATH}`, { method: 'POST', headers, body });
}

describe('problem+json on every error', () => {
  it('answers an unknown route with 404 route_not_found', async () => {
    const problem = await expectProblem(await SELF.fetch(`${EDGE}/api/v1/nowhere`), 404, 'route_not_found');
    expect(problem.instance).toBe('/api/v1/nowhere');
  });

  it('answers a known path with the wrong method with 405 and Allow', async () => {
    const response = await SELF.fetch(`${EDGE}${GATE_PATH}`);
    await expectProblem(response, 405, 'method_not_allowed');
    expect(response.headers.get('allow')).toBe('POST');
  });

  it('refuses a body over the JSON limit with 413', async () => {
    const key = await newPlatformKey();
    const huge = JSON.stringify({ padding: 'x'.repeat(limits.jsonBodyMaxBytes) });
    await expectProblem(await post(huge, { 'content-type': 'application/json', 'x-api-key': key.apiKey }), 413, 'payload_too_large');
  });

  it('refuses a body that is not JSON with 415', async () => {
    const key = await newPlatformKey();
    const response = await post('voice_id=x', { 'content-type': 'application/x-www-form-urlencoded', 'x-api-key': key.apiKey });
    await expectProblem(response, 415, 'unsupported_media_type');
  });

  it('refuses malformed JSON with 422 malformed_json', async () => {
    const key = await newPlatformKey();
    await expectProblem(await post('{"voice_id":', { 'content-type': 'application/json', 'x-api-key': key.apiKey }), 422, 'malformed_json');
  });

  it('names every invalid and unknown field in a 422', async () => {
    const key = await newPlatformKey();
    const body = JSON.stringify({ voice_id: 'nope', platform_name: key.platformName, intended_use: 'karaoke', surprise: 1 });
    const problem = await expectProblem(
      await post(body, { 'content-type': 'application/json', 'x-api-key': key.apiKey }),
      422,
      'validation_failed',
    );
    const fields = (problem.errors as { field: string }[]).map((error) => error.field);
    expect(fields).toEqual(expect.arrayContaining(['body.voice_id', 'body.intended_use', 'body.surprise']));
  });

  it('keeps a well-formed x-request-id and replaces a malformed one', async () => {
    const kept = await SELF.fetch(`${EDGE}/openapi.json`, { headers: { 'x-request-id': 'trace-1234-abcd' } });
    expect(kept.headers.get('x-request-id')).toBe('trace-1234-abcd');
    const replaced = await SELF.fetch(`${EDGE}/openapi.json`, { headers: { 'x-request-id': 'bad id with spaces' } });
    expect(replaced.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  });
});

describe('GET /openapi.json and /docs', () => {
  it('documents every public edge route in OpenAPI 3.1, and not the origin-edge routes', async () => {
    const response = await SELF.fetch(`${EDGE}/openapi.json`);
    expect(response.status).toBe(200);
    const document = (await response.json()) as { openapi: string; paths: Record<string, Record<string, unknown>> };
    expect(document.openapi).toBe('3.1.0');
    const internal: unknown[] = [edgeRoutes.indexSync, edgeRoutes.auditPull, edgeRoutes.auditLookup];
    for (const route of Object.values(edgeRoutes)) {
      expect(document.paths[route.path]?.[route.method], route.path).toEqual(internal.includes(route) ? undefined : expect.anything());
    }
    expect(JSON.stringify(document)).not.toContain('/internal/');
  });

  it("explains the gate's request and answer: each field in a line, an example of each, formats by name", async () => {
    type Media = { schema: { $ref?: string; properties?: Record<string, { description?: string }> }; example?: Record<string, unknown> };
    const document = (await (await SELF.fetch(`${EDGE}/openapi.json`)).json()) as {
      paths: Record<
        string,
        Record<string, { requestBody: { content: Record<string, Media> }; responses: Record<string, { content: Record<string, Media> }> }>
      >;
      components: { schemas: Record<string, { properties: Record<string, { description?: string; format?: string; pattern?: string }> }> };
    };
    const gate = document.paths[edgeRoutes.preSynthesisCheck.path]!.post!;
    const request = gate.requestBody.content['application/json']!;
    expect(request.example).toMatchObject({
      voice_id: expect.any(String),
      platform_name: expect.any(String),
      intended_use: expect.any(String),
    });
    expect(gate.responses['200']!.content['application/json']!.example).toBeDefined();
    const fields = document.components.schemas.PreSynthesisCheckRequest!.properties;
    expect(Object.values(fields).filter((field) => !field.description)).toEqual([]);
    expect(fields.voice_id).toMatchObject({ format: 'uuid' });
    expect(fields.voice_id).not.toHaveProperty('pattern');
  });

  it('serves its icon where browsers ask for it', async () => {
    const response = await SELF.fetch(`${EDGE}/favicon.ico`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('image/svg+xml');
    expect(await response.text()).toMatch(/^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg"/);
  });

  it('points from the bare address to the reference', async () => {
    const response = await SELF.fetch(`${EDGE}/`);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ service: expect.stringContaining('edge gate'), docs: '/docs', openapi: '/openapi.json' });
  });

  it("serves the reference page: the edge's document, drawn by the renderer the origin serves, no inline code", async () => {
    const response = await SELF.fetch(`${EDGE}/docs`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toContain('text/html');
    const csp = response.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("script-src 'self' https://origin.test;");
    expect(csp).toContain("connect-src 'self';");
    expect(csp).not.toContain('unsafe');
    const html = await response.text();
    expect(html).toContain('data-openapi="/openapi.json"');
    expect(html).toContain('<script src="https://origin.test/docs/assets/swagger-ui-bundle.js" defer></script>');
    expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
  });
});

describe('GET /.well-known/jwks.json', () => {
  it('publishes the authorization-token key without its private part', async () => {
    const response = await SELF.fetch(`${EDGE}/.well-known/jwks.json`);
    expect(response.status).toBe(200);
    const { keys } = (await response.json()) as { keys: Record<string, unknown>[] };
    expect(keys).toHaveLength(1);
    expect(keys[0]).toMatchObject({ kty: 'OKP', crv: 'Ed25519', alg: 'EdDSA', use: 'sig', kid: 'edge-test-key' });
    expect(keys[0]).not.toHaveProperty('d');
  });
});
