/** What other domains use of the audit chain: queuing their records in the transaction of a change, and the transparency log. */
export { queueAuditRecords } from './queue.js';
export { redemptionLogged } from './store.js';
export type { TransparencyLog } from './tlog-service.js';
