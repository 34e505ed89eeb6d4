import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { speechDir } from '../../origin/src/testing/fixtures.js';

/** Real speech committed to the repository (`fixtures/README.md`): the clone needs nothing beside it. */
export const SPEECH_DIR = speechDir;

/** A speaker's clips of the committed speechocean762 recordings, by clip name. */
const clipsOf = (speaker: string, clips: string[]) => clips.map((clip) => join(SPEECH_DIR, 'so762', speaker, `${clip}.opus`));

/**
 * Eight clips of one speaker, about 25 s of audio: more than the 10 s of speech an enrollment needs,
 * and each file holds the 1 s of speech enrollment asks of every file.
 */
export const ENROLL_CLIPS = clipsOf('SPEAKER0003', [
  '000030012',
  '000030024',
  '000030040',
  '000030047',
  '000030049',
  '000030051',
  '000030054',
  '000030059',
]);

/** A second speaker's ten clips, also well over the 10 s of speech an enrollment needs. */
export const OTHER_SPEAKER_CLIPS = readdirSync(join(SPEECH_DIR, 'so762', 'SPEAKER0024'))
  .filter((name) => name.endsWith('.opus'))
  .sort()
  .map((name) => join(SPEECH_DIR, 'so762', 'SPEAKER0024', name));
