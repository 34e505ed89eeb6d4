import { readFileSync } from 'node:fs';
import path from 'node:path';
import { ProblemError } from '@vip/shared-schema/problem';
import { describe, expect, it } from 'vitest';
import { FORMAT_FIXTURES, OTHER_AUDIO_FIXTURES as OTHER } from '../testing/audio-fixtures.js';
import { fbankFixtureDir, readAudioFixture, readPcm16Wav } from '../testing/fixtures.js';
import { sniffContainer } from './container.js';
import { type DecodeLimits, decodeAudio } from './decode.js';

const limits: DecodeLimits = { maxBytes: 20 * 1024 * 1024, maxSeconds: 300, minSeconds: 0.5 };
const referenceWav = path.join(fbankFixtureDir, 'a.wav');
const reference = readPcm16Wav(referenceWav);
const referenceSeconds = reference.length / 16000;

/** Best normalised correlation with the reference over small lags (codecs add a few samples of delay). */
function correlation(samples: Float32Array, maxLag = 400): number {
  let best = -1;
  for (let lag = -maxLag; lag <= maxLag; lag += 1) {
    let dot = 0;
    let energyA = 0;
    let energyB = 0;
    for (let i = 2000; i < reference.length - 2000; i += 2) {
      const a = samples[i + lag] ?? 0;
      const b = reference[i]!;
      dot += a * b;
      energyA += a * a;
      energyB += b * b;
    }
    best = Math.max(best, dot / Math.sqrt(energyA * energyB || 1));
  }
  return best;
}

/** CPU time since `before`: unlike wall time, not inflated when the machine is busy. */
function cpuMs(before: NodeJS.CpuUsage): number {
  const used = process.cpuUsage(before);
  return (used.user + used.system) / 1000;
}

async function decodeError(bytes: Uint8Array, override: Partial<DecodeLimits> = {}): Promise<ProblemError> {
  const error = await decodeAudio(bytes, { ...limits, ...override }).then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(ProblemError);
  return error as ProblemError;
}

/** A minimal PCM WAV with the given samples (16-bit) or raw float32 payload. */
function wavBytes(
  payload: Uint8Array,
  format: { tag: 1 | 3; bits: 16 | 32; channels?: number; rate?: number; dataSize?: number },
): Uint8Array {
  const channels = format.channels ?? 1;
  const rate = format.rate ?? 16000;
  const header = Buffer.alloc(44);
  header.write('RIFF', 0, 'ascii');
  header.writeUInt32LE(36 + payload.length, 4);
  header.write('WAVEfmt ', 8, 'ascii');
  header.writeUInt32LE(16, 16);
  header.writeUInt16LE(format.tag, 20);
  header.writeUInt16LE(channels, 22);
  header.writeUInt32LE(rate, 24);
  header.writeUInt32LE((rate * channels * format.bits) / 8, 28);
  header.writeUInt16LE((channels * format.bits) / 8, 32);
  header.writeUInt16LE(format.bits, 34);
  header.write('data', 36, 'ascii');
  header.writeUInt32LE(format.dataSize ?? payload.length, 40);
  return new Uint8Array(Buffer.concat([header, payload]));
}

