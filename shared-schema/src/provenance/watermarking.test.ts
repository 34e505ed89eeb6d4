import { sign as signBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  authorizationAssertionOf,
  embedAuthorization,
  readWatermarkPcm,
  readWavWatermark,
  verifyFile,
  watermarkPcm,
  watermarkWav,
} from '../client/provenance.js';
import { AUTHORIZATION_ASSERTION_LABEL, authorizationAssertionBytes, TRAINED_ALGORITHMIC_MEDIA } from '../provenance.js';
import { testCertificateAuthority, testLeafCertificate } from '../testing/provenance-ca.js';
import { testApprovalReceipt } from '../testing/provenance-receipt.js';
import { WATERMARK_ALGORITHM, type WatermarkGrant } from '../watermark/index.js';
import { snrDb } from '../watermark/quality.js';
import { readManifestStore, signAsset } from './c2pa.js';
import { readCredentials } from './credentials.js';
import { SOFT_BINDING_LABEL, softBindingAssertion } from './watermarking.js';
import { readWavPcm } from './wav-pcm.js';

const fixture = (path: string) => new Uint8Array(readFileSync(new URL(`../../../fixtures/${path}`, import.meta.url)));
/** 8.4 s of read speech, 16 kHz mono PCM16: longer than one frame of the mark. */
const SPEECH = fixture('fbank/b.wav');
const GRANT: WatermarkGrant = { alg: WATERMARK_ALGORITHM, id: '5a3c0e91b7' };

const ca = testCertificateAuthority('Acme TTS Content Credentials CA', 'Acme TTS');
const leaf = testLeafCertificate({ commonName: 'Acme TTS signer', organization: 'Acme TTS', issuer: ca });
const signer = { certificateChain: [leaf.pem, ca.pem], privateKey: leaf.privateKey };

/** The RIFF file without its chunks of `id` (a re-mux that drops the manifest store, as an upload pipeline does). */
function withoutChunk(wav: Uint8Array, id: string): Uint8Array {
  const view = new DataView(wav.buffer, wav.byteOffset, wav.byteLength);
  const kept: Uint8Array[] = [wav.slice(0, 12)];
  for (let at = 12; at + 8 <= wav.length; ) {
    const size = view.getUint32(at + 4, true);
    const end = Math.min(wav.length, at + 8 + size + (size & 1));
    if (String.fromCharCode(...wav.subarray(at, at + 4)) !== id) kept.push(wav.subarray(at, end));
    at = end;
  }
  const out = new Uint8Array(kept.reduce((sum, part) => sum + part.length, 0));
  let at = 0;
  for (const part of kept) {
    out.set(part, at);
    at += part.length;
  }
  new DataView(out.buffer).setUint32(4, out.length - 8, true);
  return out;
}

interface ManifestJson {
  validation_state: string;
  active_manifest: string;
  manifests: Record<string, { assertions: { label: string; data: { actions?: { action: string }[] } }[] }>;
}
const activeAssertions = async (signed: Uint8Array) => {
  const store = (await readManifestStore(signed, 'audio/wav', { trustAnchors: ca.pem })) as ManifestJson;
  return { state: store.validation_state, assertions: store.manifests[store.active_manifest]!.assertions };
};

