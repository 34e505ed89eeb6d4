import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { fbankFixtureDir, readFbankFixtures, readFloat32File, readPcm16Wav } from '../testing/fixtures.js';
import { FbankExtractor } from './fbank.js';

function maxAbsDifference(a: Float32Array, b: Float32Array): number {
  let worst = 0;
  for (let i = 0; i < a.length; i++) worst = Math.max(worst, Math.abs(a[i]! - b[i]!));
  return worst;
}

describe('Kaldi fbank', () => {
  const fixtures = Object.entries(readFbankFixtures());

  it('has fixtures for both model families', () => {
    expect(fixtures.map(([, f]) => f.window_type).sort()).toContain('povey');
    expect(fixtures.map(([, f]) => f.window_type)).toContain('hamming');
  });

  for (const [name, fixture] of fixtures) {
    for (const variant of ['raw', 'cmn'] as const) {
      it(`matches torchaudio for ${name} (${variant}) within 1e-3`, () => {
        const extractor = new FbankExtractor({
          sampleRate: fixture.sample_rate,
          numMelBins: fixture.bins,
          frameLengthMs: fixture.frame_length_ms,
          frameShiftMs: fixture.frame_shift_ms,
          preemphasis: fixture.preemphasis,
          removeDcOffset: fixture.remove_dc_offset,
          snipEdges: fixture.snip_edges,
          windowType: fixture.window_type,
          waveformScale: fixture.waveform_scale,
          cmn: variant === 'cmn',
        });
        const waveform = readPcm16Wav(path.join(fbankFixtureDir, fixture.wav));
        expect(waveform.length).toBe(fixture.samples);
        const features = extractor.compute(waveform);
        const expected = readFloat32File(path.join(fbankFixtureDir, variant === 'raw' ? fixture.files.raw : fixture.files.mean_normalized));
        expect(features.frames).toBe(fixture.frames);
        expect(features.data.length).toBe(expected.length);
        expect(maxAbsDifference(features.data, expected)).toBeLessThan(1e-3);
      });
    }
  }

  it('gives no frames for input shorter than one window', () => {
    const extractor = new FbankExtractor({
      sampleRate: 16000,
      numMelBins: 80,
      frameLengthMs: 25,
      frameShiftMs: 10,
      preemphasis: 0.97,
      removeDcOffset: true,
      snipEdges: true,
      windowType: 'povey',
      waveformScale: 1,
      cmn: true,
    });
    expect(extractor.compute(new Float32Array(399)).frames).toBe(0);
    expect(extractor.compute(new Float32Array(400)).frames).toBe(1);
  });
});
