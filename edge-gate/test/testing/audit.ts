import { env, runInDurableObject } from 'cloudflare:test';
import type { AuditRecord, EdgeAuditRecord } from '@vip/shared-schema';
import { AUDIT_SHARDS, shardOf } from '../../src/gate/audit-shards.js';
import type { CallerHome } from '../../src/objects/caller-home.js';
import { callerHomeShard } from '../../src/objects/caller-home-client.js';

/** Reads a pending record straight from its caller's home shard (what the edge holds before the origin pulls). */
export async function findAuditRecord(checkId: string): Promise<EdgeAuditRecord | null> {
  return runInDurableObject(callerHomeShard(env, shardOf(checkId)), (_instance: CallerHome, state) => {
    const rows = state.storage.sql.exec<{ record: string }>('SELECT record FROM pending WHERE check_id = ?', checkId).toArray();
    return rows[0] ? (JSON.parse(rows[0].record) as EdgeAuditRecord) : null;
  });
}

/** Every pending record about `voiceId`, from all caller home shards. */
export async function auditRecordsOfVoice(voiceId: string): Promise<AuditRecord[]> {
  const shards = await Promise.all(
    Array.from({ length: AUDIT_SHARDS }, (_, index) =>
      runInDurableObject(callerHomeShard(env, index), (_instance: CallerHome, state) =>
        state.storage.sql.exec<{ record: string }>('SELECT record FROM pending').toArray(),
      ),
    ),
  );
  return shards
    .flat()
    .map((row) => JSON.parse(row.record) as AuditRecord)
    .filter((record) => record.voice_id === voiceId);
}
