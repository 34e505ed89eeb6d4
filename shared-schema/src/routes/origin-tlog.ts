import { z } from 'zod';
import { uuid } from '../common.js';
import { defineRoute } from '../contract.js';
import { parseTilePath } from '../tlog.js';
import { readerProblems } from './origin-audit.js';

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
    'A receipt for one audit entry, verifiable offline against the log verifier key (same visibility as the entry); 503 receipt_pending with Retry-After until a signed checkpoint covers it',
  tag: 'audit',
  auth: ['bearer', 'apiKey'],
  params: auditReceiptParamsSchema,
  success: { status: 200, description: 'Receipt', schema: auditReceiptSchema },
  problems: [...readerProblems, 'not_found', 'receipt_pending'],
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
