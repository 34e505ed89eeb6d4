import {
  markPcm,
  readPcmWatermark,
  WATERMARK_ALGORITHM,
  type WatermarkDetection,
  type WatermarkGrant,
  watermarkGrantSchema,
} from '../watermark/index.js';
import { readWavPcm, writeWavPcm } from './wav-pcm.js';

/**
 * The audio watermark as a platform writes it into the audio of one synthesis (the redeem answer's
 * `watermark` grant) and as its C2PA soft binding names it (C2PA 2.2 §9.3 and §18, "Soft
 * Binding"). Pure TypeScript: the WAV path of `embedAuthorization` and a platform that encodes its
 * own audio run this same code.
 *
 * Channels: the mark is computed once, on the downmix (the mean of the channels, which is what a
 * decoder, the service's verify and the detector read), and the change it makes is added to each
 * channel in proportion to that channel's share of the downmix (the least-squares coefficient
 * ⟨channel, mix⟩ / ⟨mix, mix⟩; the coefficients average to 1). So the downmix carries exactly the
 * mark, both channels of dual mono carry the same mark, a silent channel stays silent (and frames
 * silent in every channel stay silent), and no channel's SNR over the file is below the downmix's
 * (Cauchy–Schwarz).
 */

/** PCM as a platform holds it: one channel, or one array per channel, at full scale ±1. */
export type PcmChannels = Float32Array | readonly Float32Array[];

/** The redeem answer's grant, checked: the algorithm is ours and the id is 10 lowercase hex digits. */
export function checkedWatermarkGrant(grant: unknown): WatermarkGrant {
  const parsed = watermarkGrantSchema.safeParse(grant);
  if (!parsed.success) {
    const detail = parsed.error.issues.map((issue) => `${issue.path.join('.') || '(grant)'}: ${issue.message}`).join('; ');
    throw new TypeError(`the watermark grant is not one the service issues (${detail})`);
  }
  return parsed.data;
}

const channelsOf = (pcm: PcmChannels): readonly Float32Array[] => (pcm instanceof Float32Array ? [pcm] : pcm);

function downmix(channels: readonly Float32Array[]): Float32Array {
  if (channels.length === 1) return channels[0]!;
  const length = channels[0]!.length;
  if (channels.some((channel) => channel.length !== length)) throw new RangeError('the channels differ in length');
  const mix = new Float32Array(length);
  for (const channel of channels) for (let i = 0; i < length; i++) mix[i]! += channel[i]! / channels.length;
  return mix;
}

/**
 * Marks `pcm` (samples at `sampleRate`, 8–192 kHz) with the grant's id: the same shape out as in
 * (one array, or one per channel). Throws a TypeError on a grant the service did not issue in this
 * form (another algorithm, a malformed id).
 */
export function watermarkPcm<T extends PcmChannels>(pcm: T, sampleRate: number, grant: WatermarkGrant): T {
  const checked = checkedWatermarkGrant(grant);
  const channels = channelsOf(pcm);
  const mix = downmix(channels);
  const markedMix = markPcm(mix, sampleRate, checked);
  if (pcm instanceof Float32Array) return markedMix as T;
  let mixEnergy = 0;
  for (const sample of mix) mixEnergy += sample * sample;
  return channels.map((channel) => {
    let projection = 0;
    for (let i = 0; i < channel.length; i++) projection += channel[i]! * mix[i]!;
    const share = mixEnergy > 0 ? projection / mixEnergy : 0;
    const marked = Float32Array.from(channel);
    if (share !== 0) for (let i = 0; i < marked.length; i++) marked[i]! += share * (markedMix[i]! - mix[i]!);
    return marked;
  }) as unknown as T;
}

/** Reads the mark of `pcm` (its downmix): the id when one is found. Offline an id is only a reference; the service resolves it. */
export function readWatermarkPcm(pcm: PcmChannels, sampleRate: number): WatermarkDetection {
  return readPcmWatermark(downmix(channelsOf(pcm)), sampleRate);
}

/**
 * `wav` (PCM or float WAV) marked with the grant's id through `watermarkPcm`, written back at its
 * own rate and bit depth with every other chunk kept, and the soft-binding assertion that
 * describes the mark. Throws a TypeError on a WAV of another encoding or a grant not the service's.
 */
export function watermarkWav(
  wav: Uint8Array,
  grant: WatermarkGrant,
): { wav: Uint8Array; softBinding: ReturnType<typeof softBindingAssertion> } {
  const checked = checkedWatermarkGrant(grant);
  const pcm = readWavPcm(wav);
  const marked = writeWavPcm(wav, pcm, watermarkPcm(pcm.channels, pcm.sampleRate, checked));
  const durationMs = ((pcm.channels[0]?.length ?? 0) / pcm.sampleRate) * 1000;
  return { wav: marked, softBinding: softBindingAssertion(checked, durationMs) };
}

/** Reads the mark of a PCM or float WAV (manifest or not): the id when one is found, which only the service resolves. */
export function readWavWatermark(wav: Uint8Array): WatermarkDetection {
  const pcm = readWavPcm(wav);
  return readWatermarkPcm(pcm.channels, pcm.sampleRate);
}

// --- the C2PA soft binding --------------------------------------------------------------------------

export const SOFT_BINDING_LABEL = 'c2pa.soft-binding';
/** C2PA 2.2's action for "an invisible watermark was inserted … for the purpose of creating a soft binding". */
export const WATERMARKED_ACTION = 'c2pa.watermarked';

/**
 * The `c2pa.soft-binding` assertion of a marked file (C2PA 2.2 §18, soft-binding-map): our
 * algorithm, one block whose scope is the time span the mark was written over (the whole file, in
 * milliseconds from its start) and whose value is the id, and the empty `pad` c2pa-rs expects. The
 * value is the id as the service spells it (10 lowercase hex digits, what `matches/byBinding?value=`
 * takes): the CDDL types a value as algorithm-specific, and c2pa-rs reads it as a text string.
 */
export function softBindingAssertion(grant: WatermarkGrant, durationMs: number) {
  return {
    alg: grant.alg,
    blocks: [{ scope: { timespan: { start: 0, end: Math.round(durationMs) } }, value: grant.id }],
    pad: [] as number[],
  };
}

/** One block of a soft binding of our algorithm, as read from a manifest. */
export interface SoftBindingBlock {
  value: string;
  timespan: { start: number; end: number } | null;
}

/** The blocks of every `c2pa.soft-binding` assertion of our algorithm among `assertions` (a manifest's, as c2pa-rs reports them). */
export function watermarkSoftBindings(assertions: readonly { label: string; data: unknown }[]): SoftBindingBlock[] {
  return assertions
    .filter((assertion) => assertion.label === SOFT_BINDING_LABEL)
    .flatMap((assertion) => {
      const data = assertion.data as { alg?: unknown; blocks?: unknown };
      if (data?.alg !== WATERMARK_ALGORITHM || !Array.isArray(data.blocks)) return [];
      return data.blocks.flatMap((block: { value?: unknown; scope?: { timespan?: { start?: unknown; end?: unknown } } }) => {
        if (typeof block?.value !== 'string') return [];
        const span = block.scope?.timespan;
        const timespan = typeof span?.start === 'number' && typeof span.end === 'number' ? { start: span.start, end: span.end } : null;
        return [{ value: block.value, timespan }];
      });
    });
}