describe('decodeAudio', () => {
  describe('formats', () => {
    for (const fixture of FORMAT_FIXTURES) {
      it(`decodes ${fixture.name} to 16 kHz mono that matches the source`, async () => {
        const audio = await decodeAudio(readAudioFixture(fixture), limits);
        expect(audio.durationSeconds).toBeCloseTo(referenceSeconds, 1);
        expect(Math.abs(audio.samples.length - reference.length)).toBeLessThan(0.02 * 16000);
        expect(correlation(audio.samples)).toBeGreaterThan(0.97);
      });
    }

    it('reads the 24-bit file as WAVE_FORMAT_EXTENSIBLE', () => {
      const bytes = readAudioFixture(FORMAT_FIXTURES.find((fixture) => fixture.outputArgs.includes('pcm_s24le'))!);
      expect(Buffer.from(bytes).readUInt16LE(20)).toBe(0xfffe);
    });

    for (const [rate, fixture] of [
      [44100, OTHER.flac44k],
      [48000, OTHER.flac48k],
    ] as const) {
      it(`resamples ${rate / 1000} kHz audio to 16 kHz without shifting it`, async () => {
        const audio = await decodeAudio(readAudioFixture(fixture), limits);
        expect(audio.sourceSampleRate).toBe(rate);
        expect(audio.samples.length).toBeCloseTo(reference.length, -1);
        expect(correlation(audio.samples, 2)).toBeGreaterThan(0.99);
      });
    }

    it('downmixes stereo by averaging the channels', async () => {
      // Left carries the speech, right is silent: the mono mix is the speech at half amplitude.
      const audio = await decodeAudio(readAudioFixture(OTHER.leftOnlyStereo), limits);
      expect(audio.channels).toBe(2);
      let maxError = 0;
      for (let i = 0; i < reference.length; i++) maxError = Math.max(maxError, Math.abs(audio.samples[i]! - reference[i]! / 2));
      expect(maxError).toBeLessThan(1e-4);
    });

    it('measures clipping', async () => {
      const clipped = await decodeAudio(readAudioFixture(OTHER.loud), limits);
      const clean = await decodeAudio(new Uint8Array(readFileSync(referenceWav)), limits);
      expect(clipped.clippingRatio).toBeGreaterThan(0.05);
      expect(clean.clippingRatio).toBe(0);
    });
  });

  describe('container detection by magic bytes', () => {
    it('recognises every accepted format whatever the file is called', () => {
      // Only the first bytes are read: a prefix of each file, without a name, must be enough.
      for (const fixture of FORMAT_FIXTURES) {
        expect(sniffContainer(readAudioFixture(fixture).subarray(0, 4096)), fixture.name).toBe(fixture.container);
      }
    });

    it('refuses formats it does not claim (AIFF, ADTS AAC, Ogg FLAC, HEIC photo, text)', async () => {
      const heicPhoto = new Uint8Array([
        0,
        0,
        0,
        24,
        ...new TextEncoder().encode('ftypheic'),
        0,
        0,
        0,
        0,
        ...new TextEncoder().encode('mif1heic'),
      ]);
      const refused = [OTHER.aiff, OTHER.adtsAac, OTHER.oggFlac].map(readAudioFixture);
      for (const bytes of [...refused, heicPhoto, new TextEncoder().encode('not audio at all, just some text')]) {
        expect((await decodeError(bytes)).code).toBe('unsupported_format');
      }
    });
  });

  describe('bad input', () => {
    it('empty file -> empty_audio', async () => {
      expect((await decodeError(new Uint8Array(0))).code).toBe('empty_audio');
    });

    it('WAV with a header and no samples -> empty_audio', async () => {
      expect((await decodeError(wavBytes(new Uint8Array(0), { tag: 1, bits: 16 }))).code).toBe('empty_audio');
    });

    it('file over the byte limit -> payload_too_large', async () => {
      const bytes = new Uint8Array(readFileSync(referenceWav));
      expect((await decodeError(bytes, { maxBytes: bytes.length - 1 })).code).toBe('payload_too_large');
    });

    it('audio over the duration limit -> too_long, stopping as soon as the limit is passed', async () => {
      // 20 minutes of FLAC silence is ~170 kB but would be 230 MB of 48 kHz float samples.
      const long = readAudioFixture(OTHER.longSilence);
      const before = process.memoryUsage().arrayBuffers;
      const cpuBefore = process.cpuUsage();
      expect((await decodeError(long, { maxSeconds: 20 })).code).toBe('too_long');
      expect(cpuMs(cpuBefore)).toBeLessThan(2000);
      expect(process.memoryUsage().arrayBuffers - before).toBeLessThan(64 * 1024 * 1024);
      const bytes = new Uint8Array(readFileSync(referenceWav));
      expect((await decodeError(bytes, { maxSeconds: 2 })).code).toBe('too_long');
    });

    it('audio under the minimum duration -> too_short', async () => {
      const short = readAudioFixture(OTHER.short);
      expect((await decodeError(short)).code).toBe('too_short');
    });

    it('truncated header -> corrupt_audio; truncated data still decodes what is there', async () => {
      const bytes = readAudioFixture(FORMAT_FIXTURES.find((fixture) => fixture.container === 'flac')!);
      expect((await decodeError(bytes.subarray(0, 30))).code).toMatch(/corrupt_audio|empty_audio/);
      const half = await decodeAudio(bytes.subarray(0, Math.floor(bytes.length / 2)), limits);
      expect(half.durationSeconds).toBeLessThan(referenceSeconds);
      expect(half.durationSeconds).toBeGreaterThan(0.5);
    });

    it('WAV header whose channels and block size disagree -> corrupt_audio, at once', async () => {
      const bytes = wavBytes(new Uint8Array(64000), { tag: 1, bits: 16 });
      Buffer.from(bytes.buffer).writeUInt16LE(41729, 22); // 41,729 channels in 2-byte blocks
      const cpuBefore = process.cpuUsage();
      expect((await decodeError(bytes)).code).toBe('corrupt_audio');
      expect(cpuMs(cpuBefore)).toBeLessThan(100);
    });

    it('WAV of a codec other than PCM or float (A-law) -> unsupported_format', async () => {
      expect((await decodeError(readAudioFixture(OTHER.alawWav))).code).toBe('unsupported_format');
    });

    it('float WAV holding NaN -> corrupt_audio', async () => {
      const samples = new Float32Array(16000).fill(0.1);
      samples[100] = Number.NaN;
      const bytes = wavBytes(new Uint8Array(samples.buffer), { tag: 3, bits: 32 });
      expect((await decodeError(bytes)).code).toBe('corrupt_audio');
    });

    it('WAV declaring an absurd sample rate -> corrupt_audio', async () => {
      const bytes = wavBytes(new Uint8Array(32000), { tag: 1, bits: 16, rate: 1 });
      expect((await decodeError(bytes)).code).toBe('corrupt_audio');
    });

    it('MP3 frame headers followed by garbage -> a ProblemError, never a crash', async () => {
      const garbage = new Uint8Array(20000).map((_, i) => (i * 7919) & 0xff);
      garbage.set([0xff, 0xfb, 0x90, 0x64], 0);
      expect((await decodeError(garbage)).code).toMatch(/corrupt_audio|empty_audio|too_short/);
    });
  });
});
