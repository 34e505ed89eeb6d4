/** What other domains use of screening: the protected voices a sample sounds like. */
export { protectedVoicesLike } from './service.js';
