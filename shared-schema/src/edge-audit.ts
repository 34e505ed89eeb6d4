import { z } from 'zod';
import { auditRecordSchema } from './audit.js';
import { uuid } from './common.js';

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

export const auditPullResponseSchema = z
  .object({ acked: z.number().int(), records: z.array(auditRecordSchema) })
  .meta({ id: 'AuditPullResponse' });
export type AuditPullResponse = z.infer<typeof auditPullResponseSchema>;