describe('embedAuthorization with the redeem answer’s watermark', { timeout: 60_000 }, () => {
  it('marks the WAV, adds the soft binding and the watermarked action, and c2pa-rs validates the manifest', async () => {
    const { receipt, entry, verifierKey } = await testApprovalReceipt();
    const signed = await embedAuthorization(SPEECH, 'audio/wav', { check_id: entry.check_id, receipt, watermark: GRANT }, signer);

    expect(readWavWatermark(signed)).toMatchObject({ found: true, id: GRANT.id });
    const { state, assertions } = await activeAssertions(signed);
    expect(state).toBe('Trusted');
    expect(assertions.find((assertion) => assertion.label === 'c2pa.soft-binding')?.data).toEqual({
      alg: WATERMARK_ALGORITHM,
      blocks: [{ scope: { timespan: { start: 0, end: 8375 } }, value: GRANT.id }], // 134,000 samples at 16 kHz
      pad: [],
    });
    const actions = assertions.find((assertion) => assertion.label === 'c2pa.actions.v2')?.data.actions ?? [];
    expect(actions).toMatchObject([
      { action: 'c2pa.created', digitalSourceType: TRAINED_ALGORITHMIC_MEDIA },
      { action: 'c2pa.watermarked' },
    ]);
    expect((await readCredentials(signed, 'audio/wav', { trustAnchors: ca.pem }))?.failure_codes).toEqual([]);

    // Rate and bit depth kept; the mark is inaudible by the measure.
    const before = readWavPcm(SPEECH);
    const after = readWavPcm(signed);
    expect([after.sampleRate, after.encoding, after.bitsPerSample, after.channels.length]).toEqual([16_000, 'int', 16, 1]);
    expect(snrDb(before.channels[0]!, after.channels[0]!)).toBeGreaterThanOrEqual(25);

    const offline = await verifyFile(signed, 'audio/wav', { verifierKey, trustAnchors: ca.pem });
    expect(offline.verdict).toBe('authorized');
    expect(offline.watermark).toEqual({ read: true, found: true, id: GRANT.id, soft_binding_id: GRANT.id, agrees_with_soft_binding: true });
  });

  it('leaves a mark that still reads once the manifest is stripped, and that alone authorizes nothing offline', async () => {
    const { receipt, entry, verifierKey } = await testApprovalReceipt();
    const signed = await embedAuthorization(SPEECH, 'audio/wav', { check_id: entry.check_id, receipt, watermark: GRANT }, signer);
    const stripped = withoutChunk(signed, 'C2PA');
    expect(stripped.length).toBeLessThan(signed.length);
    expect(await readCredentials(stripped, 'audio/wav')).toBeNull();

    expect(readWavWatermark(stripped)).toMatchObject({ found: true, id: GRANT.id });
    const offline = await verifyFile(stripped, 'audio/wav', { verifierKey, trustAnchors: ca.pem });
    expect(offline.verdict).toBe('no_credentials');
    expect(offline.watermark).toEqual({ read: true, found: true, id: GRANT.id, soft_binding_id: null, agrees_with_soft_binding: null });
  });

  it('without a watermark writes the audio as it was, with no soft binding and no watermarked action', async () => {
    const { receipt, entry, verifierKey } = await testApprovalReceipt();
    const signed = await embedAuthorization(SPEECH, 'audio/wav', { check_id: entry.check_id, receipt }, signer);
    expect(readWavPcm(signed).channels).toEqual(readWavPcm(SPEECH).channels);
    const { assertions } = await activeAssertions(signed);
    expect(assertions.map((assertion) => assertion.label)).not.toContain('c2pa.soft-binding');
    expect(JSON.stringify(assertions)).not.toContain('c2pa.watermarked');
    const offline = await verifyFile(signed, 'audio/wav', { verifierKey, trustAnchors: ca.pem });
    expect([offline.verdict, offline.watermark]).toEqual([
      'authorized',
      { read: true, found: false, id: null, soft_binding_id: null, agrees_with_soft_binding: null },
    ]);
  });

  it('reports a mark that names another id than the soft binding, without changing the verdict', async () => {
    const { receipt, entry, verifierKey } = await testApprovalReceipt();
    const other = '0123456789';
    // Audio that carries another synthesis's mark, signed with a soft binding that names this grant's id.
    const signed = await signAsset(
      watermarkWav(SPEECH, { alg: WATERMARK_ALGORITHM, id: other }).wav,
      'audio/wav',
      {
        claimGenerator: { name: 'test', version: '1' },
        assertions: [
          { label: 'c2pa.actions.v2', data: { actions: [{ action: 'c2pa.created', digitalSourceType: TRAINED_ALGORITHMIC_MEDIA }] } },
          {
            label: AUTHORIZATION_ASSERTION_LABEL,
            data: JSON.parse(
              new TextDecoder().decode(authorizationAssertionBytes(authorizationAssertionOf({ check_id: entry.check_id, receipt }))),
            ),
            kind: 'Json',
          },
          { label: SOFT_BINDING_LABEL, data: softBindingAssertion(GRANT, 8375) },
        ],
      },
      {
        certificateChain: [leaf.der, ca.der],
        algorithm: 'es256',
        sign: (data) => signBytes('sha256', data, { key: leaf.privateKey, dsaEncoding: 'ieee-p1363' }),
      },
    );
    const offline = await verifyFile(signed, 'audio/wav', { verifierKey, trustAnchors: ca.pem });
    expect(offline.watermark).toEqual({ read: true, found: true, id: other, soft_binding_id: GRANT.id, agrees_with_soft_binding: false });
    expect(offline.verdict).toBe('authorized');
  });

  it('declares the mark of an MP3 whose PCM its platform marked before encoding', async () => {
    const { receipt, entry, verifierKey } = await testApprovalReceipt();
    // A marked file made by tools/watermark/make-fixtures.ts: flite speech marked as PCM, then MP3 at 64 kbps.
    const fixtures = JSON.parse(new TextDecoder().decode(fixture('watermark/manifest.json'))) as { files: { file: string; id: string }[] };
    const grant: WatermarkGrant = { alg: WATERMARK_ALGORITHM, id: fixtures.files.find((each) => each.file === 'a.mp3-64k.mp3')!.id };
    const mp3 = fixture('watermark/a.mp3-64k.mp3');
    const signed = await embedAuthorization(mp3, 'audio/mpeg', { check_id: entry.check_id, receipt, watermark: grant }, signer, {
      markedPcmSeconds: 6.3,
    });
    const store = (await readManifestStore(signed, 'audio/mpeg', { trustAnchors: ca.pem })) as ManifestJson;
    const assertions = store.manifests[store.active_manifest]!.assertions;
    expect(store.validation_state).toBe('Trusted');
    expect(assertions.find((assertion) => assertion.label === 'c2pa.soft-binding')?.data).toEqual(softBindingAssertion(grant, 6300));
    expect(JSON.stringify(assertions)).toContain('"action":"c2pa.watermarked"');
    // The client does not decode MP3: the mark is the service's to read; the soft binding is reported.
    const offline = await verifyFile(signed, 'audio/mpeg', { verifierKey, trustAnchors: ca.pem });
    expect([offline.verdict, offline.watermark]).toEqual([
      'authorized',
      { read: false, found: false, id: null, soft_binding_id: grant.id, agrees_with_soft_binding: null },
    ]);
  });

  it('refuses a grant the service does not issue, and a watermark for a format it does not mark', async () => {
    const { receipt, entry } = await testApprovalReceipt();
    const embed = (watermark: unknown, mime: 'audio/wav' | 'audio/mpeg' = 'audio/wav') =>
      embedAuthorization(SPEECH, mime, { check_id: entry.check_id, receipt, watermark: watermark as WatermarkGrant }, signer);
    for (const bad of [
      { alg: 'com.microsoft.wavmark.1', id: GRANT.id },
      { alg: WATERMARK_ALGORITHM, id: '5A3C0E91B7' },
      { alg: WATERMARK_ALGORITHM, id: '5a3c0e91b' },
      { alg: WATERMARK_ALGORITHM, id: 12345 },
      { alg: WATERMARK_ALGORITHM },
    ]) {
      await expect(embed(bad)).rejects.toThrow(/watermark grant is not one the service issues/);
      expect(() => watermarkPcm(new Float32Array(16_000), 16_000, bad as WatermarkGrant)).toThrow(TypeError);
    }
    await expect(embed(GRANT, 'audio/mpeg')).rejects.toThrow(/only audio\/wav is marked here/);
    const declare = (watermark: WatermarkGrant | undefined, mime: 'audio/wav' | 'audio/mpeg', markedPcmSeconds: number) =>
      embedAuthorization(SPEECH, mime, { check_id: entry.check_id, receipt, watermark }, signer, { markedPcmSeconds });
    await expect(declare(undefined, 'audio/mpeg', 6)).rejects.toThrow(/markedPcmSeconds declares/);
    await expect(declare(GRANT, 'audio/wav', 6)).rejects.toThrow(/markedPcmSeconds declares/);
    await expect(declare(GRANT, 'audio/mpeg', 0)).rejects.toThrow(/markedPcmSeconds declares/);
    expect(() => watermarkWav(fixture('audio/a.alaw.wav'), GRANT)).toThrow(/neither integer PCM/);
  });
});

