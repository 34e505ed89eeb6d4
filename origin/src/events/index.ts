/** What other domains use of the domain events: recording one in the transaction of the change it reports. */
export { type NewEvent, recordEvent } from './store.js';
