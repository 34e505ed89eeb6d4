import { randomUUID } from 'node:crypto';
import { type AuditRecord, buildAuditRecord } from '@vip/shared-schema';
import fc from 'fast-check';
import type { StoredEntry } from '../audit/entries.js';
import type { Executor } from '../db/client.js';
import { auditEntries } from '../db/schema.js';

/** A gate decision as the edge records it; tests override what they look at. */
export function gateRecord(overrides: Partial<AuditRecord> = {}): AuditRecord {
  const denial = buildAuditRecord('gate.decision', {
    check_id: randomUUID(),
    decided_at: new Date(),
    voice_id: randomUUID(),
    platform_name: 'Test Platform',
    intended_use: 'audiobook',
    action: 'authorization_denied',
    reason: 'no_license',
    license_status: 'unlicensed',
    consent_status: 'active',
    caller_type: 'api_key',
    caller_id: randomUUID(),
  });
  return { ...denial, ...overrides };
}

/** Any text Postgres can hold (no NUL): quotes, backslashes, control characters, astral and separator code points. */
const storableText = fc.option(
  fc.string({ unit: 'binary', maxLength: 24 }).map((text) => text.replaceAll('\0', '')),
  { nil: null },
);

/** `count` sets of the free-text record fields, each any storable text or null. */
export const adversarialTexts = (count: number) =>
  fc.sample(fc.record({ platform_name: storableText, reason: storableText, caller_id: storableText, token_jti: storableText }), count);

/** Puts the chain back as `saved` after a test tampered with it: every row replaced, in batches. */
export async function restoreChain(db: Executor, saved: readonly StoredEntry[]): Promise<void> {
  await db.delete(auditEntries);
  for (let i = 0; i < saved.length; i += 500) await db.insert(auditEntries).values(saved.slice(i, i + 500));
}