describe('watermarkPcm, the PCM path', { timeout: 60_000 }, () => {
  it('is the marking the WAV path writes, to within the rounding to 16 bits', () => {
    const pcm = readWavPcm(SPEECH);
    const fromPcm = watermarkPcm(pcm.channels[0]!, pcm.sampleRate, GRANT);
    const fromWav = readWavPcm(watermarkWav(SPEECH, GRANT).wav).channels[0]!;
    let worst = 0;
    for (let i = 0; i < fromPcm.length; i++) worst = Math.max(worst, Math.abs(fromPcm[i]! - fromWav[i]!));
    expect(worst).toBeLessThanOrEqual(1 / 32_768);
    expect(worst).toBeGreaterThan(0);
    expect(readWatermarkPcm(fromPcm, pcm.sampleRate)).toMatchObject({ found: true, id: GRANT.id });
  });

  it('marks the downmix of every channel: a silent channel stays silent, dual mono stays dual mono, 24 bits stay 24', () => {
    const original = fixture('audio/a.left-only.wav');
    const leftOnly = watermarkWav(original, GRANT).wav;
    const [left, right] = readWavPcm(leftOnly).channels;
    const originalLeft = readWavPcm(original).channels[0]!;
    expect(right!.every((sample) => sample === 0)).toBe(true);
    expect(left!.some((sample, i) => sample !== originalLeft[i])).toBe(true);
    expect(readWavWatermark(leftOnly)).toMatchObject({ found: true, id: GRANT.id });

    const mono = readWavPcm(SPEECH).channels[0]!;
    const [first, second] = watermarkPcm([mono, mono], 16_000, GRANT);
    expect(first).toEqual(second);
    expect(first).toEqual(watermarkPcm(mono, 16_000, GRANT));

    const deep = readWavPcm(watermarkWav(fixture('audio/a.pcm24.wav'), GRANT).wav);
    expect([deep.bitsPerSample, deep.encoding]).toEqual([24, 'int']);
    expect(readWatermarkPcm(deep.channels, deep.sampleRate)).toMatchObject({ found: true, id: GRANT.id });
  });
});
