import type { grantConsentRequestSchema } from '@vip/shared-schema';
import { type AuditRecord, auditCaller, BIOMETRIC_CONSENT_STATEMENT, buildAuditRecord, ProblemError } from '@vip/shared-schema';
import { grantBiometricConsentRoute } from '@vip/shared-schema/routes/origin/biometric-consent';
import type { z } from 'zod';
import { queueAuditRecords } from '../audit/index.js';
import { actorOf, type Principal } from '../auth/index.js';
import type { Database } from '../db/client.js';
import type { ConsentRow } from '../db/schema.js';
import type { Runtime } from '../runtime.js';
import * as store from './store.js';

export interface BiometricConsentServiceDeps {
  db: Database;
  runtime: Runtime;
}

export class BiometricConsentService {
  constructor(private readonly deps: BiometricConsentServiceDeps) {}

  /**
   * Records the consent and its audit entry together. The entry's `check_id` is the consent's id, so
   * an owner (or an administrator) finds in the audit log when which statement was accepted.
   */
  async grant(principal: Principal, request: z.output<typeof grantConsentRequestSchema>) {
    const { db, runtime } = this.deps;
    const now = runtime.clock.now();
    const row = await db.transaction(async (tx) => {
      const consent = await store.insertConsent(tx, {
        id: runtime.newId(),
        ownerId: principal.userId,
        type: request.type,
        statementVersion: request.statement_version,
        grantedAt: now,
      });
      await queueAuditRecords(tx, [consentAuditRecord(consent, principal)], now);
      return consent;
    });
    return {
      consent_id: row.id,
      type: row.type,
      statement_version: row.statementVersion,
      granted_at: row.grantedAt.toISOString(),
    };
  }
}

function consentAuditRecord(consent: ConsentRow, principal: Principal): AuditRecord {
  // No voice yet: the consent is spent by the enrollment that uses it.
  return buildAuditRecord('biometric_consent.granted', {
    check_id: consent.id,
    decided_at: consent.grantedAt,
    reason: `statement_version ${consent.statementVersion}`,
    ...auditCaller(actorOf(principal)),
  });
}

/**
 * The answer to an enrollment without a usable biometric consent: what to do first, and how
 * (the request that grants one, with the statement version in force), so a newcomer need not look it up.
 */
export const consentRequired = (why: string) =>
  new ProblemError(
    'consent_required',
    `${why} Give biometric consent first: ${grantBiometricConsentRoute.method.toUpperCase()} ${grantBiometricConsentRoute.path} with ` +
      `{"type":"biometric","statement_version":"${BIOMETRIC_CONSENT_STATEMENT.version}","accepted":true}, ` +
      'then send the consent_id it answers as a form field of this enrollment. Each consent serves one enrollment.',
  );

/** A biometric consent `ownerId` granted that no voice has used yet. */
export const isUnusedConsentOf = (consent: ConsentRow | null, ownerId: string): consent is ConsentRow =>
  consent !== null && consent.ownerId === ownerId && consent.voiceId === null;

/**
 * An enrollment may go ahead on a biometric consent the caller granted and no voice has used yet.
 * A missing, foreign or spent consent answer alike, so consent ids cannot be probed.
 */
export function usableConsent(consent: ConsentRow | null, ownerId: string): ConsentRow {
  if (!isUnusedConsentOf(consent, ownerId)) {
    throw consentRequired('This consent_id is not an unused biometric consent of yours.');
  }
  return consent;
}
