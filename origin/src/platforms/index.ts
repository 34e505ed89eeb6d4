/** What other domains use of the platforms. */
export { platformExists, platformIdByName } from './store.js';
