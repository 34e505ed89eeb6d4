import { randomUUID } from 'node:crypto';
import type { ProvenanceVerification } from '@vip/shared-schema';
import type { AuditReceipt } from '@vip/shared-schema/client';
import { embedAuthorization } from '@vip/shared-schema/client/provenance';
import { readCredentials } from '@vip/shared-schema/provenance/credentials';
import { checkAssertionReceipt } from '@vip/shared-schema/provenance/judgement';
import { platformSigner } from '@vip/shared-schema/testing/provenance-files';
import { createCheckpointSigner } from '../../origin/src/audit/checkpoints.js';
import { queueAuditRecords } from '../../origin/src/audit/queue.js';
import { generateSigningJwk } from '../../origin/src/auth/access-tokens.js';
import { gateRecord } from '../../origin/src/testing/audit-records.js';
import { pcm16Wav } from '../../origin/src/testing/fixtures.js';
import { bearer, loggedIn, platformWithApiKey, startTestOrigin } from '../../origin/src/testing/origin.js';
import { audioForm, speakerRecordings, startTestEngine } from '../../origin/src/testing/voiceprint.js';
import { insertEnrolledVoice } from '../../origin/src/testing/voices.js';
import { decodeAudio } from '../../origin/src/voiceprint/decode.js';
import type { Bench, Figure } from './bench.js';
import { median, percentile, round } from './support/stats.js';
import { timedEngine } from './support/timed-engine.js';

const SPEAKER = 'so762:SPEAKER9612';
const PLATFORMS = ['Acme TTS', 'Other Voices'];
const SAMPLE_RATE = 16_000;

/** `seconds` of the speaker's speech (a recording the voice was not enrolled from, repeated as needed), as a 16 kHz PCM16 WAV. */
async function speechWav(seconds: number): Promise<Uint8Array> {
  const needed = seconds * SAMPLE_RATE;
  const parts: Float32Array[] = [];
  for (const recording of speakerRecordings(SPEAKER, 8, 1)) {
    parts.push((await decodeAudio(recording, { maxBytes: 2 ** 24, maxSeconds: 60, minSeconds: 0 })).samples);
  }
  const samples = new Float32Array(needed);
  for (let filled = 0, part = 0; filled < needed; part++) {
    const next = parts[part % parts.length]!.subarray(0, needed - filled);
    samples.set(next, filled);
    filled += next.length;
  }
  return pcm16Wav(samples);
}

const stats = (key: string, label: string, values: number[], goal?: Figure['goal']): Figure[] => [
  { key: `${key}.p50_ms`, label: `${label}: p50`, value: round(median(values), 1), unit: 'ms', ...(goal ? { goal } : {}) },
  { key: `${key}.p99_ms`, label: `${label}: p99`, value: round(percentile(values, 0.99), 1), unit: 'ms' },
];

