/** What other domains use of the licence requests: closing a voice's pending requests when its consent or the voice goes. */
export { closePendingRequests } from './service.js';
