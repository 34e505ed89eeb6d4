/**
 * The audio watermark (docs/WATERMARK.md): a 40-bit id, issued by the service for one synthesis,
 * written inaudibly into the audio and read back after re-encoding, resampling, noise, gain
 * changes, cuts and insertion. Pure TypeScript: the same code marks in Node, in a Worker and in a
 * browser, and detects there too.
 *
 * Who holds what: the key below is public (a platform must mark its own PCM, and anyone may run
 * the public detector), so the key does not stop anyone from writing a mark; what a mark is worth
 * comes from its id, which only the service issues (unguessable: 2⁴⁰, registered per synthesis) and
 * only the service resolves to an authorization, and from verify's checks that the marked audio is
 * the voice the authorization was for.
 */

import { z } from 'zod';
import { type DetectOptions, detectWatermark, type WatermarkDetection } from './detect.js';
import { embedWatermark } from './embed.js';
import { frameSeconds, WATERMARK_LAYOUT } from './layout.js';
import { isWatermarkId, WATERMARK_ID_BITS, WATERMARK_ID_PATTERN } from './payload-code.js';

export { detectWatermark, type WatermarkDetection } from './detect.js';
export { embedWatermark } from './embed.js';
export { isWatermarkId, WATERMARK_ID_BITS } from './payload-code.js';
export { logSpectralDistanceDb, silenceReport, snrDb } from './quality.js';

/** The algorithm's name, as a C2PA soft-binding `alg` (an unregistered algorithm, in our namespace). */
export const WATERMARK_ALGORITHM = 'org.vip.audio-watermark.qim-band-pairs.2';
/** The public key of this algorithm version: the keyed layout everyone marks and reads with. */
export const WATERMARK_KEY = 'vip-watermark-2';
/** One repeat of the payload, in seconds: a soft-binding block's time span is a multiple of it. */
export const WATERMARK_FRAME_SECONDS = frameSeconds(WATERMARK_LAYOUT);

/**
 * What a platform needs to mark the audio of one synthesis: the redeem answer's `watermark` object.
 * `id` is the payload (10 hex digits), issued and registered by the service for this synthesis.
 */
export const watermarkGrantSchema = z
  .object({
    alg: z.literal(WATERMARK_ALGORITHM),
    id: z
      .string()
      .regex(WATERMARK_ID_PATTERN)
      .describe('the payload to write: 40 bits as 10 lowercase hex digits, issued for this one synthesis'),
  })
  .meta({ id: 'WatermarkGrant' });
export type WatermarkGrant = z.infer<typeof watermarkGrantSchema>;

/** A fresh random id (40 bits from the platform's CSPRNG: crypto.getRandomValues in Node, Workers and browsers). */
export function newWatermarkId(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(WATERMARK_ID_BITS / 8));
  return Array.from(bytes, (byte) => byte.toString(16).padStart(2, '0')).join('');
}

/** Marks mono PCM (`samples` at full scale ±1, any rate from 8 to 192 kHz) with the grant's id. */
export function markPcm(samples: Float32Array, sampleRate: number, grant: WatermarkGrant): Float32Array {
  if (grant.alg !== WATERMARK_ALGORITHM) throw new RangeError(`unknown watermark algorithm ${grant.alg}`);
  if (!isWatermarkId(grant.id)) throw new RangeError('a watermark id is 10 lowercase hex digits');
  return embedWatermark(samples, sampleRate, grant.id, WATERMARK_KEY);
}

/** Reads the mark of mono PCM: the id when one is found. Offline: an id means nothing until the service resolves it. */
export function readPcmWatermark(
  samples: Float32Array,
  sampleRate: number,
  options: Pick<DetectOptions, 'maxWindows'> = {},
): WatermarkDetection {
  return detectWatermark(samples, sampleRate, WATERMARK_KEY, options);
}
