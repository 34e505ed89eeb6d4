/**
 * Every fault the suite injects, per test file, with the numbers that size it. The test files read
 * their parameters from here, so this table and what runs stay the same thing; docs/FAULTS.md
 * describes each entry.
 */
export interface FaultEntry {
  /** What is done to the running service. */
  fault: string;
  /** How many times one run of the file does it. */
  injected: number;
}

export const ORIGIN_DOWN = {
  /** Rounds of traffic while the origin is down: a gate check per outcome, a redemption and its repeat. */
  roundsWhileDown: 6,
  faults: [{ fault: 'origin process group killed (SIGKILL) while the edge keeps serving; restarted on the same data dir', injected: 1 }],
} as const satisfies { faults: readonly FaultEntry[] } & Record<string, unknown>;

const POSTGRES_DOWN_SECONDS = 3;
export const POSTGRES_RESTART = {
  /** How long the server stays down in the second fault. */
  downSeconds: POSTGRES_DOWN_SECONDS,
  /** Steady load before the first fault, between the faults and after the last one. */
  steadyMs: 2_000,
  /** A request that has not answered in this long counts as hung. */
  hangMs: 15_000,
  /** After the server is back, the origin must take writes again within this long, as the same process. */
  recoveryMs: 10_000,
  faults: [
    { fault: 'private Postgres of two origin replicas restarted under load: pg_ctl restart -m fast (sessions terminated)', injected: 1 },
    {
      fault: `private Postgres of two origin replicas stopped under load (pg_ctl stop -m fast), down ${POSTGRES_DOWN_SECONDS} s, started again`,
      injected: 1,
    },
  ],
} as const satisfies { faults: readonly FaultEntry[] } & Record<string, unknown>;

/** The replica cases run `npm start -- --replicas 2` on the CI's Postgres server (TEST_DATABASE_URL). */
export const REPLICAS = 2;

export const REPLICA_KILL = {
  /** Gate checks kept in flight at once, alternately of an approved and a blocked voice. */
  gateConcurrency: 4,
  /** Load before the kill, and after it. */
  beforeKillMs: 4_000,
  afterKillMs: 6_000,
  /**
   * Longest an event may take to reach its endpoint: a delivery the killed replica had claimed is sent
   * again by the survivor when its claim lease ends (60 s, origin/src/webhooks/worker.ts), plus margin.
   */
  webhookWaitMs: 80_000,
  faults: [
    {
      fault: `one of ${REPLICAS} origin replicas killed (SIGKILL, its process group) under gate-check, owner and webhook load; restarted afterwards`,
      injected: 1,
    },
  ],
} as const satisfies { faults: readonly FaultEntry[] } & Record<string, unknown>;

const PARTITION_SECONDS = 15;
export const PARTITION = {
  /** How long the planes are cut apart: longer than the origin's 10 s timeout on an edge call, so calls in flight time out. */
  partitionSeconds: PARTITION_SECONDS,
  /** Gate checks kept in flight at once, throughout. */
  gateConcurrency: 2,
  /** After the link heals, the withdrawal made during the partition must reach the gate, and every record the chain, within this long. */
  drainMs: 45_000,
  faults: [
    {
      fault: `both directions between the edge and ${REPLICAS} origin replicas cut for ${PARTITION_SECONDS} s (connections held, bytes held back), then healed`,
      injected: 1,
    },
  ],
} as const satisfies { faults: readonly FaultEntry[] } & Record<string, unknown>;

