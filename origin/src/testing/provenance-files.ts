import { readAudioFixture } from './fixtures.js';

/** A committed audio fixture by file name (the containers of `CREDENTIAL_FORMATS` in shared-schema/src/testing/provenance-files.ts). */
export const audioFixture = (file: string) => readAudioFixture({ file });
