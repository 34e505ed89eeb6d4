import { type AuditEntry, ProblemError } from '@vip/shared-schema';
import type { AuditReceipt } from '@vip/shared-schema/routes/origin/audit';
import { approvalOfToken, type TransparencyLog } from '../audit/index.js';
import type { Executor } from '../db/client.js';
import * as store from './store.js';

/**
 * A watermark id resolved (docs/DECISIONS.md#the-watermark-in-the-service): the redemption that minted it and the
 * approval whose token that redemption redeemed, with the approval's receipt from this log.
 */
export interface ResolvedMark {
  watermarkId: string;
  redemptionCheckId: string;
  voiceId: string;
  platformName: string;
  intendedUse: string;
  redeemedAt: Date;
  /** The chained `gate.decision` entry; null while it still waits in the queue for its place. */
  approval: Omit<AuditEntry, 'entry_hash'> | null;
  /** The approval's receipt; null until a signed checkpoint covers it. */
  receipt: AuditReceipt | null;
}

/**
 * Every registration of `watermarkId`, oldest first: one, as a rule; none when this service never
 * issued it; more only when two redemptions drew the same random id (see watermarkMarks).
 */
export async function resolveMark(db: Executor, tlog: TransparencyLog, watermarkId: string): Promise<ResolvedMark[]> {
  const marks = await store.marksOfId(db, watermarkId);
  return Promise.all(
    marks.map(async (mark) => {
      const approvalJson = await approvalOfToken(db, mark.voiceId, mark.tokenJti);
      const approval = approvalJson === null ? null : (JSON.parse(approvalJson) as Omit<AuditEntry, 'entry_hash'>);
      return {
        watermarkId: mark.watermarkId,
        redemptionCheckId: mark.redemptionCheckId,
        voiceId: mark.voiceId,
        platformName: mark.platformName,
        intendedUse: mark.intendedUse,
        redeemedAt: mark.redeemedAt,
        approval,
        receipt: approval && (await receiptOrNull(tlog, approval.check_id)),
      };
    }),
  );
}

/** The approval's receipt as the service itself reads it; null while no signed checkpoint covers it. */
async function receiptOrNull(tlog: TransparencyLog, checkId: string): Promise<AuditReceipt | null> {
  try {
    return await tlog.receipt({ kind: 'admin' }, checkId);
  } catch (error) {
    if (error instanceof ProblemError && error.code === 'receipt_pending') return null;
    throw error;
  }
}
