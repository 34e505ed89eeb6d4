import { env, runInDurableObject } from 'cloudflare:test';
import type { AuditRecord } from '@vip/shared-schema';
import { outboxShard, shardOf } from '../src/gate/audit-outbox.js';
import type { AuditOutbox } from '../src/objects/AuditOutbox.js';

/** Reads a pending record straight from its outbox shard (what the edge holds before the origin pulls). */
export async function findAuditRecord(checkId: string): Promise<AuditRecord | null> {
  return runInDurableObject(outboxShard(env, shardOf(checkId)), (_instance: AuditOutbox, state) => {
    const rows = state.storage.sql.exec<{ record: string }>('SELECT record FROM pending WHERE check_id = ?', checkId).toArray();
    return rows[0] ? (JSON.parse(rows[0].record) as AuditRecord) : null;
  });
}
