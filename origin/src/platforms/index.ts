/** What other domains use of the platforms. */
export { republishApiKeys } from './publish.js';
export { platformExists, platformIdByName, platformNamesById } from './store.js';
