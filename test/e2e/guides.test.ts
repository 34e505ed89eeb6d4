import { cpSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BIOMETRIC_CONSENT_STATEMENT } from '@vip/shared-schema';
import { createOriginClient } from '@vip/shared-schema/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_ADMIN_EMAIL } from '../../origin/src/config.js';
import { pcm16Wav } from '../../origin/src/testing/fixtures.js';
import { goMissing } from '../../origin/src/testing/go-verifier.js';
import { joined } from '../../origin/src/testing/recorded-consent.js';
import {
  enrollSyntheticVoice,
  type SyntheticVoice,
  syntheticConsent,
  syntheticEnrollment,
  syntheticEnrollmentSamples,
} from '../../origin/src/testing/synthetic-consent.js';
import { startWebhookReceiver } from '../support/receiver.js';
import { repositoryRoot } from '../support/repository.js';
import { eventually, type RunningService, startService } from '../support/service.js';
import { type ShellBlock, ShellSession, shellBlocks } from '../support/shell-blocks.js';

/**
 * Every shell block of docs/INTEGRATION.md and docs/OWNER-GUIDE.md, run as written, in order, in one
 * terminal each (test/support/shell-blocks.ts) against `npm start -- --demo` after pasting the
 * `export …` line it prints (issue 35). The reader's own part between blocks is done here: the
 * files they hold (a sample, their takes, `consent.wav` read for the phrase just drawn), and what
 * other people do meanwhile (someone enrolled the voice a dispute claims; platforms asked for
 * licences). The integration guide runs first: its administrator registers "Acme TTS", which the
 * owner guide licenses.
 */

/** Blocks no test runs here, each run as written elsewhere. */
const RUN_ELSEWHERE: Record<string, string> = {
  // .ci/run runs `npm install` and `npm test`; the e2e suites start the service as `npm start` does (scripts/start.ts).
  'npm install && npm start': 'README.md: the quickstart is what CI runs',
  'npm run bench': 'README.md: CI runs `npm run bench -- --quick`; the whole run takes tens of minutes',
  'npm pack ./client':
    'INTEGRATION.md section 9: test/client-package/install.test.ts packs the client and installs the tarball into a new project, as the block does, from the npm cache',
};
const runElsewhere = (block: ShellBlock) => Object.keys(RUN_ELSEWHERE).find((marker) => block.text.includes(marker));

