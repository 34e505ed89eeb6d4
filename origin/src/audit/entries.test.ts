import { auditEntryHash, auditRecordSchema, canonicalJson } from '@vip/shared-schema';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { gateRecord } from '../testing/audit-records.js';
import { chainEntry, storedToEntry } from './entries.js';

const anyText = fc.option(fc.string({ unit: 'binary', maxLength: 40 }), { nil: null });

describe('chainEntry', () => {
  it("stores the canonical JSON it hashed, and shared-schema's auditEntryHash agrees, escapes and non-ASCII included", async () => {
    await fc.assert(
      fc.asyncProperty(anyText, anyText, anyText, fc.integer({ min: 1, max: 2 ** 40 }), async (platform, reason, caller, seq) => {
        const record = auditRecordSchema.parse(gateRecord());
        const stored = chainEntry({ ...record, platform_name: platform, reason, caller_id: caller }, seq, new Date(), 'a'.repeat(64));
        const entry = storedToEntry(stored);
        expect(entry).toMatchObject({ seq, platform_name: platform, reason, caller_id: caller, prev_hash: 'a'.repeat(64) });
        const { entry_hash, ...hashed } = entry;
        expect(canonicalJson(hashed)).toBe(stored.entryJson);
        expect(entry_hash).toBe(await auditEntryHash(entry));
      }),
      { numRuns: 300 },
    );
  });
});
