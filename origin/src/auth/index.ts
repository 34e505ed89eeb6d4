/** What other domains use of auth: who is calling (`Principal`, `Caller`, read from the request the guards checked). */

export type { SigningJwk } from './access-tokens.js';
export { actorOf, type Caller, callerOf, credentialOf, type Principal, principalOf } from './guard.js';
