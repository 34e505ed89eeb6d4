import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { expect } from 'vitest';
import { eventually, json, post, type RunningPlanes, startPlanes } from '../support/service.js';
import { ENROLL_CLIPS } from '../support/speech.js';

/** What every fault test sets up before it injects its fault: an admin, a platform with a key, an owner. */
export interface Registry {
  originUrl: string;
  edgeUrl: string;
  admin: { email: string; password: string };
  adminToken: string;
  platformName: string;
  apiKey: string;
  ownerToken: string;
}

export const GATE_PATH = '/api/v1/protect/pre-synthesis-check';
export const REDEEM_PATH = '/api/v1/protect/authorizations/redeem';

/** Admin credentials a test passes to the planes (ADMIN_EMAIL / ADMIN_PASSWORD) and logs in with. */
export function adminFor(label: string) {
  return { email: `admin@${label}.faults.example`, password: `${label}-faults-admin-password` };
}

export async function setUpRegistry(originUrl: string, edgeUrl: string, admin: { email: string; password: string }): Promise<Registry> {
  const login = await post(`${originUrl}/api/v1/auth/login`, admin);
  expect(login.status).toBe(200);
  const adminToken = (await json(login)).access_token as string;
  const asAdmin = { authorization: `Bearer ${adminToken}` };
  const platformName = `faults-${randomUUID().slice(0, 8)}`;
  const platform = await post(`${originUrl}/api/v1/platforms`, { name: platformName }, asAdmin);
  expect(platform.status).toBe(201);
  const key = await post(`${originUrl}/api/v1/platforms/${(await json(platform)).platform_id}/api-keys`, {}, asAdmin);
  expect(key.status).toBe(201);
  const apiKey = (await json(key)).api_key as string;
  const owner = { email: `owner-${randomUUID().slice(0, 8)}@faults.example`, password: 'faults-owner-password-long' };
  expect((await post(`${originUrl}/api/v1/auth/register`, owner)).status).toBe(201);
  const ownerToken = (await json(await post(`${originUrl}/api/v1/auth/login`, owner))).access_token as string;
  const registry = { originUrl, edgeUrl, admin, adminToken, platformName, apiKey, ownerToken };
  // The key reaches the edge through the outbox; wait for it so the fault starts from a settled state.
  await eventually(async () => (await gateCheck(registry, randomUUID())).status === 200, 10_000);
  return registry;
}

/**
 * The two planes of a fault test, started as `npm start` starts them with an admin of `label`, and
 * its registry set up. The test stops them; a failed run keeps the data folder (and planes.log).
 */
export async function startFaultRegistry(label: string): Promise<{ service: RunningPlanes; registry: Registry }> {
  const admin = adminFor(label);
  const service = await startPlanes({ env: { ADMIN_EMAIL: admin.email, ADMIN_PASSWORD: admin.password } });
  return { service, registry: await setUpRegistry(service.originUrl, service.edgeUrl, admin) };
}

/** Enrolls a voice of the owner (biometric consent first); its synthesis consent starts `unknown`. */
export async function enrollVoice(registry: Registry, name: string): Promise<string> {
  const asOwner = { authorization: `Bearer ${registry.ownerToken}` };
  const consent = await post(
    `${registry.originUrl}/api/v1/consents`,
    { type: 'biometric', statement_version: '2026-01', accepted: true },
    asOwner,
  );
  expect(consent.status).toBe(201);
  const form = new FormData();
  form.set('name', name);
  form.set('consent_id', (await json(consent)).consent_id as string);
  for (const path of ENROLL_CLIPS) {
    form.append('audio', new Blob([await readFile(path)], { type: 'audio/ogg' }), path.split('/').at(-1));
  }
  const enrolled = await fetch(`${registry.originUrl}/api/v1/voices/enroll`, { method: 'POST', headers: asOwner, body: form });
  expect(enrolled.status, await enrolled.clone().text()).toBe(201);
  return (await json(enrolled)).voice_id as string;
}

