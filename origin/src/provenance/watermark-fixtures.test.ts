/**
 * The watermark's robustness matrix over committed files (fixtures/watermark/, made once by
 * tools/watermark/make-fixtures.ts with ffmpeg, flite and festival): each file is decoded by the
 * service's own decoder, as verify will decode an upload (to 16 kHz mono), and the mark read from it.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { limits } from '@vip/shared-schema/limits';
import { readPcmWatermark, WATERMARK_ALGORITHM } from '@vip/shared-schema/watermark/index';
import { describe, expect, it } from 'vitest';
import { fixturesDir } from '../testing/fixtures.js';
import { decodeAudio } from '../voiceprint/decode.js';

const dir = path.join(fixturesDir, 'watermark');
const manifest = JSON.parse(readFileSync(path.join(dir, 'manifest.json'), 'utf8')) as {
  algorithm: string;
  files: { file: string; id: string | null; what: string }[];
};

describe('watermark fixtures, decoded as verify decodes them', () => {
  it('were made by this algorithm version', () => {
    expect(manifest.algorithm).toBe(WATERMARK_ALGORITHM);
  });

  it.each(manifest.files)('$file ($what)', async ({ file, id }) => {
    const decoded = await decodeAudio(new Uint8Array(readFileSync(path.join(dir, file))), {
      maxBytes: limits.audioMaxBytes,
      maxSeconds: limits.audioMaxSeconds,
      minSeconds: 0,
    });
    const read = readPcmWatermark(decoded.samples, 16_000);
    if (id === null) expect(read.found).toBe(false);
    else expect(read).toMatchObject({ found: true, id });
  });
});
