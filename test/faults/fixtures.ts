import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { BIOMETRIC_CONSENT_STATEMENT, limits } from '@vip/shared-schema';
import { expect } from 'vitest';
import { createScratchServerDatabase } from '../../origin/src/testing/database.js';
import { eventually, json, type PlanesOptions, post, type RunningPlanes, startPlanes } from '../support/service.js';
import { ENROLL_CLIPS } from '../support/speech.js';
import { REPLICAS } from './catalogue.js';

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
export async function startFaultRegistry(
  label: string,
  options: PlanesOptions = {},
): Promise<{ service: RunningPlanes; registry: Registry }> {
  const admin = adminFor(label);
  const service = await startPlanes({ ...options, env: { ADMIN_EMAIL: admin.email, ADMIN_PASSWORD: admin.password, ...options.env } });
  return { service, registry: await setUpRegistry(service.originUrl, service.edgeUrl, admin) };
}

/** The Postgres server the replica cases run on: CI's (.ci/provision-postgres.sh), through TEST_DATABASE_URL. */
const SERVER_URL = process.env.TEST_DATABASE_URL;

/** Why the replica cases cannot run here, or null when they can. */
export const replicaServerUnavailable: string | null = SERVER_URL
  ? null
  : 'TEST_DATABASE_URL is not set (a Postgres server with pgvector; .ci/provision-postgres.sh makes one)';

/** A replica case's service: its planes and registry, on a database of its own on that server. */
export interface ReplicatedRegistry {
  service: RunningPlanes;
  registry: Registry;
  /** Stops the planes and drops the database; `passed` also deletes the data folder (a failed run keeps planes.log). */
  stop(passed: boolean): Promise<void>;
}

/**
 * `startFaultRegistry` on `REPLICAS` origin replicas, as `npm start -- --replicas` runs them, on an
 * empty database of the test's own on the CI's server (the start migrates it).
 */
export async function startReplicatedRegistry(label: string, options: PlanesOptions = {}): Promise<ReplicatedRegistry> {
  if (!SERVER_URL) throw new Error(replicaServerUnavailable!);
  const database = await createScratchServerDatabase(SERVER_URL, 'vip_faults');
  try {
    const { service, registry } = await startFaultRegistry(label, {
      ...options,
      replicas: REPLICAS,
      env: { DATABASE_URL: database.url, ...options.env },
    });
    return {
      service,
      registry,
      stop: async (passed) => {
        await service.stop({ removeData: passed });
        await database.drop();
      },
    };
  } catch (error) {
    await database.drop();
    throw error;
  }
}

/** Enrolls a voice of the owner (biometric consent first); its synthesis consent starts `unknown`. */
export async function enrollVoice(registry: Registry, name: string): Promise<string> {
  const asOwner = { authorization: `Bearer ${registry.ownerToken}` };
  const consent = await post(
    `${registry.originUrl}/api/v1/consents`,
    { type: 'biometric', statement_version: BIOMETRIC_CONSENT_STATEMENT.version, accepted: true },
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

/** Grants the registry's platform a licence on the voice, through `originUrl` (one replica) or the origin's address. */
export function createLicense(
  registry: Registry,
  voiceId: string,
  scopes: string[] = ['audiobook'],
  originUrl = registry.originUrl,
): Promise<Response> {
  return post(
    `${originUrl}/api/v1/voices/${voiceId}/licenses`,
    {
      platform_name: registry.platformName,
      scopes,
      description: 'Narration of audiobook chapters for the tests',
      expires_at: new Date(Date.now() + 30 * 86_400_000).toISOString(),
    },
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

/** One gate check the edge answered 200. */
export interface AnsweredCheck {
  checkId: string;
  voiceId: string;
  status: string;
  answeredAt: number;
}

/**
 * The load's share of the platform's gate rate limit: a quiet machine answers a check in a few
 * milliseconds, and loops that never wait would be refused 429 within seconds (a failure the fault
 * did not cause). The rest is left to the test's own checks.
 */
const GATE_LOAD_SHARE_OF_LIMIT = 0.6;

/**
 * Gate checks kept in flight until `stop`: `concurrency` loops, each taking `voiceIds` in turn (the
 * loops start at different ones), together paced under the platform's rate limit. Resolves, on
 * `stop`, with the answered checks and the other answers.
 */
export function gateLoad(registry: Registry, voiceIds: readonly string[], concurrency: number) {
  const answered: AnsweredCheck[] = [];
  const failures: string[] = [];
  const loopIntervalMs = (concurrency * 60_000) / (limits.gatePerCredentialPerMinute * GATE_LOAD_SHARE_OF_LIMIT);
  let running = true;
  const loop = async (first: number) => {
    for (let round = first; running; round++) {
      const startedAt = Date.now();
      const voiceId = voiceIds[round % voiceIds.length]!;
      const answer = await gateCheck(registry, voiceId);
      const body = await json(answer);
      if (answer.status !== 200) failures.push(`${answer.status} ${JSON.stringify(body)}`);
      else answered.push({ checkId: body.check_id as string, voiceId, status: body.status as string, answeredAt: Date.now() });
      const waitMs = startedAt + loopIntervalMs - Date.now();
      if (waitMs > 0) await new Promise((r) => setTimeout(r, waitMs));
    }
  };
  const loops = Promise.all(Array.from({ length: concurrency }, (_, i) => loop(i)));
  return {
    /** Answered so far (the load goes on). */
    answered,
    stop: async () => {
      running = false;
      await loops;
      return { answered, failures };
    },
  };
}

/** The check_ids the platform's chain holds more than once. */
export async function chainedTwice(registry: Registry): Promise<string[]> {
  const chained = (await auditLog(registry, { platform_name: registry.platformName })).map((entry) => entry.check_id as string);
  return chained.filter((id, index) => chained.indexOf(id) !== index);
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
