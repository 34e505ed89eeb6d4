/** What other parts of the origin use of provenance: the edge collector registers the watermark ids handed over with redemptions. */
export { registerMarks } from './store.js';
