import { randomUUID } from 'node:crypto';
import { licenseSchema, type provenanceVerificationSchema, redeemResultSchema } from '@vip/shared-schema';
import { createOriginClient } from '@vip/shared-schema/client';
import { embedAuthorization, verifyFile } from '@vip/shared-schema/client/provenance';
import { edgeRoutes } from '@vip/shared-schema/routes/edge';
import { platformSigner } from '@vip/shared-schema/testing/provenance-files';
import { markPcm } from '@vip/shared-schema/watermark/index';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pcm16Wav } from '../../origin/src/testing/fixtures.js';
import { speakerRecordings } from '../../origin/src/testing/voiceprint.js';
import { decodeAudio } from '../../origin/src/voiceprint/decode.js';
import {
  consentedAndLicensed,
  enrolledVoice,
  eventually,
  issuePlatformKey,
  json,
  post,
  type RunningService,
  registeredOwner,
  startService,
} from '../support/service.js';

const admin = { email: 'admin@provenance-e2e.example', password: 'provenance-e2e-admin-password' };
const owner = { email: 'owner@provenance-e2e.example', password: 'provenance-e2e-owner-password' };
const SPEAKER = 'so762:SPEAKER9612';

describe('Content Credentials across both planes: gate, redeem, receipt, embed, verify (by the service and offline)', () => {
  let service: RunningService;
  let ownerToken: string;
  let apiKey: string;
  let voiceId: string;
  /** The hash of the licence's terms, as the licence answer shows it. */
  let licenseTermsSha256: string;
  const platformName = `Provenance E2E ${randomUUID().slice(0, 8)}`;
  const asPlatform = () => ({ 'x-api-key': apiKey });

  beforeAll(async () => {
    service = await startService({ env: { ADMIN_EMAIL: admin.email, ADMIN_PASSWORD: admin.password } });
    apiKey = await issuePlatformKey(service.originUrl, admin, platformName);
    ownerToken = await registeredOwner(service.originUrl, owner);
    voiceId = await enrolledVoice(service.originUrl, ownerToken, 'Provenance E2E Voice', speakerRecordings(SPEAKER, 0, 8));
    const licence = await consentedAndLicensed(service.originUrl, ownerToken, voiceId, platformName);
    licenseTermsSha256 = licenseSchema.parse(licence).license_terms_sha256;
  }, 240_000);

  afterAll(async () => {
    await service?.stop();
  });

  it('a platform signs the audio it synthesized after an approval, and the service judges the file `authorized`', async () => {
    // 1. The platform registers the CA its signing certificates come from.
    const { caPem, signer } = platformSigner(platformName);
    const platform = createOriginClient({ baseUrl: service.originUrl, apiKey });
    const registered = await platform.provenance.registerCertificate({ certificate_pem: caPem });
    expect((await platform.provenance.listCertificates()).certificates.map((certificate) => certificate.certificate_id)).toEqual([
      registered.certificate_id,
    ]);

    // 2. The gate approves and the token is redeemed.
    const gate = () =>
      post(
        `${service.edgeUrl}${edgeRoutes.preSynthesisCheck.path}`,
        { voice_id: voiceId, platform_name: platformName, intended_use: 'audiobook' },
        asPlatform(),
      );
    await eventually(async () => (await json(await gate())).status === 'approved', 20_000);
    const approved = await json(await gate());
    const redeemed = await post(`${service.edgeUrl}${edgeRoutes.redeem.path}`, { token: approved.authorization_token }, asPlatform());
    expect(redeemed.status).toBe(200);

    // 3. "Synthesis": this speaker's speech as a WAV. 4. The receipt, once a signed checkpoint covers the decision.
    const [speech] = speakerRecordings(SPEAKER, 8, 1);
    const audio = pcm16Wav((await decodeAudio(speech!, { maxBytes: 2 ** 24, maxSeconds: 60, minSeconds: 0 })).samples);
    // Asked right after the redemption, as INTEGRATION §13 does: pending (never "not found") until the
    // origin has collected, chained and signed the decision, which the client waits for.
    const receipt = await platform.audit.receipt(approved.check_id as string, { waitMs: 30_000 });

    // The logged approval names the terms of the licence that backed it; the file will carry them.
    expect(JSON.parse(receipt.leaf).license_terms_sha256).toBe(licenseTermsSha256);
    expect(licenseTermsSha256).toMatch(/^[0-9a-f]{64}$/);

    // 5. Embed, signed with the platform's own key.
    const signed = await embedAuthorization(audio, 'audio/wav', { check_id: approved.check_id as string, receipt }, signer);

    // 6. Anyone can verify it (publicly, or with a key for a higher limit); the redemption reaches the origin's log a moment after the gate.
    let result: ReturnType<typeof provenanceVerificationSchema.parse> | undefined;
    await eventually(async () => {
      result = await platform.provenance.verify({ data: signed, filename: 'synthesized.wav' });
      return result.verdict !== 'not_redeemed';
    }, 30_000);
    expect(result!.verdict, JSON.stringify(result)).toBe('authorized');
    expect(result!.credentials).toMatchObject({ state: 'trusted', signer: { registered_platform: platformName } });
    expect(result!.authorization).toMatchObject({
      check_id: approved.check_id,
      voice_id: voiceId,
      license_terms_sha256: licenseTermsSha256,
      receipt_verified: true,
      redeemed: true,
    });
    expect(result!.voice).toMatchObject({ compared_with: voiceId, is_same_speaker: true });

    // 7. And offline, with nothing but the log's key, a checkpoint saved now and the platform's CA.
    const verifierKey = await (await fetch(`${service.originUrl}/tlog/vkey`)).text();
    const checkpoint = await (await fetch(`${service.originUrl}/tlog/checkpoint`)).text();
    const offline = await verifyFile(signed, 'audio/wav', { verifierKey, checkpoint, trustAnchors: caPem });
    expect(offline.verdict, JSON.stringify(offline)).toBe('authorized');
    expect(offline.authorization).toMatchObject({
      check_id: approved.check_id,
      license_terms_sha256: licenseTermsSha256,
      receipt_verified: true,
      approved: true,
    });
    expect(['same', 'older']).toContain(offline.authorization.checkpoint?.relation);

    // 8. The same synthesis marked with the redeem answer's watermark, then stripped of its
    // credentials (a plain WAV) and 6 dB quieter: the mark alone names the decision, once the
    // collector has handed the redemption (and its id) to the origin.
    const { watermark } = redeemResultSchema.parse(await json(redeemed));
    const pcm = (await decodeAudio(speech!, { maxBytes: 2 ** 24, maxSeconds: 60, minSeconds: 0 })).samples;
    const stripped = pcm16Wav(markPcm(pcm, 16_000, watermark).map((sample) => sample * 0.5));
    let fromMark: ReturnType<typeof provenanceVerificationSchema.parse> | undefined;
    await eventually(async () => {
      fromMark = await platform.provenance.verify({ data: stripped, filename: 'stripped.wav' });
      return fromMark.watermark.issued === true;
    }, 30_000);
    expect(fromMark!.verdict, JSON.stringify(fromMark)).toBe('watermark_authorized');
    expect(fromMark!.watermark).toMatchObject({ found: true, id: watermark.id, check_id: approved.check_id });
    expect(fromMark!.credentials.present).toBe(false);

    // 9. The C2PA soft-binding lookup names the same authorization.
    const lookup = await fetch(
      `${service.originUrl}/api/v1/provenance/matches/byBinding?alg=${encodeURIComponent(watermark.alg)}&value=${watermark.id}`,
    );
    expect(lookup.status).toBe(200);
    expect((await lookup.json()) as unknown).toMatchObject({
      matches: [{ authorization: { check_id: approved.check_id, voice_id: voiceId, platform_name: platformName } }],
    });
  }, 180_000);
});
