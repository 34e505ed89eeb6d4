/**
 * What other domains use of the voices (the only module that queries their table): reading and
 * locking a voice's row, its synthesis-consent column, its embedding, the 1:N search.
 */
export {
  findEmbeddingOfVoice,
  findVoice,
  findVoiceOfOwner,
  lockVoice,
  type NearVoice,
  nearestVoice,
  nearestVoices,
  ownersOfVoices,
  setConsentStatus,
  voiceIdsAfter,
  voiceIdsOfOwner,
  voiceStanding,
} from './store.js';
