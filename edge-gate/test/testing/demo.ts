import { approvedResultSchema, blockedResultSchema, noRegistryRecordResultSchema } from '@vip/shared-schema';
import { edgeRoutes } from '@vip/shared-schema/routes/edge';
import { expect } from 'vitest';
import {
  edgeFetch,
  GATE_PATH,
  jsonPost,
  licensedVoice,
  newId,
  newPlatformKey,
  publishVoice,
  uniqueIp,
  uniqueName,
  voiceRecord,
} from './edge.js';

type Outcome = Record<string, unknown>;
interface DemoProductionResponses {
  example_request: { voice_id: string };
  production_responses: { approved: Outcome; blocked: Outcome; no_registry_record: Outcome };
}

/** The gate's real answers for each outcome in this deployment: an approval, a block for want of a licence, no record. */
async function realAnswers(variant: 'A' | 'B') {
  const platform = variant === 'A' ? await newPlatformKey() : { platformName: uniqueName('Public Platform'), apiKey: undefined };
  const headers: Record<string, string> = platform.apiKey ? { 'x-api-key': platform.apiKey } : { 'cf-connecting-ip': uniqueIp() };
  const check = async (voiceId: string) => {
    const body = { voice_id: voiceId, platform_name: platform.platformName, intended_use: 'audiobook' };
    const response = await edgeFetch(GATE_PATH, jsonPost(body, headers));
    expect(response.status).toBe(200);
    return (await response.json()) as Outcome;
  };
  const unlicensed = voiceRecord();
  await publishVoice(unlicensed);
  return {
    approved: await check((await licensedVoice(platform.platformName)).voiceId),
    blocked: await check(unlicensed.voice_id),
    no_registry_record: await check(newId()),
  };
}

/** The demo's answer in this deployment, to a fresh address. */
export async function fetchDemo<Body>(): Promise<Body> {
  const response = await edgeFetch(edgeRoutes.demo.path, { headers: { 'cf-connecting-ip': uniqueIp() } });
  expect(response.status).toBe(200);
  return (await response.json()) as Body;
}

/**
 * The demo's `production_responses` parse as the gate's answers and carry exactly the fields the
 * gate of this deployment answers (`variant` is the one its project deploys: Variant A in
 * edge-gate's own project, B in `edge-gate:variant-b`).
 */
export async function expectDemoShowsTheGate(variant: 'A' | 'B'): Promise<void> {
  const body = await fetchDemo<DemoProductionResponses & { variant: string }>();
  expect(body.variant).toBe(variant);
  const shown = body.production_responses;
  expect(approvedResultSchema.parse(shown.approved)).toEqual(shown.approved);
  expect(blockedResultSchema.parse(shown.blocked)).toEqual(shown.blocked);
  expect(noRegistryRecordResultSchema.parse(shown.no_registry_record)).toEqual(shown.no_registry_record);
  expect(shown.blocked).toMatchObject({ reason: 'no_license', voice_id: body.example_request.voice_id });
  expect(shown.blocked.license_url).toBe(`https://origin.test/licensing?voice_id=${body.example_request.voice_id}`);

  const real = await realAnswers(variant);
  for (const outcome of ['approved', 'blocked', 'no_registry_record'] as const) {
    expect(Object.keys(shown[outcome]).sort(), outcome).toEqual(Object.keys(real[outcome]).sort());
    for (const field of ['status', 'action', 'consented', 'licensed', 'authorization_denied', 'platform_decision_required'] as const) {
      expect(shown[outcome][field], `${outcome}.${field}`).toEqual(real[outcome][field]);
    }
  }
  // Variant A carries the token under both names until the alias's sunset; Variant B only approval_token.
  expect('authorization_token' in shown.approved).toBe(variant === 'A');
}
