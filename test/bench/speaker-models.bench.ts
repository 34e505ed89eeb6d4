import { readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { createOriginClient } from '@vip/shared-schema/client';
import { readSpeechManifest } from '../../origin/src/voiceprint/speech-manifest.js';
import { startOriginPlane } from '../support/service.js';
import { SPEECH_DIR } from '../support/speech.js';
import type { Bench, Figure } from './bench.js';
import { percentile, round } from './support/stats.js';

/** The bundled models, earlier first: the new default is compared with the one it replaces. */
const MODELS = ['vip-speaker-v1', 'vip-speaker-v2'] as const;
const ADMIN = { email: 'admin@speaker-models.bench', password: 'speaker-models-bench-password' };
/** Committed speakers with the 10 s of speech an enrollment needs (fixtures/speech). */
const SPEAKERS = ['so762:SPEAKER0003', 'so762:SPEAKER0024', 'so762:SPEAKER9612'];

const bench: Bench = {
  title: 'Speaker models through HTTP (origin): enrollment and screening latency, vip-speaker-v1 against vip-speaker-v2',
  method: [
    'Starts two origins as `npm start` starts them, one pinned to each bundled model (`VOICEPRINT_MODEL`), and sends them the',
    'same requests in turn, interleaved: an owner enrolls one of three committed speakers (fixtures/speech, 8-10 files, about',
    '25 s of audio), the voice is deleted again (so no enrollment meets an earlier one), and an administrator screens one',
    '3-4 s file of that speaker. p50 and p99 (nearest rank) per model of the wall time of each request; the ratios are v2 over v1',
    'from the same run. `--quick`: 3 rounds, else 15.',
  ].join(' '),
  async run({ quick }) {
    const rounds = quick ? 3 : 15;
    const recordings = readSpeechManifest(SPEECH_DIR);
    const clipsOf = (speaker: string) =>
      recordings
        .filter((recording) => recording.speaker === speaker)
        .map((recording) => ({ data: new Uint8Array(readFileSync(join(SPEECH_DIR, recording.path))), filename: basename(recording.path) }));
    const origins = await Promise.all(
      MODELS.map((model) =>
        startOriginPlane({ env: { VOICEPRINT_MODEL: model, ADMIN_EMAIL: ADMIN.email, ADMIN_PASSWORD: ADMIN.password } }),
      ),
    );
    const timings = MODELS.map(() => ({ enroll: [] as number[], screen: [] as number[] }));
    try {
      const admins = await Promise.all(
        origins.map(async ({ originUrl }) => {
          const session = await createOriginClient({ baseUrl: originUrl }).auth.login(ADMIN);
          return createOriginClient({ baseUrl: originUrl, bearerToken: session.access_token });
        }),
      );
      const timed = async <T>(into: number[], call: () => Promise<T>) => {
        const started = performance.now();
        const result = await call();
        into.push(performance.now() - started);
        return result;
      };
      for (let round = 0; round < rounds; round++) {
        const clips = clipsOf(SPEAKERS[round % SPEAKERS.length]!);
        for (const [index, { originUrl }] of origins.entries()) {
          const credentials = { email: `bench-${round}@speaker-models.bench`, password: 'speaker-models-owner-password' };
          const anonymous = createOriginClient({ baseUrl: originUrl });
          await anonymous.auth.register(credentials);
          const owner = createOriginClient({ baseUrl: originUrl, bearerToken: (await anonymous.auth.login(credentials)).access_token });
          const consent = await owner.biometricConsent.grant({ type: 'biometric', statement_version: 'bench', accepted: true });
          const voice = await timed(timings[index]!.enroll, () =>
            owner.voices.enroll({ name: `Bench ${round}`, consent_id: consent.consent_id, audio: clips }),
          );
          await owner.voices.delete(voice.voice_id);
          await timed(timings[index]!.screen, () => admins[index]!.screening.screen({ audio: clips[0]!, platform_name: 'Bench Platform' }));
        }
      }
    } finally {
      await Promise.all(origins.map((origin) => origin.stop()));
    }
    const figures: Figure[] = [];
    for (const [index, model] of MODELS.entries()) {
      for (const kind of ['enroll', 'screen'] as const) {
        for (const [label, fraction] of [
          ['p50', 0.5],
          ['p99', 0.99],
        ] as const) {
          figures.push({
            key: `speaker_models.${model.replaceAll('-', '_')}.${kind}.${label}_ms`,
            label: `${model}: one ${kind === 'enroll' ? 'enrollment (about 25 s of audio)' : 'screening (one 3-4 s file)'}, ${label}`,
            value: round(percentile(timings[index]![kind], fraction), 1),
            unit: 'ms',
          });
        }
      }
    }
    for (const kind of ['enroll', 'screen'] as const) {
      figures.push({
        key: `speaker_models.v2_over_v1.${kind}.p50`,
        label: `${kind === 'enroll' ? 'enrollment' : 'screening'} p50: vip-speaker-v2 / vip-speaker-v1`,
        value: round(percentile(timings[1]![kind], 0.5) / percentile(timings[0]![kind], 0.5), 3),
        unit: 'ratio',
        better: 'lower',
      });
    }
    return { figures, notes: [`${rounds} rounds per model, interleaved`] };
  },
};

export default bench;
