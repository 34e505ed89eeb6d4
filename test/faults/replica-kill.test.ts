import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startWebhookReceiver } from '../support/receiver.js';
import { eventually, json, post, type RunningPlanes } from '../support/service.js';
import { REPLICA_KILL, REPLICAS } from './catalogue.js';
import {
  approvedVoice,
  chainedTwice,
  createLicense,
  enrollVoice,
  gateCheck,
  gateLoad,
  missingFromChain,
  type Registry,
  type ReplicatedRegistry,
  replicaServerUnavailable,
  startReplicatedRegistry,
  verifyChain,
} from './fixtures.js';

const {
  gateConcurrency: GATE_CONCURRENCY,
  beforeKillMs: BEFORE_KILL_MS,
  afterKillMs: AFTER_KILL_MS,
  webhookWaitMs: WEBHOOK_WAIT_MS,
} = REPLICA_KILL;

interface OwnerWrite {
  startedAt: number;
  status: number | 'network_error';
  licenseId: string | null;
}

describe.skipIf(replicaServerUnavailable !== null)(
  `one of ${REPLICAS} origin replicas is killed under load${replicaServerUnavailable ? ` (skipped: ${replicaServerUnavailable})` : ''}`,
  () => {
    let replicated: ReplicatedRegistry;
    let receiver: Awaited<ReturnType<typeof startWebhookReceiver>>;
    let service: RunningPlanes;
    /** Set by the test's last line: a failed run keeps its data folder (and planes.log) to read. */
    let passed = false;
    let registry: Registry;
    let approvedId: string;
    let blockedId: string;
    const secret = `whsec_${randomBytes(32).toString('base64')}`;

    beforeAll(async () => {
      receiver = await startWebhookReceiver();
      replicated = await startReplicatedRegistry('replica-kill', {
        env: { WEBHOOK_ALLOW_LOOPBACK: 'true' },
      });
      ({ service, registry } = replicated);
      approvedId = await approvedVoice(registry, 'Replica Kill Approved');
      // Enrolled, never consented: the gate blocks it (no_consent), and each block is a pre_synthesis.blocked event.
      blockedId = await enrollVoice(registry, 'Replica Kill Blocked');
      await eventually(async () => (await json(await gateCheck(registry, blockedId))).status === 'blocked', 10_000);
      const hook = await post(
        `${registry.originUrl}/api/v1/webhooks/register`,
        { url: receiver.url, secret, events: ['pre_synthesis.blocked'] },
        { authorization: `Bearer ${registry.ownerToken}` },
      );
      expect(hook.status, await hook.clone().text()).toBe(201);
    }, 180_000);

    afterAll(async () => {
      await replicated?.stop(passed);
      receiver?.server.close();
    });

    it('loses and duplicates no decision, audit record or webhook event; the other replica serves throughout and the killed one rejoins', async () => {
      const [victim, survivor] = service.replicas as [(typeof service.replicas)[0], (typeof service.replicas)[0]];
      const survivorPid = survivor.pid();
      const writes: OwnerWrite[] = [];
      let loading = true;
      const gate = gateLoad(registry, [approvedId, blockedId], GATE_CONCURRENCY);
      // Owner writes through the front: licences on the approved voice (each one an audit record and an index update).
      const ownerLoop = async () => {
        while (loading) {
          const startedAt = Date.now();
          const write: OwnerWrite = { startedAt, status: 'network_error', licenseId: null };
          try {
            const response = await createLicense(registry, approvedId);
            write.status = response.status;
            if (response.status === 201) write.licenseId = (await json(response)).license_id as string;
            else await response.body?.cancel();
          } catch {
            // The connection was cut mid-answer: counted as a failure below.
          }
          writes.push(write);
          await new Promise((r) => setTimeout(r, 50));
        }
      };
      const owner = ownerLoop();

      let killedAt = 0;
      let killDoneAt = 0;
      try {
        await new Promise((r) => setTimeout(r, BEFORE_KILL_MS));
        killedAt = Date.now();
        await victim.stop('SIGKILL');
        killDoneAt = Date.now();
        await new Promise((r) => setTimeout(r, AFTER_KILL_MS));
      } finally {
        loading = false;
        await owner;
      }
      const { answered: checks, failures: gateFailures } = await gate.stop();

      // The edge decides without either replica; the survivor is the same process, serving.
      expect(gateFailures).toEqual([]);
      expect(survivor.pid()).toBe(survivorPid);
      expect((await fetch(`${survivor.url}/healthz`)).status).toBe(200);
      // Only a write in flight at the kill may fail; every one started after it succeeds, through the front.
      const failed = writes.filter((w) => w.status !== 201);
      expect(failed.filter((w) => w.startedAt >= killDoneAt)).toEqual([]);
      expect(failed.filter((w) => w.startedAt < killedAt - 2_000)).toEqual([]);
      const writesAfterKill = writes.filter((w) => w.startedAt >= killDoneAt).length;
      expect(writesAfterKill).toBeGreaterThan(0);
      // Every write that answered 201 is stored.
      const stored = await json(
        await fetch(`${registry.originUrl}/api/v1/voices/${approvedId}/licenses`, {
          headers: { authorization: `Bearer ${registry.ownerToken}` },
        }),
      );
      const storedIds = new Set((stored.licenses as { license_id: string }[]).map((l) => l.license_id));
      expect(writes.flatMap((w) => (w.licenseId && !storedIds.has(w.licenseId) ? [w.licenseId] : []))).toEqual([]);

      // Every decision reaches the chain once.
      const checkIds = checks.map((c) => c.checkId);
      expect(new Set(checkIds).size).toBe(checkIds.length);
      const lost = await missingFromChain(registry, checkIds, 30_000);
      expect(lost, 'gate decisions never chained').toEqual([]);
      expect(await chainedTwice(registry), 'check_ids chained more than once').toEqual([]);

      // Every block is one event, delivered (a delivery the victim had claimed comes again after its lease, same webhook-id).
      const blockedIds = checks.filter((c) => c.status === 'blocked').map((c) => c.checkId);
      const hooks = new Webhook(secret);
      const delivered = () =>
        receiver.received.map((r) => ({
          webhookId: String(r.headers['webhook-id']),
          checkId: (hooks.verify(r.body, r.headers as Record<string, string>) as { check_id: string }).check_id,
        }));
      const webhooksAfterMs = await eventually(async () => {
        const seen = new Set(delivered().map((d) => d.checkId));
        return blockedIds.every((id) => seen.has(id));
      }, WEBHOOK_WAIT_MS).catch(() => null);
      const deliveries = delivered();
      const seen = new Set(deliveries.map((d) => d.checkId));
      expect(
        blockedIds.filter((id) => !seen.has(id)),
        'blocked decisions whose event never arrived',
      ).toEqual([]);
      const idsPerCheck = new Map<string, Set<string>>();
      for (const d of deliveries) idsPerCheck.set(d.checkId, (idsPerCheck.get(d.checkId) ?? new Set()).add(d.webhookId));
      expect(
        [...idsPerCheck].filter(([, ids]) => ids.size > 1).map(([id]) => id),
        'blocks emitted as more than one event',
      ).toEqual([]);
      expect(await verifyChain(registry)).toMatchObject({ valid: true, first_invalid_seq: null });

      // The killed replica starts again and the front sends it requests again.
      await victim.start();
      const instances = new Set<unknown>();
      for (let i = 0; i < 2 * REPLICAS; i++) instances.add((await json(await fetch(`${registry.originUrl}/healthz`))).instance);
      expect(instances.size).toBe(REPLICAS);

      console.log(
        `[faults] replica kill: ${checks.length} gate checks (${blockedIds.length} blocked), ${writes.length} owner writes (${failed.length} cut by the kill, ${writesAfterKill} after it, all 201), ` +
          `${deliveries.length} webhook deliveries of ${idsPerCheck.size} events (${deliveries.length - new Set(deliveries.map((d) => d.webhookId)).size} resent after a lease), ` +
          `the last ${webhooksAfterMs === null ? 'never' : `${Math.round(webhooksAfterMs)} ms after the chain held every decision`}`,
      );
      passed = true;
    }, 240_000);
  },
);
