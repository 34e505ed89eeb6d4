/** What other domains use of the platforms. */
export { platformExists, platformIdByName, platformNamesById } from './store.js';
