import { SELF } from 'cloudflare:test';
import { limits } from '@vip/shared-schema';
import { describe, expect, it } from 'vitest';
import { EDGE, expectProblem } from './testing/edge.js';

/** What the HTTP layer refuses on the edge is problem+json with a code, like every other error. */
describe('transport limits at the edge', () => {
  it('414 uri_too_long for a query string over the limit, without echoing it', async () => {
    const response = await SELF.fetch(`${EDGE}/healthz?secret=${'a'.repeat(limits.urlMaxBytes)}`);
    const problem = await expectProblem(response, 414, 'uri_too_long');
    expect(problem.instance).toBe('/healthz');
    expect(JSON.stringify(problem)).not.toContain('secret');
  });

  it('431 headers_too_large for headers over the limit, on a route or not', async () => {
    const filler = { 'x-filler': 'b'.repeat(limits.headersMaxBytes) };
    await expectProblem(await SELF.fetch(`${EDGE}/healthz`, { headers: filler }), 431, 'headers_too_large');
    await expectProblem(await SELF.fetch(`${EDGE}/nowhere`, { method: 'POST', headers: filler, body: '{}' }), 431, 'headers_too_large');
  });

  it('admits a request just within both limits', async () => {
    const response = await SELF.fetch(`${EDGE}/healthz?pad=${'c'.repeat(limits.urlMaxBytes - 20)}`, {
      headers: { 'x-filler': 'd'.repeat(limits.headersMaxBytes - limits.urlMaxBytes - 500) },
    });
    expect(response.status).toBe(200);
  });
});
