import { z } from 'zod';
import { auditRecordSchema } from './audit.js';
import { uuid } from './common.js';
import { watermarkGrantSchema } from './watermark/index.js';

/**
 * Audit hand-off edge -> origin (docs/ARCHITECTURE.md#consistency, docs/CONTRACT.md#audit-chain). The edge writes every gate decision
 * (`gate.decision`) and every redemption (`authorization.redeemed`) as an AuditRecord to Durable
 * Object storage before it answers. The origin collects them with signed calls (internal-auth.ts)
 * to INTERNAL_AUDIT_PULL_PATH and appends them to its chain idempotently by `check_id`. A record
 * stays pending at the edge until the origin acknowledges it, so delivery is at least once.
 */
export const INTERNAL_AUDIT_PULL_PATH = '/internal/v1/audit-pull';

/**
 * One call acknowledges what the origin has appended since its last call and fetches the next
 * pending records, oldest first. Unacknowledged records come back again on a later call.
 */
export const auditPullRequestSchema = z
  .strictObject({
    ack: z.array(uuid).max(500).default([]),
    limit: z.number().int().min(1).max(500).default(100),
  })
  .meta({ id: 'AuditPullRequest' });
export type AuditPullRequest = z.input<typeof auditPullRequestSchema>;

/**
 * A record as the edge hands it over: the audit record, and beside it what the origin needs but the
 * chain must not publish. `watermark_id` (on a redemption) is the watermark id the edge minted for
 * that one synthesis (docs/DECISIONS.md#the-watermark-in-the-service): the origin registers it to the redemption
 * and keeps it out of the chain entry, whose leaves are public, so only the service resolves a mark.
 */
export const edgeAuditRecordSchema = auditRecordSchema.extend({ watermark_id: watermarkGrantSchema.shape.id.optional() });
export type EdgeAuditRecord = z.infer<typeof edgeAuditRecordSchema>;

export const auditPullResponseSchema = z
  .object({ acked: z.number().int(), records: z.array(edgeAuditRecordSchema) })
  .meta({ id: 'AuditPullResponse' });
export type AuditPullResponse = z.infer<typeof auditPullResponseSchema>;

/**
 * Origin -> edge: whether the edge holds a check it decided that the origin has not collected yet,
 * so a receipt asked for too early answers `receipt_pending` rather than `not_found`
 * (docs/DECISIONS.md, "A receipt that is not there yet says so"). The answer carries only what the
 * audit log's visibility rests on, for the origin to judge whether the asker may know of the check.
 */
export const INTERNAL_AUDIT_LOOKUP_PATH = '/internal/v1/audit-lookup';

export const auditLookupRequestSchema = z.strictObject({ check_id: uuid }).meta({ id: 'AuditLookupRequest' });
export type AuditLookupRequest = z.infer<typeof auditLookupRequestSchema>;

export const heldAuditRecordSchema = auditRecordSchema.pick({ voice_id: true, platform_name: true, caller_type: true, caller_id: true });
export type HeldAuditRecord = z.infer<typeof heldAuditRecordSchema>;

export const auditLookupResponseSchema = z
  .object({
    held: heldAuditRecordSchema.nullable().describe('the pending record of the check, as far as visibility needs; null when none'),
  })
  .meta({ id: 'AuditLookupResponse' });
export type AuditLookupResponse = z.infer<typeof auditLookupResponseSchema>;
