import type { RouteContract } from '@vip/shared-schema';
import { edgeRoutes } from '@vip/shared-schema/routes/edge';
import * as originContractFiles from '@vip/shared-schema/routes/origin/index';

/**
 * Which routes each threat of the security suite covers, read from the route contracts: a new route
 * joins these lists by its declaration alone, and test/architecture/security-cases.test.ts holds
 * each threat's cases to them within seconds of a change (the threat files need a running service
 * and take minutes).
 */

const isContract = (value: unknown): value is RouteContract =>
  typeof value === 'object' && value !== null && 'operationId' in value && 'path' in value && 'method' in value;

/** Every route the origin declares, from every contract file (routes/origin/index.ts lists them all). */
export const ORIGIN_CONTRACTS: RouteContract[] = Object.values(originContractFiles)
  .flatMap((file) => Object.values(file))
  .filter(isContract);
export const EDGE_CONTRACTS: RouteContract[] = Object.values(edgeRoutes);

const operationIds = (contracts: RouteContract[]) => [...new Set(contracts.map((contract) => contract.operationId))].sort();

/** Owner-scoped: Bearer routes an owner may call (admin-only routes declare `forbidden`). */
export const OWNER_SCOPED = operationIds(ORIGIN_CONTRACTS.filter((c) => c.auth.includes('bearer') && !c.problems.includes('forbidden')));
/** Platform-scoped: routes an API key may call, on either plane. */
export const PLATFORM_SCOPED = operationIds([...ORIGIN_CONTRACTS, ...EDGE_CONTRACTS].filter((c) => c.auth.includes('apiKey')));
/** Admin-only: routes that answer `forbidden` to a non-admin. */
export const ADMIN_ONLY = ORIGIN_CONTRACTS.filter((c) => c.problems.includes('forbidden'));
/** Routes a caller sends a body to; internal (HMAC-signed, origin-to-edge) routes are out of reach. */
export const BODY_ROUTES = operationIds(
  [...ORIGIN_CONTRACTS, ...EDGE_CONTRACTS].filter((c) => (c.body || c.multipart) && !c.auth.includes('internalSignature')),
);
