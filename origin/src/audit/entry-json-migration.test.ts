import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type AuditEntry, auditEntryHash, auditRecordSchema, GENESIS_HASH } from '@vip/shared-schema';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateSigningJwk } from '../auth/access-tokens.js';
import type { DatabaseHandle } from '../db/client.js';
import { MIGRATIONS_FOLDER } from '../db/migrations-folder.js';
import { systemRuntime } from '../runtime.js';
import { adversarialTexts, gateRecord } from '../testing/audit-records.js';
import { openTestDatabase } from '../testing/database.js';
import { createCheckpointSigner } from './checkpoints.js';
import { AuditService } from './service.js';

/** The last migration before the chain stored its entries as JSON. */
const BEFORE = '0006_audit_pending_received_index';

let folder: string;
let handle: DatabaseHandle;
beforeAll(async () => {
  folder = await mkdtemp(join(tmpdir(), 'vip-migrations-'));
  await cp(MIGRATIONS_FOLDER, folder, { recursive: true });
  const journalFile = join(folder, 'meta', '_journal.json');
  const journal = JSON.parse(await readFile(journalFile, 'utf8')) as { entries: { idx: number; tag: string }[] };
  const last = journal.entries.findIndex((entry) => entry.tag === BEFORE);
  await writeFile(journalFile, JSON.stringify({ ...journal, entries: journal.entries.slice(0, last + 1) }));
  handle = await openTestDatabase({ migrationsFolder: folder });
});
afterAll(async () => {
  await handle?.close();
  if (folder) await rm(folder, { recursive: true, force: true });
});

/** A chain in the column layout before the migration, hashed by shared-schema as any verifier would. */
async function writeColumnChain(count: number): Promise<AuditEntry[]> {
  const texts = adversarialTexts(count);
  const entries: AuditEntry[] = [];
  let previous = GENESIS_HASH;
  for (let seq = 1; seq <= count; seq++) {
    const record = auditRecordSchema.parse(gateRecord({ voice_id: seq % 3 ? crypto.randomUUID() : null }));
    // Whole seconds now and then, so a zero millisecond part is written out too.
    const recordedAt = new Date(Date.UTC(2026, 10, 22) + seq * (seq % 5 ? 7_919 : 1_000)).toISOString();
    const hashed = { ...record, ...texts[seq - 1], seq, recorded_at: recordedAt, prev_hash: previous };
    const entry = { ...hashed, entry_hash: await auditEntryHash(hashed) };
    entries.push(entry);
    previous = entry.entry_hash;
    await handle.db.execute(sql`insert into audit_entries (seq, check_id, kind, decided_at, recorded_at, voice_id, platform_name,
      intended_use, decision, action, reason, license_status, consent_status, caller_type, caller_id, token_jti, prev_hash, entry_hash)
      values (${entry.seq}, ${entry.check_id}, ${entry.kind}, ${entry.decided_at}, ${entry.recorded_at}, ${entry.voice_id},
      ${entry.platform_name}, ${entry.intended_use}, ${entry.decision}, ${entry.action}, ${entry.reason}, ${entry.license_status},
      ${entry.consent_status}, ${entry.caller_type}, ${entry.caller_id}, ${entry.token_jti}, ${entry.prev_hash}, ${entry.entry_hash})`);
  }
  return entries;
}

describe('migration 0007: the chain stored as canonical JSON', () => {
  it('writes every existing entry as the exact bytes it was hashed as, so the chain still verifies and reads the same', async () => {
    const entries = await writeColumnChain(300);
    await handle.migrate();
    const audit = new AuditService({
      db: handle.db,
      clock: systemRuntime.clock,
      checkpoints: await createCheckpointSigner(await generateSigningJwk('migration-test')),
    });
    expect(await audit.verify()).toEqual({ valid: true, entries: 300, head_hash: entries.at(-1)!.entry_hash, first_invalid_seq: null });
    const listed = await audit.list({ kind: 'admin' }, { order: 'seq', limit: 500 });
    expect(listed.entries).toEqual(entries);
    const withVoice = entries.find((entry) => entry.voice_id !== null)!;
    expect((await audit.list({ kind: 'admin' }, { voice_id: withVoice.voice_id!, order: 'seq', limit: 10 })).entries).toEqual([withVoice]);
  });
});