describe('the guides’ shell blocks, run as written against `npm start -- --demo`', () => {
  let service: RunningService;
  let receiver: Awaited<ReturnType<typeof startWebhookReceiver>>;
  let work: string;
  let session: ShellSession;
  let adminPassword: string;

  /** The reader's files, in the folder the blocks run in. */
  const hand = (name: string, bytes: Uint8Array) => writeFileSync(join(work, name), bytes);

  beforeAll(async () => {
    // The default spoken-consent setting (required), and webhooks to a receiver on this machine.
    service = await startService({
      args: ['--demo'],
      env: { ADMIN_EMAIL: '', ADMIN_PASSWORD: '', SPOKEN_CONSENT: '', WEBHOOK_ALLOW_LOOPBACK: 'true' },
    });
    await eventually(
      async () => service.output().includes('[start] demo seeded') || service.output().includes('demo seed failed'),
      120_000,
    );
    expect(service.output()).not.toContain('demo seed failed');
    adminPassword = JSON.parse(readFileSync(join(service.dataDir, 'demo.json'), 'utf8')).admin_password;
    receiver = await startWebhookReceiver();
    // A clone's files the guides name, in a folder of the reader's.
    work = mkdtempSync(join(tmpdir(), 'vip-guides-'));
    cpSync(join(repositoryRoot, 'test/tlog-verify'), join(work, 'test/tlog-verify'), { recursive: true });
    session = new ShellSession(work, {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? work,
      HOOK: receiver.url,
      ADMIN_PASSWORD: adminPassword,
    });
    const exportLine = service
      .output()
      .split('\n')
      .find((line) => line.startsWith('export ORIGIN='));
    expect(exportLine, 'the demo prints the guides’ variables').toBeDefined();
    await session.run({ at: 'the output of npm start -- --demo', text: exportLine! });
  }, 240_000);

  afterAll(async () => {
    receiver?.server.close();
    await service?.stop();
  });

  /** Runs every block of `file`, with the reader's part before and after the blocks it belongs to. */
  async function follow(
    file: string,
    reader: { before?: (block: ShellBlock) => Promise<void>; after?: (block: ShellBlock, printed: string) => Promise<void> },
  ) {
    const ran: string[] = [];
    for (const block of shellBlocks(file)) {
      if (runElsewhere(block)) continue;
      if (block.text.includes('tlog-verify') && goMissing) {
        console.warn(`skipped ${block.at}: ${goMissing}`);
        continue;
      }
      await reader.before?.(block);
      const printed = await session.run(block);
      await reader.after?.(block, printed);
      ran.push(block.at);
    }
    return ran;
  }

  /** After a block that drew a challenge, the reader records the statement and its phrase into consent.wav. */
  async function recordConsentIfDrawn(block: ShellBlock, speaker: SyntheticVoice) {
    if (!block.text.includes('/api/v1/consents/challenges')) return;
    const { phrase } = JSON.parse(session.variable('CHALLENGE')) as { phrase: string };
    hand('consent.wav', await syntheticConsent(speaker, phrase));
  }

  it('docs/INTEGRATION.md: from an API key to an approval, a redemption, its receipt checked by Go, a licence request and Content Credentials verified', async () => {
    const demoVoice = syntheticEnrollment('flite-awb');
    hand('sample-1.opus', demoVoice[0]!);
    hand('sample-2.opus', demoVoice[1]!);
    const ran = await follow('docs/INTEGRATION.md', {
      before: async (block) => {
        // What the platform synthesized (section 13): speech of the demo voice.
        if (block.text.includes('provenance/verify'))
          hand('synthesized.wav', pcm16Wav((await syntheticEnrollmentSamples('flite-awb'))[2]!));
      },
    });
    expect(ran.length).toBeGreaterThanOrEqual(11);
    // What the blocks left in the terminal: an approval whose token the redemption spent, a receipt.
    expect(JSON.parse(session.variable('ANSWER'))).toMatchObject({ status: 'approved', voice_id: session.variable('VOICE_ID') });
    expect(JSON.parse(readFileSync(join(session.directory, 'receipt.json'), 'utf8'))).toMatchObject({
      check_id: session.variable('CHECK_ID'),
    });
    expect(session.variable('MATCH')).toBe(session.variable('VOICE_ID'));
  }, 300_000);

  it('docs/OWNER-GUIDE.md: an account, a voice enrolled with its spoken consent, a dispute, consent, licences and their requests, erasure', async () => {
    // Ana's voice is one no corpus holds; the voice she disputes, another.
    const ana: SyntheticVoice = 'flite-slt';
    const disputed: SyntheticVoice = 'flite-rms';
    // The speaker's seven sentences as three takes, the first two holding the 10 s a re-recording needs.
    const takes = async (speaker: SyntheticVoice) => {
      const clips = await syntheticEnrollmentSamples(speaker);
      hand('take1.wav', pcm16Wav(joined(clips.slice(0, 3))));
      hand('take2.wav', pcm16Wav(joined(clips.slice(3, 6))));
      hand('take3.wav', pcm16Wav(joined(clips.slice(6))));
    };
    await takes(ana);
    hand('suspicious-clip.wav', pcm16Wav((await syntheticEnrollmentSamples(ana))[6]!));
    const origin = service.originUrl;
    const asAdmin = createOriginClient({
      baseUrl: origin,
      bearerToken: (await createOriginClient({ baseUrl: origin }).auth.login({ email: DEFAULT_ADMIN_EMAIL, password: adminPassword }))
        .access_token,
    });
    let speaker: SyntheticVoice = ana;

    const ran = await follow('docs/OWNER-GUIDE.md', {
      before: async (block) => {
        if (block.text.includes('/api/v1/voices/disputes')) {
          // Someone else enrolled a voice (with its spoken consent, as the service requires); the
          // reader's own enrollment of it was refused, leaving its consent and challenge unused.
          const thief = { email: 'someone-else@example.com', password: 'someone else passphrase' };
          await createOriginClient({ baseUrl: origin }).auth.register(thief);
          const asThief = createOriginClient({
            baseUrl: origin,
            bearerToken: (await createOriginClient({ baseUrl: origin }).auth.login(thief)).access_token,
          });
          await enrollSyntheticVoice(asThief, disputed, 'Not theirs');
          const asReader = createOriginClient({ baseUrl: origin, bearerToken: session.variable('TOKEN') });
          session.set(
            'CONSENT_ID',
            (
              await asReader.biometricConsent.grant({
                type: 'biometric',
                statement_version: BIOMETRIC_CONSENT_STATEMENT.version,
                accepted: true,
              })
            ).consent_id,
          );
          const drawn = await asReader.spokenConsent.challenge();
          session.set('CHALLENGE', JSON.stringify(drawn));
          speaker = disputed;
          await takes(disputed);
          hand('consent.wav', await syntheticConsent(disputed, drawn.phrase));
        }
        if (block.text.includes('license-requests?status=pending')) {
          // Two platforms ask for a licence of the voice: the demo's, and one the administrator registers now.
          const other = await asAdmin.platforms.create({ name: 'Harbour Audio' });
          const otherKey = (await asAdmin.platforms.createApiKey(other.platform_id)).api_key;
          for (const [apiKey, platform] of [
            [session.variable('KEY'), session.variable('PLATFORM')],
            [otherKey, 'Harbour Audio'],
          ] as const) {
            await createOriginClient({ baseUrl: origin, apiKey }).licenseRequests.request(session.variable('VOICE_ID'), {
              platform_name: platform,
              scopes: ['audiobook'],
              expires_at: '2027-06-30T00:00:00Z',
              description: 'Narration of an audiobook',
            });
          }
        }
      },
      after: async (block, printed) => {
        if (block.text.includes('/api/v1/voices/disputes')) {
          expect(JSON.parse(printed)).toMatchObject({ status: 'open', voice_id: null });
          speaker = ana;
          await takes(ana);
        }
        await recordConsentIfDrawn(block, speaker);
      },
    });
    expect(ran.length).toBe(shellBlocks('docs/OWNER-GUIDE.md').length);
    // The voice the guide enrolled, re-recorded, licensed and then erased.
    const voiceId = session.variable('VOICE_ID');
    expect(JSON.parse(session.variable('VOICE'))).toMatchObject({ voice_id: voiceId, name: 'Ana narrator', status: 'ready' });
    const stillThere = await fetch(`${origin}/api/v1/voices`, { headers: { authorization: `Bearer ${session.variable('TOKEN')}` } });
    expect(((await stillThere.json()) as { voices: { voice_id: string }[] }).voices.map((voice) => voice.voice_id)).not.toContain(voiceId);
  }, 300_000);

  it('runs every block of the README elsewhere, as RUN_ELSEWHERE says, and nothing else of the guides', () => {
    expect(shellBlocks('README.md').map((block) => runElsewhere(block) !== undefined)).toEqual([true, true]);
    const skippedInGuides = ['docs/INTEGRATION.md', 'docs/OWNER-GUIDE.md'].flatMap((file) => shellBlocks(file).filter(runElsewhere));
    expect(skippedInGuides.map((block) => RUN_ELSEWHERE[runElsewhere(block)!])).toEqual([RUN_ELSEWHERE['npm pack ./client']]);
  });
});
