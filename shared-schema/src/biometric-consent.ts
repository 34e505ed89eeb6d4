import { z } from 'zod';
import { isoTimestamp, uuid } from './common.js';
import { BIOMETRIC_CONSENT_STATEMENT, BIOMETRIC_CONSENT_STATEMENTS } from './pages.js';

/** The owner's biometric consent, which one enrollment uses up (its routes: routes/origin/biometric-consent.ts). */

export const CONSENT_TYPES = ['biometric'] as const;

export const grantConsentRequestSchema = z
  .strictObject({
    type: z.enum(CONSENT_TYPES),
    statement_version: z
      .string()
      .min(1)
      .max(64)
      .describe(
        `version of the consent statement the owner was shown: ${BIOMETRIC_CONSENT_STATEMENT.version} for a new consent (published: ${Object.keys(BIOMETRIC_CONSENT_STATEMENTS).join(', ')}; the owner console shows each in full)`,
      ),
    accepted: z.literal(true).describe('must be literally true'),
  })
  .meta({ id: 'GrantConsentRequest' });

export const consentSchema = z
  .object({ consent_id: uuid, type: z.enum(CONSENT_TYPES), statement_version: z.string(), granted_at: isoTimestamp })
  .meta({ id: 'Consent' });
