import { SELF } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import { EDGE } from '../testing/edge.js';

describe('GET /healthz on a Variant B deployment', () => {
  it('names variant B', async () => {
    const response = await SELF.fetch(`${EDGE}/healthz`);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ status: 'ok', variant: 'B' });
  });
});
