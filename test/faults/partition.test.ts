import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, json, type RunningPlanes } from '../support/service.js';
import { PARTITION, REPLICAS } from './catalogue.js';
import {
  approvedVoice,
  chainedTwice,
  createLicense,
  gateCheck,
  gateLoad,
  missingFromChain,
  type Registry,
  type ReplicatedRegistry,
  replicaServerUnavailable,
  setSynthesisConsent,
  startReplicatedRegistry,
  verifyChain,
} from './fixtures.js';

const { partitionSeconds: PARTITION_SECONDS, gateConcurrency: GATE_CONCURRENCY, drainMs: DRAIN_MS } = PARTITION;

describe.skipIf(replicaServerUnavailable !== null)(
  `the edge and ${REPLICAS} origin replicas are cut apart${replicaServerUnavailable ? ` (skipped: ${replicaServerUnavailable})` : ''}`,
  () => {
    let replicated: ReplicatedRegistry;
    let service: RunningPlanes;
    /** Set by the test's last line: a failed run keeps its data folder (and planes.log) to read. */
    let passed = false;
    let registry: Registry;
    let steadyId: string;
    let withdrawnId: string;

    beforeAll(async () => {
      replicated = await startReplicatedRegistry('partition', { cuttableLinks: true });
      ({ service, registry } = replicated);
      steadyId = await approvedVoice(registry, 'Partition Steady');
      withdrawnId = await approvedVoice(registry, 'Partition Withdrawn');
    }, 180_000);

    afterAll(async () => {
      await replicated?.stop(passed);
    });

    it('both sides keep serving, and after the heal the backlog drains both ways: the withdrawal reaches the gate, every decision the chain, once', async () => {
      const replicaPids = service.replicas.map((replica) => replica.pid());
      const gate = gateLoad(registry, [steadyId, withdrawnId], GATE_CONCURRENCY);
      const checks = gate.answered;

      let gateFailures: string[] = [];
      let healedAt = 0;
      let withdrawalReachedMs: number | null = null;
      try {
        await new Promise((r) => setTimeout(r, 1_000));
        service.link!.cut();
        // The origin keeps serving its owners while the edge is unreachable: the changes wait in its outbox.
        const withdrawal = await setSynthesisConsent(registry, withdrawnId, 'withdrawn');
        expect(withdrawal.status).toBe(200);
        expect((await createLicense(registry, steadyId, ['podcast'])).status).toBe(201);
        await new Promise((r) => setTimeout(r, PARTITION_SECONDS * 1000));
        healedAt = Date.now();
        service.link!.heal();
        withdrawalReachedMs = await eventually(
          async () => checks.some((c) => c.voiceId === withdrawnId && c.answeredAt > healedAt && c.status === 'blocked'),
          DRAIN_MS,
        ).catch(() => null);
        await new Promise((r) => setTimeout(r, 1_000));
      } finally {
        ({ failures: gateFailures } = await gate.stop());
      }

      // The edge answered every check, cut off or not; the replicas are the processes they were.
      expect(gateFailures).toEqual([]);
      expect(service.replicas.map((replica) => replica.pid())).toEqual(replicaPids);
      expect(withdrawalReachedMs, 'the withdrawal made during the partition never reached the gate').not.toBeNull();
      // Once there, it holds: no approval of the withdrawn voice after the first block.
      const firstBlocked = checks.find((c) => c.voiceId === withdrawnId && c.answeredAt > healedAt && c.status === 'blocked')!;
      expect(checks.filter((c) => c.voiceId === withdrawnId && c.answeredAt > firstBlocked.answeredAt && c.status !== 'blocked')).toEqual(
        [],
      );
      // The licence granted during the partition reached the gate too.
      expect((await json(await gateCheck(registry, steadyId, 'podcast'))).status).toBe('approved');

      const checkIds = checks.map((c) => c.checkId);
      const lost = await missingFromChain(registry, checkIds, DRAIN_MS);
      const chainedAfterMs = Date.now() - healedAt;
      expect(lost, 'gate decisions never chained').toEqual([]);
      expect(await chainedTwice(registry), 'check_ids chained more than once').toEqual([]);
      expect(await verifyChain(registry)).toMatchObject({ valid: true, first_invalid_seq: null });

      const duringCut = checks.filter((c) => c.answeredAt < healedAt && c.answeredAt > healedAt - PARTITION_SECONDS * 1000);
      console.log(
        `[faults] partition: ${PARTITION_SECONDS} s cut, ${checks.length} gate checks (${duringCut.length} during the cut, ` +
          `${duringCut.filter((c) => c.voiceId === withdrawnId && c.status === 'approved').length} of them stale approvals of the withdrawn voice); ` +
          `withdrawal at the gate ${Math.round(withdrawalReachedMs!)} ms after the heal; every decision chained within ${chainedAfterMs} ms of it`,
      );
      passed = true;
    }, 180_000);
  },
);
