import { SELF } from 'cloudflare:test';
import { edgeLivenessSchema } from '@vip/shared-schema';
import { describe, expect, it } from 'vitest';
import { EDGE, uniqueIp } from './testing/edge.js';

describe('GET /healthz', () => {
  it('answers 200 ok with the deployed variant, without credentials', async () => {
    const response = await SELF.fetch(`${EDGE}/healthz`);
    expect(response.status).toBe(200);
    expect(edgeLivenessSchema.parse(await response.json())).toEqual({ status: 'ok', variant: 'A' });
  });

  it('is never rate-limited, so a probe cannot lock itself out', async () => {
    // More than the demo's 100 per hour from one address, the tightest limit of the public routes.
    const headers = { 'cf-connecting-ip': uniqueIp() };
    const statuses = new Set<number>();
    for (let i = 0; i < 120; i++) {
      const response = await SELF.fetch(`${EDGE}/healthz`, { headers });
      statuses.add(response.status);
      expect(response.headers.get('ratelimit')).toBeNull();
      await response.body?.cancel();
    }
    expect([...statuses]).toEqual([200]);
  });
});
