import { auditEntryHash, auditRecordSchema } from '@vip/shared-schema';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { chainEntry, hashAuditEntry } from './entries.js';
import { gateRecord } from './test-records.js';

const anyText = fc.option(fc.string({ unit: 'binary', maxLength: 40 }), { nil: null });

describe('hashAuditEntry', () => {
  it("gives shared-schema's auditEntryHash for any field values, escapes and non-ASCII included", async () => {
    await fc.assert(
      fc.asyncProperty(anyText, anyText, anyText, fc.integer({ min: 1, max: 2 ** 40 }), async (platform, reason, caller, seq) => {
        const record = auditRecordSchema.parse(gateRecord());
        const entry = chainEntry({ ...record, platform_name: platform, reason, caller_id: caller }, seq, new Date(), 'a'.repeat(64));
        expect(entry.entry_hash).toBe(await auditEntryHash(entry));
      }),
      { numRuns: 300 },
    );
  });

  it('falls back to the generic canonical form for an entry of another shape', async () => {
    const entry = chainEntry(gateRecord(), 1, new Date(), 'b'.repeat(64));
    const extended = { ...entry, extra: 'field' } as typeof entry;
    expect(hashAuditEntry(extended)).toBe(await auditEntryHash(extended));
  });
});
