import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, json, type RunningPlanes, startPlanes } from '../support/service.js';
import { POSTGRES_RESTART, REPLICAS } from './catalogue.js';
import {
  adminFor,
  approvedVoice,
  auditEntries,
  auditLog,
  createLicense,
  gateCheck,
  missingFromChain,
  type Registry,
  setUpRegistry,
  verifyChain,
} from './fixtures.js';
import { type PrivatePostgres, privatePostgresUnavailable, startPrivatePostgres } from './private-postgres.js';

const { downSeconds: DOWN_SECONDS, steadyMs: STEADY_MS, hangMs: HANG_MS, recoveryMs: RECOVERY_MS } = POSTGRES_RESTART;

const admin = adminFor('postgres-restart');
const unavailable = privatePostgresUnavailable();

interface Outcome {
  kind: 'license' | 'webhook' | 'gate';
  status: number | 'hung' | 'network_error';
  ms: number;
  startedAt: number;
  contentType: string;
  retryAfter: string | null;
  body: string;
}

describe.skipIf(unavailable !== null)(
  `the Postgres server of ${REPLICAS} origin replicas restarts under load${unavailable ? ` (skipped: ${unavailable})` : ''}`,
  () => {
    let postgres: PrivatePostgres;
    let service: RunningPlanes;
    /** Set by the test's last line: a failed run keeps its data folder (and planes.log) to read. */
    let passed = false;
    let registry: Registry;
    let voiceId: string;

    beforeAll(async () => {
      postgres = await startPrivatePostgres();
      service = await startPlanes({
        replicas: REPLICAS,
        env: {
          ADMIN_EMAIL: admin.email,
          ADMIN_PASSWORD: admin.password,
          DATABASE_URL: postgres.url,
          WEBHOOK_ALLOW_LOOPBACK: 'true',
        },
      });
      registry = await setUpRegistry(service.originUrl, service.edgeUrl, admin);
      voiceId = await approvedVoice(registry, 'Postgres Restart Voice');
    }, 150_000);

    afterAll(async () => {
      await service?.stop({ removeData: passed });
      await postgres?.destroy();
    });

    it('answers 503 problem+json while the server is away, recovers by itself and loses no committed write or audit record', async () => {
      const replicaPids = service.replicas.map((replica) => replica.pid());
      const outcomes: Outcome[] = [];
      const measure = async (kind: Outcome['kind'], request: () => Promise<Response>): Promise<Outcome> => {
        const startedAt = Date.now();
        let outcome: Outcome;
        try {
          const response = await request();
          outcome = {
            kind,
            status: response.status,
            ms: Date.now() - startedAt,
            startedAt,
            contentType: response.headers.get('content-type') ?? '',
            retryAfter: response.headers.get('retry-after'),
            body: await response.text(),
          };
        } catch (error) {
          const hung = (error as Error).name === 'TimeoutError';
          outcome = {
            kind,
            status: hung ? 'hung' : 'network_error',
            ms: Date.now() - startedAt,
            startedAt,
            contentType: '',
            retryAfter: null,
            body: '',
          };
        }
        outcomes.push(outcome);
        return outcome;
      };
      const timeout = () => AbortSignal.timeout(HANG_MS);
      const asOwner = { authorization: `Bearer ${registry.ownerToken}` };

      let loading = true;
      const loop = async (step: () => Promise<unknown>) => {
        while (loading) {
          await step();
          await new Promise((r) => setTimeout(r, 25));
        }
      };
      const unknownVoice = randomUUID();
      let gateRound = 0;
      const load = Promise.all([
        loop(() =>
          measure('license', () =>
            fetch(`${service.originUrl}/api/v1/voices/${voiceId}/licenses`, {
              method: 'POST',
              headers: { 'content-type': 'application/json', ...asOwner },
              body: JSON.stringify({
                platform_name: registry.platformName,
                scopes: ['audiobook'],
                description: 'Narration of audiobook chapters for the tests',
                expires_at: new Date(Date.now() + 30 * 86_400_000).toISOString(),
              }),
              signal: timeout(),
            }),
          ),
        ),
        loop(() =>
          measure('webhook', () =>
            fetch(`${service.originUrl}/api/v1/webhooks/register`, {
              method: 'POST',
              headers: { 'content-type': 'application/json', ...asOwner },
              body: JSON.stringify({ url: `http://127.0.0.1:9/hooks/${randomUUID()}`, events: ['voice.deleted'] }),
              signal: timeout(),
            }),
          ),
        ),
        loop(() => measure('gate', () => gateCheck(registry, gateRound++ % 2 === 0 ? voiceId : unknownVoice))),
      ]);

      /** Resolves once a licence write started after `since` has succeeded; returns how long that took. */
      const recovered = async (since: number) => {
        const deadline = since + RECOVERY_MS;
        while (Date.now() < deadline) {
          if (outcomes.some((o) => o.kind === 'license' && o.startedAt >= since && o.status === 201)) return Date.now() - since;
          await new Promise((r) => setTimeout(r, 50));
        }
        throw new Error(`the origin accepted no write within ${RECOVERY_MS} ms of the server's return`);
      };

      const recoveries: number[] = [];
      try {
        await new Promise((r) => setTimeout(r, STEADY_MS));
        await postgres.restart();
        recoveries.push(await recovered(Date.now()));
        await new Promise((r) => setTimeout(r, STEADY_MS));
        await postgres.stop();
        await new Promise((r) => setTimeout(r, DOWN_SECONDS * 1000));
        await postgres.start();
        recoveries.push(await recovered(Date.now()));
        await new Promise((r) => setTimeout(r, STEADY_MS));
      } finally {
        loading = false;
        await load;
      }
      console.log(
        `[faults] postgres: ${outcomes.length} requests, recoveries ${recoveries.join(' ms, ')} ms, statuses ${JSON.stringify(
          Object.fromEntries(['license', 'webhook', 'gate'].map((kind) => [kind, countBy(outcomes.filter((o) => o.kind === kind))])),
        )}`,
      );

      // Each replica recovered by itself: the same processes, serving writes again.
      expect(service.replicas.map((replica) => replica.pid())).toEqual(replicaPids);
      for (const replica of service.replicas) {
        const direct = await createLicense(registry, voiceId, ['audiobook'], replica.url);
        expect(direct.status, `${replica.name} takes writes again`).toBe(201);
      }
      // Never a hang, a dropped connection or a 500: success or a clean 503 problem that says to retry.
      const origin = outcomes.filter((o) => o.kind !== 'gate');
      const unclean = origin.filter((o) => o.status !== 201 && o.status !== 503);
      expect(unclean.map((o) => `${o.kind} ${o.status} after ${o.ms} ms: ${o.body.slice(0, 300)}`)).toEqual([]);
      const refused = origin.filter((o) => o.status === 503);
      expect(refused.length, 'requests that met the stopped server').toBeGreaterThan(0);
      for (const o of refused) {
        expect(o.contentType).toContain('application/problem+json');
        expect(JSON.parse(o.body)).toMatchObject({ status: 503, code: 'unavailable' });
        expect(o.body).not.toMatch(/\bat .+:\d+:\d+|stack|ECONNREFUSED|postgres/i);
        expect(Number(o.retryAfter)).toBeGreaterThan(0);
      }
      // The edge does not depend on the origin's database at all.
      expect(outcomes.filter((o) => o.kind === 'gate' && o.status !== 200)).toEqual([]);

      // Every write the origin confirmed is there, with its audit record; every gate decision is chained.
      const licenseIds = origin.filter((o) => o.kind === 'license' && o.status === 201).map((o) => JSON.parse(o.body).license_id as string);
      const webhookIds = origin.filter((o) => o.kind === 'webhook' && o.status === 201).map((o) => JSON.parse(o.body).webhook_id as string);
      const licences = await json(await fetch(`${service.originUrl}/api/v1/voices/${voiceId}/licenses`, { headers: asOwner }));
      const storedLicences = new Set((licences.licenses as { license_id: string }[]).map((l) => l.license_id));
      const hooks = await json(await fetch(`${service.originUrl}/api/v1/webhooks`, { headers: asOwner }));
      const storedHooks = new Set((hooks.webhooks as { webhook_id: string }[]).map((h) => h.webhook_id));
      const lostWrites = [...licenseIds.filter((id) => !storedLicences.has(id)), ...webhookIds.filter((id) => !storedHooks.has(id))];
      expect(lostWrites, 'writes answered 201 and then missing').toEqual([]);

      // Each licence change queued its audit record in its own transaction; the appender chains it shortly after.
      const unchainedLicences = async () => {
        const reasons = new Set((await auditLog(registry, { voice_id: voiceId })).map((entry) => entry.reason));
        return licenseIds.filter((id) => !reasons.has(`license_created:${id}`));
      };
      const chainedAfterMs = await eventually(async () => (await unchainedLicences()).length === 0, 30_000).catch(() => null);
      console.log(
        `[faults] postgres: licence audit records all chained ${chainedAfterMs === null ? 'never' : `after ${Math.round(chainedAfterMs)} ms`}`,
      );
      expect(await unchainedLicences(), 'licence changes without their audit entry').toEqual([]);

      const checkIds = outcomes.filter((o) => o.kind === 'gate').map((o) => JSON.parse(o.body).check_id as string);
      const lost = await missingFromChain(registry, checkIds, 30_000);
      expect(lost, 'gate decisions never chained').toEqual([]);
      expect((await auditEntries(registry, checkIds.at(-1)!))[0]).toMatchObject({ check_id: checkIds.at(-1) });
      expect(await verifyChain(registry)).toMatchObject({ valid: true, first_invalid_seq: null });
      passed = true;
    });
  },
);

function countBy(outcomes: Outcome[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const o of outcomes) counts[String(o.status)] = (counts[String(o.status)] ?? 0) + 1;
  return counts;
}
