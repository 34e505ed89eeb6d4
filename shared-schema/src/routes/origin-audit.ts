import { z } from 'zod';
import { auditEntrySchema } from '../audit.js';
import { cursor, hexDigest, isoTimestamp, uuid } from '../common.js';
import { defineRoute } from '../contract.js';
import { DECISIONS } from '../enums.js';
import { jwksSchema } from './origin-identity.js';

/** The origin's audit chain routes (DESIGN sections 5, 6 and 8). */

export const auditLogQuerySchema = z
  .strictObject({
    check_id: uuid.optional(),
    voice_id: uuid.optional(),
    platform_name: z.string().min(1).max(100).optional(),
    decision: z.enum(DECISIONS).optional(),
    /** Bounds on `recorded_at`, inclusive. */
    from: isoTimestamp.optional(),
    to: isoTimestamp.optional(),
    cursor: cursor.optional(),
    limit: z.coerce.number().int().min(1).max(1000).default(100),
  })
  .meta({ id: 'AuditLogQuery' });

export const auditLogPageSchema = z
  .object({ entries: z.array(auditEntrySchema), next_cursor: z.string().nullable() })
  .meta({ id: 'AuditLogPage' });

export const auditVerifyQuerySchema = z
  .strictObject({
    from_seq: z.coerce.number().int().positive().optional(),
    to_seq: z.coerce.number().int().positive().optional(),
  })
  .meta({ id: 'AuditVerifyQuery' });

export const auditVerdictSchema = z
  .object({
    valid: z.boolean(),
    /** Entries checked. */
    entries: z.number().int(),
    /** entry_hash of the last intact entry checked (the genesis hash when none). */
    head_hash: hexDigest,
    first_invalid_seq: z.number().int().nullable(),
  })
  .meta({ id: 'AuditVerdict' });

export const auditCheckpointSchema = z
  .object({
    tree_size: z.number().int(),
    head_hash: hexDigest,
    signed_at: isoTimestamp,
    key_id: z.string(),
    /** Compact JWS (EdDSA, `kid` = key_id) whose payload is the canonical JSON of {tree_size, head_hash, signed_at}. */
    signature: z.string(),
  })
  .meta({ id: 'AuditCheckpoint' });

export const auditCheckpointListSchema = z.object({ checkpoints: z.array(auditCheckpointSchema) }).meta({ id: 'AuditCheckpointList' });
export const auditCheckpointListQuerySchema = z.strictObject({ limit: z.coerce.number().int().min(1).max(1000).default(100) });

/** What every route reading audit entries can answer (the visibility rules are the audit log's). */
export const readerProblems = ['authentication_required', 'invalid_token', 'invalid_credentials', 'validation_failed'] as const;

export const auditLogRoute = defineRoute({
  method: 'get',
  path: '/api/v1/protect/audit-log',
  operationId: 'listAuditEntries',
  summary:
    'Audit entries, oldest first, paginated by seq. An owner sees entries of their (existing) voices, an admin all, an API key its platform',
  tag: 'audit',
  auth: ['bearer', 'apiKey'],
  query: auditLogQuerySchema,
  success: { status: 200, description: 'A page of entries', schema: auditLogPageSchema },
  problems: [...readerProblems],
});

export const auditVerifyRoute = defineRoute({
  method: 'get',
  path: '/api/v1/protect/audit-log/verify',
  operationId: 'verifyAuditChain',
  summary: 'Recompute the chain (or a seq range of it) and name the first broken seq (admin)',
  tag: 'audit',
  auth: ['bearer'],
  query: auditVerifyQuerySchema,
  success: { status: 200, description: 'Verdict', schema: auditVerdictSchema },
  problems: [...readerProblems, 'forbidden'],
});

export const auditCheckpointsRoute = defineRoute({
  method: 'get',
  path: '/api/v1/protect/audit-log/checkpoints',
  operationId: 'listAuditCheckpoints',
  summary: 'Signed checkpoints of the chain, newest first (public: they hold sizes and hashes only)',
  tag: 'audit',
  auth: ['none'],
  query: auditCheckpointListQuerySchema,
  success: { status: 200, description: 'Checkpoints', schema: auditCheckpointListSchema },
  problems: ['validation_failed'],
});

export const latestAuditCheckpointRoute = defineRoute({
  method: 'get',
  path: '/api/v1/protect/audit-log/checkpoints/latest',
  operationId: 'latestAuditCheckpoint',
  summary: 'The newest signed checkpoint',
  tag: 'audit',
  auth: ['none'],
  success: { status: 200, description: 'Checkpoint', schema: auditCheckpointSchema },
  problems: ['not_found'],
});

export const auditCheckpointKeysRoute = defineRoute({
  method: 'get',
  path: '/api/v1/protect/audit-log/checkpoints/keys',
  operationId: 'auditCheckpointKeys',
  summary: 'Public keys that verify checkpoint signatures (JWKS)',
  tag: 'audit',
  auth: ['none'],
  success: { status: 200, description: 'JSON Web Key Set', schema: jwksSchema },
  problems: [],
});
