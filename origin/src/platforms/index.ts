/** What other domains use of the platforms. */
export { platformExists } from './store.js';
