/** What other domains use of the domain events: recording one in the transaction of the change it reports. */
export { type NewEvent, ownersOfErasedVoices, recordEvent } from './store.js';
