import type { grantConsentRequestSchema } from '@vip/shared-schema';
import { ProblemError } from '@vip/shared-schema';
import type { z } from 'zod';
import type { Principal } from '../auth/guard.js';
import type { Database } from '../db/client.js';
import type { Runtime } from '../runtime.js';
import * as store from './store.js';

export interface BiometricConsentServiceDeps {
  db: Database;
  runtime: Runtime;
}

export class BiometricConsentService {
  constructor(private readonly deps: BiometricConsentServiceDeps) {}

  async grant(principal: Principal, request: z.output<typeof grantConsentRequestSchema>) {
    const { db, runtime } = this.deps;
    const row = await store.insertConsent(db, {
      id: runtime.newId(),
      ownerId: principal.userId,
      type: request.type,
      statementVersion: request.statement_version,
      grantedAt: runtime.clock.now(),
    });
    return {
      consent_id: row.id,
      type: row.type,
      statement_version: row.statementVersion,
      granted_at: row.grantedAt.toISOString(),
    };
  }
}

/**
 * An enrollment may go ahead on a biometric consent the caller granted and no voice has used yet.
 * A missing, foreign or spent consent answer alike, so consent ids cannot be probed.
 */
export function usableConsent(consent: store.ConsentRow | null, ownerId: string): store.ConsentRow {
  if (!consent || consent.ownerId !== ownerId || consent.voiceId !== null) {
    throw new ProblemError('consent_required', 'Enrollment needs an unused biometric consent of yours (POST /api/v1/consents).');
  }
  return consent;
}