export async function setSynthesisConsent(registry: Registry, voiceId: string, status: 'active' | 'withdrawn'): Promise<Response> {
  return fetch(`${registry.originUrl}/api/v1/voices/${voiceId}/consent`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${registry.ownerToken}` },
    body: JSON.stringify({ status }),
  });
}

export function createLicense(registry: Registry, voiceId: string, scopes: string[] = ['audiobook']): Promise<Response> {
  return post(
    `${registry.originUrl}/api/v1/voices/${voiceId}/licenses`,
    { platform_name: registry.platformName, scopes, expires_at: new Date(Date.now() + 30 * 86_400_000).toISOString() },
    { authorization: `Bearer ${registry.ownerToken}` },
  );
}

/** Enrolls a voice, grants synthesis consent and an `audiobook` licence, and waits until the gate approves it. */
export async function approvedVoice(registry: Registry, name: string): Promise<string> {
  const voiceId = await enrollVoice(registry, name);
  expect((await setSynthesisConsent(registry, voiceId, 'active')).status).toBe(200);
  expect((await createLicense(registry, voiceId)).status).toBe(201);
  await eventually(async () => (await json(await gateCheck(registry, voiceId))).status === 'approved', 10_000);
  return voiceId;
}

export function gateCheck(registry: Registry, voiceId: string, intendedUse = 'audiobook'): Promise<Response> {
  return post(
    `${registry.edgeUrl}${GATE_PATH}`,
    { voice_id: voiceId, platform_name: registry.platformName, intended_use: intendedUse },
    { 'x-api-key': registry.apiKey },
  );
}

export function redeem(registry: Registry, token: string): Promise<Response> {
  return post(`${registry.edgeUrl}${REDEEM_PATH}`, { token }, { 'x-api-key': registry.apiKey });
}

/** The chain's entries for one check_id, as the admin sees them (0 or 1). */
export async function auditEntries(registry: Registry, checkId: string): Promise<Record<string, unknown>[]> {
  const response = await fetch(`${registry.originUrl}/api/v1/protect/audit-log?check_id=${checkId}`, {
    headers: { authorization: `Bearer ${registry.adminToken}` },
  });
  expect(response.status).toBe(200);
  return ((await response.json()) as { entries: Record<string, unknown>[] }).entries;
}

/** Every entry the admin sees that matches `query` (audit-log filters), all pages. */
export async function auditLog(registry: Registry, query: Record<string, string>): Promise<Record<string, unknown>[]> {
  const entries: Record<string, unknown>[] = [];
  let cursor: string | null = null;
  do {
    const params = new URLSearchParams({ ...query, limit: '1000', ...(cursor ? { cursor } : {}) });
    const response = await fetch(`${registry.originUrl}/api/v1/protect/audit-log?${params}`, {
      headers: { authorization: `Bearer ${registry.adminToken}` },
    });
    expect(response.status).toBe(200);
    const page = (await response.json()) as { entries: Record<string, unknown>[]; next_cursor: string | null };
    entries.push(...page.entries);
    cursor = page.next_cursor;
  } while (cursor);
  return entries;
}

/**
 * Waits until every check_id (decisions and redemptions of the registry's platform) is in the chain;
 * returns those still missing at the deadline: the records lost.
 */
export async function missingFromChain(registry: Registry, checkIds: readonly string[], timeoutMs: number): Promise<string[]> {
  let missing = [...checkIds];
  const deadline = Date.now() + timeoutMs;
  while (missing.length > 0) {
    const chained = new Set((await auditLog(registry, { platform_name: registry.platformName })).map((entry) => entry.check_id));
    missing = missing.filter((id) => !chained.has(id));
    if (missing.length === 0 || Date.now() > deadline) break;
    await new Promise((r) => setTimeout(r, 250));
  }
  return missing;
}

export async function verifyChain(registry: Registry): Promise<Record<string, unknown>> {
  const response = await fetch(`${registry.originUrl}/api/v1/protect/audit-log/verify`, {
    headers: { authorization: `Bearer ${registry.adminToken}` },
  });
  expect(response.status).toBe(200);
  return json(response);
}
