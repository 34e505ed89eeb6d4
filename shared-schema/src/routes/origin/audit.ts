import { z } from 'zod';
import { AUDIT_ORDERS, auditEntrySchema } from '../../audit.js';
import { cursor, hexDigest, isoTimestamp, uuid } from '../../common.js';
import { defineRoute } from '../../contract.js';
import { DECISIONS } from '../../enums.js';
import { limits } from '../../limits.js';
import { parseTilePath } from '../../tlog.js';
import { jwksSchema } from './auth.js';

/** Served by origin/src/audit/: the audit chain (docs/CONTRACT.md#audit-chain; docs/INTEGRATION.md#10-audit-log) in routes.ts, the log as a transparency log in tlog-routes.ts. */

export const auditLogQuerySchema = z
  .strictObject({
    check_id: uuid.optional(),
    voice_id: uuid.optional(),
    platform_name: z.string().min(1).max(limits.platformNameMaxLength).optional(),
    decision: z.enum(DECISIONS).optional(),
    order: z.enum(AUDIT_ORDERS).default('seq').meta({
      description:
        '`seq` (the default): the order entries were appended in, `recorded_at` order. `decided_at`: the order the decisions were made in, ties broken by `seq`. A cursor continues the order it was issued for.',
    }),
    from: isoTimestamp
      .optional()
      .meta({ description: 'Inclusive lower bound on `recorded_at` (`order=seq`) or `decided_at` (`order=decided_at`).' }),
    to: isoTimestamp.optional().meta({ description: 'Inclusive upper bound, on the same time as `from`.' }),
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
const readerProblems = ['validation_failed'] as const;

export const auditLogRoute = defineRoute({
  method: 'get',
  path: '/api/v1/protect/audit-log',
  operationId: 'listAuditEntries',
  summary:
    'Audit entries, oldest first in `seq` or `decided_at` order. An owner sees entries of their (existing) voices, an admin all, an API key its platform',
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
  problems: [...readerProblems, 'invalid_credentials', 'forbidden'],
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

/** The audit log as a transparency log (docs/CONTRACT.md#closing-the-loop-receipts-pages): C2SP formats, public except receipts. */

export const auditReceiptParamsSchema = z.strictObject({ check_id: uuid });

export const auditReceiptSchema = z
  .object({
    check_id: uuid,
    /** Zero-based position of the entry in the log: its seq - 1. */
    index: z.number().int().nonnegative(),
    /** The entry exactly as the tree hashes it (the canonical JSON the chain hashes), as a string. */
    leaf: z.string(),
    /** A `c2sp.org/tlog-proof@v1` document: the index, the inclusion path and the signed checkpoint. */
    proof: z.string(),
  })
  .meta({ id: 'AuditReceipt' });
export type AuditReceipt = z.infer<typeof auditReceiptSchema>;

export const auditReceiptRoute = defineRoute({
  method: 'get',
  path: '/api/v1/protect/audit-log/{check_id}/receipt',
  operationId: 'auditReceipt',
  summary:
    'A receipt for one audit entry, verifiable offline against the log verifier key (same visibility as the entry); 503 receipt_pending with Retry-After until a signed checkpoint covers it, also while the gate holds a decision the origin has not collected; 503 unavailable when the gate cannot be asked',
  tag: 'audit',
  auth: ['bearer', 'apiKey'],
  params: auditReceiptParamsSchema,
  success: { status: 200, description: 'Receipt', schema: auditReceiptSchema },
  problems: [...readerProblems, 'not_found', 'receipt_pending', 'unavailable'],
});

export const tlogCheckpointRoute = defineRoute({
  method: 'get',
  path: '/tlog/checkpoint',
  operationId: 'tlogCheckpoint',
  summary: 'The newest signed checkpoint of the audit log (C2SP tlog-checkpoint: a signed note)',
  tag: 'transparency log',
  auth: ['none'],
  success: { status: 200, description: 'Signed note', contentType: 'text/plain; charset=utf-8' },
  problems: ['not_found'],
});

export const tlogVerifierKeyRoute = defineRoute({
  method: 'get',
  path: '/tlog/vkey',
  operationId: 'tlogVerifierKey',
  summary: 'The signed-note verifier key of the checkpoints: <origin>+<key ID>+<base64 Ed25519 key>',
  tag: 'transparency log',
  auth: ['none'],
  success: { status: 200, description: 'Verifier key', contentType: 'text/plain; charset=utf-8' },
  problems: [],
  crossOrigin: true,
});

/** OpenAPI cannot put slashes in a path parameter; `{tile}` stands for `<L>/<N>[.p/<W>]` of tlog-tiles. */
export const tlogTileParamsSchema = z.strictObject({
  tile: z
    .string()
    .transform((path, context) => {
      const tile = parseTilePath(path);
      if (!tile) {
        context.addIssue({ code: 'custom', message: 'expected <L>/<N>[.p/<W>]: L 0-63, N in 3-digit elements (x001/234), W 1-255' });
        return z.NEVER;
      }
      return tile;
    })
    .meta({ description: '<L>/<N>[.p/<W>] (tlog-tiles), e.g. 0/x001/234.p/17' }),
});

export const tlogTileRoute = defineRoute({
  method: 'get',
  path: '/tlog/tile/{tile}',
  operationId: 'tlogTile',
  summary:
    'A hash tile (C2SP tlog-tiles): <L>/<N>[.p/<W>], N in 3-digit elements (x001/x234/067). Immutable; entry contents stay behind the audit-log API',
  tag: 'transparency log',
  auth: ['none'],
  params: tlogTileParamsSchema,
  success: { status: 200, description: 'W (256 when full) hashes of 32 bytes', contentType: 'application/octet-stream' },
  problems: ['not_found', 'validation_failed'],
});
