import { SELF } from 'cloudflare:test';
import { DEMO_NO_REGISTRY_RECORD_VARIANT_A } from '@vip/shared-schema';
import { edgeRoutes } from '@vip/shared-schema/routes/edge';
import { describe, expect, it } from 'vitest';
import { expectDemoShowsTheGate, fetchDemo } from './testing/demo.js';
import { EDGE, edgeFetch, expectProblem, uniqueIp } from './testing/edge.js';

const DEMO_PATH = edgeRoutes.demo.path;
const UUID = expect.stringMatching(/^[0-9a-f-]{36}$/);

type Outcome = Record<string, unknown>;
interface DemoBody {
  example_request: { voice_id: string; platform_name: string; intended_use: string };
  response_schema: Outcome;
  possible_responses: { no_registry_record: Outcome; protected_no_license: Outcome; protected_licensed: Outcome };
}

describe('GET /api/v1/protect/demo/pre-synthesis-check (docs/CONTRACT.md#the-demo)', () => {
  it('Variant A: production schema with decision, license_status and consent_status', async () => {
    const body = await fetchDemo<DemoBody>();
    expect(body).toMatchObject({ demo: true, endpoint: 'POST /api/v1/protect/pre-synthesis-check' });
    expect(body.example_request).toMatchObject({ voice_id: UUID, platform_name: expect.any(String), intended_use: 'audiobook' });
    expect(body.response_schema).toEqual({ ...DEMO_NO_REGISTRY_RECORD_VARIANT_A, check_id: UUID });
    expect(body.response_schema).not.toHaveProperty('authorization_denied');
    const { no_registry_record, protected_no_license, protected_licensed } = body.possible_responses;
    expect(no_registry_record).toMatchObject({ action: 'no_registry_record', decision: 'unresolved', platform_decision_required: true });
    expect(protected_no_license).toMatchObject({ action: 'authorization_denied', decision: 'deny', license_status: 'unlicensed' });
    expect(protected_no_license.license_url).toBe(`https://origin.test/licensing?voice_id=${body.example_request.voice_id}`);
    expect(protected_licensed).toMatchObject({ action: 'authorized', decision: 'allow', license_status: 'licensed' });
  });

  it('needs no credentials and no enrolled voice in the default deployment', async () => {
    const response = await SELF.fetch(`${EDGE}${DEMO_PATH}`, { headers: { 'cf-connecting-ip': uniqueIp() } });
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ demo: true, variant: 'A' });
  });

  it('allows 100 requests per hour per IP, then answers 429 with Retry-After and RateLimit headers', async () => {
    const ip = uniqueIp();
    const pinned = Date.parse('2026-11-22T10:00:30Z');
    const call = () => edgeFetch(DEMO_PATH, { headers: { 'cf-connecting-ip': ip } }, { nowMs: pinned });
    const statuses: number[] = [];
    for (let i = 0; i < 100; i++) statuses.push((await call()).status);
    expect(statuses.every((status) => status === 200)).toBe(true);
    const refused = await call();
    expect((await expectProblem(refused, 429, 'rate_limited')).detail).toBe(
      'Limit of 100 demo calls from this address per 3600 s reached; try again in 3570 s.',
    );
    expect(refused.headers.get('retry-after')).toBe('3570');
    expect(refused.headers.get('ratelimit-policy')).toBe('"default";q=100;w=3600');
    expect(refused.headers.get('ratelimit')).toBe('"default";r=0;t=3570');
    expect((await edgeFetch(DEMO_PATH, { headers: { 'cf-connecting-ip': uniqueIp() } }, { nowMs: pinned })).status).toBe(200);
  });
});

describe("the demo's production_responses: what the gate itself answers", () => {
  it("parse as the gate's answers and carry exactly their fields (Variant B's: test/variant-b/conformance.test.ts)", async () => {
    await expectDemoShowsTheGate('A');
  });
});
