import type { FastifyBaseLogger } from 'fastify';
import type { RoundOutcome } from '../../loops/background-loop.js';
import type { LicenseService } from './service.js';

/**
 * One round of the licence expiry job: marks licences past their expiry as expired, announcing
 * `license.expired` and publishing the edge index. The edge already stops honouring a licence at
 * its `expires_at`, so this keeps the records and the events right; the gate does not wait for it.
 */
export function licenseExpiryRound(licenses: LicenseService, log: FastifyBaseLogger): () => Promise<RoundOutcome> {
  return async () => {
    const expired = await licenses.expireDueLicenses();
    if (expired > 0) log.info({ expired }, 'licences expired');
    return 'idle';
  };
}