const bench: Bench = {
  title: 'Content Credentials: verifying a 10 s and a 60 s WAV, and embedding (origin, PGlite, one thread)',
  method: [
    `Two platforms register a CA each; a voice is enrolled from 8 recordings of ${SPEAKER} with consent and a licence; an approval`,
    'and its redemption are logged and a checkpoint signed; the platform embeds the receipt (`embedAuthorization`, ECDSA P-256) into',
    'a 16 kHz mono PCM16 WAV of 10 s and of 60 s of the same speaker (a recording it was not enrolled from, repeated). Each file is then sent to',
    '`POST /api/v1/provenance/verify` in process (Fastify inject, real multipart, a platform key), one call at a time, and must',
    'come back `authorized`; the speaker model (decode, VAD, fbank, ONNX on one thread) is timed inside the engine and "apart from',
    'the speaker model" is the call minus it. The parts are then timed by themselves over the same file: C2PA validation as the',
    "service runs it (c2pa-rs in WASM with all registered CAs, then again with the named platform's only), and the receipt",
    '(note signature, inclusion proof, leaf against the assertion, consistency from the tiles). Embedding is timed on the 10 s WAV.',
    '`--quick` makes fewer calls and leaves out the 60 s file (its speaker model alone takes about 10 s a call here).',
  ].join(' '),
  async run({ quick }) {
    const engine = await startTestEngine({ threads: 1 });
    const embedMs: number[] = [];
    const checkpoints = await createCheckpointSigner(await generateSigningJwk('provenance-bench-log'));
    const origin = await startTestOrigin({ voiceprint: timedEngine(engine, embedMs), checkpoints });
    try {
      const adminToken = (await loggedIn(origin, 'admin')).accessToken;
      const owner = await loggedIn(origin);
      const keys: Record<string, string> = {};
      const signers: Record<string, ReturnType<typeof platformSigner>> = {};
      for (const name of PLATFORMS) {
        keys[name] = (await platformWithApiKey(origin, adminToken, name)).api_key;
        signers[name] = platformSigner(name);
        const registered = await origin.app.inject({
          method: 'POST',
          url: '/api/v1/signing-certificates',
          headers: { 'x-api-key': keys[name]! },
          payload: { certificate_pem: signers[name]!.caPem },
        });
        if (registered.statusCode !== 201) throw new Error(`registering a CA answered ${registered.statusCode}: ${registered.body}`);
      }
      const [platform] = PLATFORMS as [string];
      const voiceId = await insertEnrolledVoice(origin.database.db, engine, owner.userId, speakerRecordings(SPEAKER, 0, 8), {
        consentStatus: 'active',
      });
      const licensed = await origin.app.inject({
        method: 'POST',
        url: `/api/v1/voices/${voiceId}/licenses`,
        headers: bearer(owner.accessToken),
        payload: {
          platform_name: platform,
          scopes: ['audiobook'],
          description: 'Narration of audiobook chapters for the tests',
          expires_at: new Date(Date.now() + 86_400_000).toISOString(),
        },
      });
      if (licensed.statusCode !== 201) throw new Error(`licensing answered ${licensed.statusCode}: ${licensed.body}`);

      const jti = randomUUID();
      const fields = {
        voice_id: voiceId,
        platform_name: platform,
        decision: 'allow' as const,
        reason: null,
        license_status: 'licensed' as const,
        token_jti: jti,
      };
      const decision = gateRecord({ ...fields, action: 'authorized' });
      const redemption = gateRecord({ ...fields, kind: 'authorization.redeemed', action: 'redeemed' });
      await queueAuditRecords(origin.database.db, [decision, redemption], origin.runtime.clock.now());
      while ((await origin.audit.appendPending()).more);
      await origin.tlog.signCheckpoint();
      const receipt = (
        await origin.app.inject({
          method: 'GET',
          url: `/api/v1/protect/audit-log/${decision.check_id}/receipt`,
          headers: { 'x-api-key': keys[platform]! },
        })
      ).json() as AuditReceipt;
      const embed = (audio: Uint8Array) =>
        embedAuthorization(audio, 'audio/wav', { check_id: decision.check_id, receipt }, signers[platform]!.signer);

      const anchors = PLATFORMS.map((name) => signers[name]!.caPem).join('');
      const platformAnchors = signers[platform]!.caPem;
      const figures: Figure[] = [];
      const notes: string[] = [];
      for (const seconds of quick ? [10] : [10, 60]) {
        const signed = await embed(await speechWav(seconds));
        const calls = quick ? 8 : seconds === 10 ? 40 : 8;
        const verify = async () => {
          const before = embedMs.length;
          const started = performance.now();
          const response = await origin.app.inject({
            method: 'POST',
            url: '/api/v1/provenance/verify',
            headers: { 'x-api-key': keys[PLATFORMS[1]!]! },
            payload: audioForm({ audio: signed }),
          });
          const total = performance.now() - started;
          const verdict = (response.json() as ProvenanceVerification).verdict;
          if (response.statusCode !== 200 || verdict !== 'authorized' || embedMs.length !== before + 1) {
            throw new Error(`verify answered ${response.statusCode}: ${response.body.slice(0, 300)}`);
          }
          return { total, speakerModel: embedMs.at(-1)! };
        };
        await verify();
        const totals: number[] = [];
        const speakerModel: number[] = [];
        for (let call = 0; call < calls; call++) {
          // The per-key limit counts a minute of the service's clock; the bench is not what it limits.
          if (call % 50 === 49) origin.runtime.advance(61_000);
          const { total, speakerModel: model } = await verify();
          totals.push(total);
          speakerModel.push(model);
        }
        const c2pa: number[] = [];
        const receiptMs: number[] = [];
        for (let call = 0; call < calls; call++) {
          const started = performance.now();
          const credentials = await readCredentials(signed, 'audio/wav', { trustAnchors: anchors });
          await readCredentials(signed, 'audio/wav', { trustAnchors: platformAnchors });
          c2pa.push(performance.now() - started);
          if (!credentials?.authorization.present || !credentials.authorization.valid) throw new Error('the file lost its authorization');
          const receiptStarted = performance.now();
          const checked = await checkAssertionReceipt(credentials.authorization.assertion, await origin.tlog.verifierKey());
          if (
            !checked.verified ||
            !(await origin.tlog.consistentWith(checked.verified.checkpoint.size, checked.verified.checkpoint.rootHash))
          ) {
            throw new Error(`the receipt did not hold: ${checked.problems.join()}`);
          }
          receiptMs.push(performance.now() - receiptStarted);
        }
        const apart = totals.map((total, at) => total - speakerModel[at]!);
        const key = `provenance.verify_${seconds}s`;
        const size = `${seconds} s WAV (${Math.round(signed.length / 1024)} KiB)`;
        figures.push(
          ...stats(
            `${key}.apart_from_speaker_model`,
            `verify a ${size}, apart from the speaker model`,
            apart,
            seconds === 10 ? { atMost: 300 } : undefined,
          ),
          ...stats(`${key}.c2pa`, `${seconds} s, part: C2PA validation (both reads)`, c2pa),
          ...stats(`${key}.receipt`, `${seconds} s, part: receipt (signature, inclusion, leaf, consistency)`, receiptMs),
          ...stats(`${key}.speaker_model`, `${seconds} s, part: speaker model (embedding of the file)`, speakerModel),
          ...stats(`${key}.total`, `verify a ${seconds} s WAV, whole call`, totals),
        );
        notes.push(`${seconds} s: ${calls} verifications, every one \`authorized\`.`);
      }

      const tenSeconds = await speechWav(10);
      await embed(tenSeconds);
      const embedCalls = quick ? 8 : 40;
      const embedding: number[] = [];
      for (let call = 0; call < embedCalls; call++) {
        const started = performance.now();
        await embed(tenSeconds);
        embedding.push(performance.now() - started);
      }
      figures.push(
        ...stats('provenance.embed_10s', 'embed the authorization into a 10 s WAV (sign, ECDSA P-256)', embedding, { atMost: 200 }),
      );
      notes.push(`Embedding: ${embedCalls} files signed after one warm-up.`);
      return { figures, notes };
    } finally {
      await origin.close();
      await engine.close();
    }
  },
};

export default bench;
