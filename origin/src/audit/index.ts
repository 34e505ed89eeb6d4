/** What other domains use of the audit chain: queuing their records in the transaction of a change, and the transparency log. */
export { queueAuditRecords } from './queue.js';
/** The edge link's collector (which of the edge's records the chain holds, under its lock) and a file's verification (was the token redeemed). */
export { approvalOfToken, knownCheckIds, lockCollector, redemptionLogged } from './store.js';
export type { EdgeAuditLookup, TransparencyLog } from './tlog-service.js';