const LOCK_HELD_SECONDS = 8;
const FREEZE_SECONDS = 10;
export const DATABASE_STALLS = {
  /**
   * DATABASE_*_TIMEOUT_MS of the origin in the test: short, so each bound shows well inside the fault.
   * The acquire bound is longer than the lock bound, as by default: a request that needs no lock waits
   * at most about one round of lock waiters for a connection.
   */
  timeouts: { statementMs: 1_500, lockMs: 1_000, acquireMs: 2_500 },
  /** How long the table lock is held, and the server frozen. */
  lockHeldSeconds: LOCK_HELD_SECONDS,
  freezeSeconds: FREEZE_SECONDS,
  /** Concurrent loops of licence requests (create and list), more than the origin's 10 connections. */
  licenceRequesters: 12,
  /** Steady load before each fault and after it. */
  steadyMs: 2_000,
  /** How late past its bound an answer may come on a busy two-core machine and still count as bounded. */
  slackMs: 3_000,
  /** A request that has not answered in this long counts as hung. */
  hangMs: 25_000,
  /** After the lock is released or the server thawed, every kind of request must succeed again within this long. */
  recoveryMs: 10_000,
  faults: [
    { fault: `table lock held (LOCK TABLE licenses IN ACCESS EXCLUSIVE MODE) for ${LOCK_HELD_SECONDS} s under load`, injected: 1 },
    { fault: `private Postgres frozen under load (SIGSTOP to the postmaster and its backends) for ${FREEZE_SECONDS} s`, injected: 1 },
  ],
} as const satisfies { faults: readonly FaultEntry[] } & Record<string, unknown>;

const HUNG_ATTEMPTS = 2;
export const WEBHOOK_RECEIVER_HANGS = {
  /** Delivery attempts the receiver reads and never answers before it starts answering. */
  hungAttempts: HUNG_ATTEMPTS,
  /** WEBHOOK_TIMEOUT_SECONDS in the test (15 in production): long enough that blocking behind a hung attempt shows. */
  timeoutSeconds: 5,
  /** WEBHOOK_RETRY_SCHEDULE: at once, then a second after each failed attempt. */
  retrySchedule: '0,1,1,1,1,1,1,1',
  /**
   * A healthy endpoint gets each event within this long of its commit: the worker's 1 s poll, plus at most
   * 1 s that a round waits for attempts it started, plus margin for a loaded machine. Blocked behind the
   * hung attempt, as before the fix, it took the whole timeout (6 s measured with 5 s).
   */
  promptMs: 3_500,
  faults: [{ fault: 'webhook receiver reads the request and never answers (each attempt must time out)', injected: HUNG_ATTEMPTS }],
} as const satisfies { faults: readonly FaultEntry[] } & Record<string, unknown>;

export const EDGE_RESTART = {
  /** Tokens issued before the crash, and how many of them are redeemed before it. */
  tokensIssued: 6,
  redeemedBefore: 2,
  /** Redemptions of one token raced at once after the restart. */
  concurrentRedemptions: 8,
  faults: [
    { fault: 'origin frozen (SIGSTOP) so the records made before the crash exist only in the edge', injected: 1 },
    { fault: 'edge process group killed (SIGKILL: wrangler and workerd), restarted on the same --persist-to', injected: 1 },
  ],
} as const satisfies { faults: readonly FaultEntry[] } & Record<string, unknown>;

export const GRACEFUL_RESTART = {
  /** Gate checks answered just before both planes are told to stop, and how long before. */
  gateChecks: 30,
  stopAfterMs: 50,
  faults: [{ fault: 'both planes stopped (SIGTERM) 50 ms after 30 gate checks were answered, restarted on the same data', injected: 1 }],
} as const satisfies { faults: readonly FaultEntry[] } & Record<string, unknown>;

export const FAULT_SUITE = {
  'origin-down.test.ts': ORIGIN_DOWN.faults,
  'postgres-restart.test.ts': POSTGRES_RESTART.faults,
  'database-stalls.test.ts': DATABASE_STALLS.faults,
  'replica-kill.test.ts': REPLICA_KILL.faults,
  'partition.test.ts': PARTITION.faults,
  'webhook-receiver-hangs.test.ts': WEBHOOK_RECEIVER_HANGS.faults,
  'edge-restart.test.ts': EDGE_RESTART.faults,
  'graceful-restart.test.ts': GRACEFUL_RESTART.faults,
} as const;

/** Faults one run of the whole suite injects. */
export const FAULTS_INJECTED = Object.values(FAULT_SUITE)
  .flat()
  .reduce((sum, entry) => sum + entry.injected, 0);
