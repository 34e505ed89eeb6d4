import { type LicenseTerms, licenseTermsSha256 } from '@vip/shared-schema';
import type { LicenseRow } from '../../db/schema.js';

/** A licence row's terms, in the licence answer's names: what its `license_terms_sha256` is computed over. */
export function licenseTermsOf(row: LicenseRow): LicenseTerms {
  return {
    license_id: row.id,
    voice_id: row.voiceId,
    platform_name: row.platformName,
    scopes: row.scopes,
    expires_at: row.expiresAt.toISOString(),
    description: row.description,
    description_source: row.descriptionSource,
    represented_by: row.representedBy,
    compensation: row.compensation,
  };
}

export const termsSha256Of = (row: LicenseRow): Promise<string> => licenseTermsSha256(licenseTermsOf(row));
