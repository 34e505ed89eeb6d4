import { randomUUID } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SPOKEN_CONSENT_STATEMENT } from '@vip/shared-schema';
import { limits } from '@vip/shared-schema/limits';
import type { Browser, BrowserContext, Page, Request } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PHRASE_WORDS } from '../../origin/src/spoken-consent/consent-words.js';
import { pcm16Wav } from '../../origin/src/testing/fixtures.js';
import {
  type SyntheticVoice,
  syntheticConsent,
  syntheticConsentSamples,
  syntheticEnrollment,
} from '../../origin/src/testing/synthetic-consent.js';
import { enrolledVoice, json, post, type RunningService, registeredOwner, startService } from '../support/service.js';
import { ENROLL_CLIPS } from '../support/speech.js';
import {
  chromiumMissing,
  collectConsole,
  expectAccessible,
  FAKE_MICROPHONE,
  isChallengeRequest,
  launchChromium,
  nextChallenge,
  screenshot,
  signIntoConsole,
  skipReason,
} from './support.js';

/**
 * The spoken consent in the owner console (issue 26): the statement and phrase of a fresh challenge,
 * read into the recorder the enrollment takes use (Chromium's fake microphone plays FAKE_MICROPHONE,
 * read sentences of one speaker and not the statement), sent with the enrollment to the real origin,
 * whose refusals the page explains. The passing path runs with synthetic voices
 * (fixtures/spoken-consent/synthetic/): a consent assembled for the phrase the page shows is uploaded,
 * and played by a second Chromium's fake microphone, written once the phrase is known.
 */

interface Challenge {
  challenge_id: string;
  statement: string;
  phrase: string;
  expires_at: string;
}

const PHRASE = new RegExp(`^(${PHRASE_WORDS.join('|')})( (${PHRASE_WORDS.join('|')})){5}$`);

describe.skipIf(chromiumMissing)(`spoken consent in the owner console${skipReason}`, () => {
  const owner = { email: `speaker-${randomUUID().slice(0, 8)}@console-e2e.example`, password: 'a long spoken-consent passphrase' };
  let service: RunningService;
  let browser: Browser;
  let ownerToken: string;

  /** A new tab signed in as the owner (or `who`), with its console messages collected. */
  async function signedInPage(context: BrowserContext, who = owner): Promise<{ page: Page; messages: string[] }> {
    const page = await context.newPage();
    const messages = await collectConsole(page);
    await signIntoConsole(page, service.originUrl, who);
    return { page, messages };
  }

  /** The challenge the page shows, and the one the origin answered for it. */
  async function shownChallenge(page: Page, answered: Promise<Challenge>) {
    const challenge = await answered;
    await page.locator(`#spoken-challenge[data-challenge-id="${challenge.challenge_id}"]`).waitFor();
    return { challenge, phrase: await page.locator('#spoken-phrase').textContent() };
  }
  beforeAll(async () => {
    [service, browser] = await Promise.all([startService(), launchChromium()]);
    ownerToken = await registeredOwner(service.originUrl, owner);
  });

  afterAll(async () => {
    await browser?.close();
    await service?.stop();
  });

  describe('enrolling', () => {
    let context: BrowserContext;
    let page: Page;
    let messages: string[];
    let current: Challenge;

    beforeAll(async () => {
      context = await browser.newContext({ viewport: { width: 1100, height: 900 } });
      ({ page, messages } = await signedInPage(context));
    }, 60_000);

    afterAll(async () => {
      await context?.close();
    });

    const refusal = (code: string) => page.locator(`#enroll-result [role="alert"][data-code="${code}"]`);
    const enroll = async (): Promise<{ request: Request; problem: Record<string, unknown> }> => {
      // The origin measures the takes and the consent with the speaker model and the decoder: slow on a busy machine.
      const answered = page.waitForResponse((response) => new URL(response.url()).pathname === '/api/v1/voices/enroll', {
        timeout: 150_000,
      });
      await page.getByRole('button', { name: 'Enroll this voice' }).click();
      const response = await answered;
      return { request: response.request(), problem: await response.json() };
    };

    it("shows the statement and the phrase of the origin's challenge, and a new phrase replaces them", async () => {
      const first = nextChallenge(page);
      await page.getByRole('link', { name: 'Enroll a voice' }).click();
      await page.getByRole('heading', { name: '4. Spoken consent' }).waitFor();
      const shown = await shownChallenge(page, first);
      expect(await page.locator('#spoken-statement').textContent()).toBe(shown.challenge.statement);
      expect(shown.phrase).toBe(shown.challenge.phrase);
      expect(shown.phrase).toMatch(PHRASE);
      expect(await page.locator('#spoken-challenge time').getAttribute('datetime')).toBe(shown.challenge.expires_at);
      await expectAccessible(page, 'enroll with a spoken-consent challenge');

      const second = nextChallenge(page);
      await page.getByRole('button', { name: 'Get a new phrase' }).click();
      const renewed = await shownChallenge(page, second);
      expect(renewed.challenge.challenge_id).not.toBe(shown.challenge.challenge_id);
      expect(renewed.phrase).toBe(renewed.challenge.phrase);
      expect(await page.locator('#challenge-status').textContent()).toBe('Here is a new phrase. Record the spoken consent again.');
      current = renewed.challenge;
    }, 60_000);

    it('records the consent with the microphone and sends it with the challenge; the refusal says what was heard and which check failed', async () => {
      await page.getByLabel('I have read this statement and I consent.').check();
      await page.getByRole('button', { name: 'Give consent' }).click();
      await page.getByText('Consent given (statement version').waitFor();
      await page.getByLabel('Voice name').fill('Spoken narrator');
      // The takes are the fake microphone's own file: the consent below is read by the same speaker.
      await page.getByLabel('Or upload recordings').setInputFiles(FAKE_MICROPHONE);
      await page.locator('#speech-total[data-measuring="false"]').waitFor({ timeout: 60_000 });

      await page.getByRole('button', { name: 'Record the spoken consent' }).click();
      await expect
        .poll(() => page.locator('#consent-progress').textContent(), { timeout: 20_000 })
        .toContain('Recording the spoken consent:');
      await expect
        .poll(() => page.locator('#consent-level').evaluate((meter) => (meter as HTMLMeterElement).value), { timeout: 20_000 })
        .toBeGreaterThan(0);
      await expectAccessible(page, 'recording the spoken consent');
      await page.waitForTimeout(8_000);
      await page.getByRole('button', { name: 'Stop the spoken consent' }).click();
      await page.locator('#consent-take audio').waitFor();
      expect(await page.locator('#consent-take').textContent()).toMatch(/^spoken-consent\.webm will be sent with this enrollment/);

      const { request, problem } = await enroll();
      expect(request.headers()['content-type']).toMatch(/^multipart\/form-data; boundary=/);
      // Chromium hands the test no multipart body holding a file, so the origin's answer shows what
      // was sent: a words problem comes only after the challenge_id was found to be this owner's
      // usable challenge and the spoken_consent take was decoded and heard in the takes' voice.
      expect(problem).toMatchObject({ status: 422, code: 'consent_statement_not_spoken' });
      expect(typeof problem.heard).toBe('string');
      const shown = refusal('consent_statement_not_spoken');
      await shown.waitFor();
      expect(await shown.textContent()).toMatch(
        /^Consent statement not heard\. Statement check failed: the service did not hear the consent statement/,
      );
      expect(await shown.locator('.heard').textContent()).toBe(
        problem.heard === '' ? 'The service heard: nothing it could read as the statement.' : `The service heard: ${problem.heard}`,
      );
      await expectAccessible(page, 'spoken consent refused');
      await screenshot(page, 'console-spoken-consent-refused');

      // A words refusal leaves the challenge usable: the phrase stays for another take; nothing was enrolled.
      expect(await page.locator('#spoken-challenge').getAttribute('data-challenge-id')).toBe(current.challenge_id);
      const voices = await json(await fetch(`${service.originUrl}/api/v1/voices`, { headers: { authorization: `Bearer ${ownerToken}` } }));
      expect(voices.voices).toEqual([]);
    }, 300_000);

    it('names the voice check when the consent is read by another voice than the takes', async () => {
      await page.getByLabel('Or upload recordings').setInputFiles(ENROLL_CLIPS);
      await page.locator('#speech-total[data-measuring="false"]').waitFor({ timeout: 60_000 });
      const { problem } = await enroll();
      expect(problem).toMatchObject({ code: 'consent_speaker_mismatch' });
      expect(problem.heard).toBeUndefined();
      const shown = refusal('consent_speaker_mismatch');
      await shown.waitFor();
      expect(await shown.textContent()).toMatch(/^Consent spoken by another voice\. Voice check failed: /);
      expect(await shown.locator('.heard').count()).toBe(0);
    }, 240_000);

    it('replaces a challenge the origin no longer takes at once, with the take of its phrase', async () => {
      // Another owner's challenge stands in for one spent or expired meanwhile: the origin answers all alike.
      const otherToken = await registeredOwner(service.originUrl, {
        email: `other-${randomUUID().slice(0, 8)}@console-e2e.example`,
        password: 'another owner passphrase',
      });
      const foreign = (await json(
        await post(`${service.originUrl}/api/v1/consents/challenges`, {}, { authorization: `Bearer ${otherToken}` }),
      )) as unknown as Challenge;
      await page.route(
        isChallengeRequest,
        async (route) => {
          const answer = await route.fetch();
          await route.fulfill({ response: answer, json: { ...(await answer.json()), challenge_id: foreign.challenge_id } });
        },
        { times: 1 },
      );
      await page.getByRole('button', { name: 'Get a new phrase' }).click();
      await page.locator(`#spoken-challenge[data-challenge-id="${foreign.challenge_id}"]`).waitFor();
      // A new phrase discards the take of the old one; an uploaded file serves as well as a take.
      expect(await page.locator('#consent-take').textContent()).toBe('');
      await page.getByLabel('Or upload a recording of it').setInputFiles(FAKE_MICROPHONE);

      const fresh = nextChallenge(page);
      const { problem } = await enroll();
      expect(problem).toMatchObject({ status: 403, code: 'consent_challenge_invalid' });
      await refusal('consent_challenge_invalid').waitFor();
      expect(await refusal('consent_challenge_invalid').textContent()).toMatch(/Challenge check failed: /);
      const renewed = await shownChallenge(page, fresh);
      expect(renewed.challenge.challenge_id).not.toBe(foreign.challenge_id);
      expect(renewed.phrase).toMatch(PHRASE);
      expect(await page.locator('#challenge-status').textContent()).toMatch(/^The service no longer takes that phrase/);
      expect(await page.locator('#consent-take').textContent()).toBe('');
      expect(messages.filter((line) => /Content Security Policy|Trusted Type|violation|pageerror/i.test(line))).toEqual([]);
    }, 240_000);
  });

  describe('a new owner who is no corpus speaker enrolls with the statement and the phrase the page shows', () => {
    const microphone = join(mkdtempSync(join(tmpdir(), 'vip-microphone-')), 'consent.wav');
    let microphoneBrowser: Browser;

    beforeAll(async () => {
      // Silence until the page shows a phrase; played once, then silence.
      writeFileSync(microphone, pcm16Wav(new Float32Array(16000)));
      microphoneBrowser = await launchChromium(`${microphone}%noloop`);
    });

    afterAll(async () => {
      await microphoneBrowser?.close();
    });

    const takes = (voice: SyntheticVoice) =>
      syntheticEnrollment(voice).map((clip, index) => ({
        name: `${voice}-${index + 1}.opus`,
        mimeType: 'audio/ogg',
        buffer: Buffer.from(clip),
      }));

    it('by the upload the console offers, then by the microphone: both voices enrolled, each with spoken-en-3 and its own drawn phrase', async () => {
      const newOwner = { email: `new-${randomUUID().slice(0, 8)}@console-e2e.example`, password: 'a new owner passphrase' };
      const token = await registeredOwner(service.originUrl, newOwner);
      const context = await microphoneBrowser.newContext({ viewport: { width: 1100, height: 900 } });
      const { page, messages } = await signedInPage(context, newOwner);
      const enrolled = async (name: string) => {
        const answered = page.waitForResponse((response) => new URL(response.url()).pathname === '/api/v1/voices/enroll', {
          timeout: 150_000,
        });
        await page.getByRole('button', { name: 'Enroll this voice' }).click();
        const response = await answered;
        expect(response.status(), await response.text()).toBe(201);
        await page.locator('#open-voice').waitFor();
        expect(await page.locator('#open-voice').textContent()).toBe(`Open ${name}: consent and licences`);
      };
      const consentAndTakes = async (voice: SyntheticVoice) => {
        await page.getByLabel('I have read this statement and I consent.').check();
        await page.getByRole('button', { name: 'Give consent' }).click();
        await page.getByText('Consent given (statement version').waitFor();
        await page.getByLabel('Voice name').fill(voice);
        await page.getByLabel('Or upload recordings').setInputFiles(takes(voice));
        await page.locator('#speech-total[data-measuring="false"]').waitFor({ timeout: 60_000 });
      };

      // Upload: a consent file read for the phrase this page shows.
      const first = nextChallenge(page);
      await page.getByRole('link', { name: 'Enroll a voice' }).click();
      const shown = await shownChallenge(page, first);
      expect(shown.challenge).toMatchObject({ statement: SPOKEN_CONSENT_STATEMENT.text, statement_version: 'spoken-en-3' });
      expect(await page.locator('#spoken-statement').textContent()).toBe(SPOKEN_CONSENT_STATEMENT.text);
      await page.getByText('First the statement (version spoken-en-3)').waitFor();
      await consentAndTakes('flite-kal16');
      const uploaded = Buffer.from(await syntheticConsent('flite-kal16', shown.phrase!));
      await page.getByLabel('Or upload a recording of it').setInputFiles({ name: 'consent.wav', mimeType: 'audio/wav', buffer: uploaded });
      // A passing enrollment spends the challenge: the page asks for the next one at once.
      const second = nextChallenge(page);
      await enrolled('flite-kal16');

      // Microphone: the fake microphone plays the consent read for the new phrase.
      const renewed = await shownChallenge(page, second);
      expect(renewed.challenge.challenge_id).not.toBe(shown.challenge.challenge_id);
      await consentAndTakes('flite-rms');
      const spoken = await syntheticConsentSamples('flite-rms', renewed.phrase!);
      writeFileSync(microphone, pcm16Wav(spoken));
      await page.getByRole('button', { name: 'Record the spoken consent' }).click();
      await page.getByRole('button', { name: 'Stop the spoken consent' }).waitFor();
      await page.waitForTimeout((spoken.length / 16000) * 1000 + 1_500);
      await page.getByRole('button', { name: 'Stop the spoken consent' }).click();
      await page.locator('#consent-take audio').waitFor();
      await enrolled('flite-rms');

      const voices = await json(await fetch(`${service.originUrl}/api/v1/voices`, { headers: { authorization: `Bearer ${token}` } }));
      expect((voices.voices as { name: string }[]).map((voice) => voice.name).sort()).toEqual(['flite-kal16', 'flite-rms']);
      expect(messages.filter((line) => /Content Security Policy|Trusted Type|violation|pageerror/i.test(line))).toEqual([]);
      await context.close();
    }, 400_000);
  });

  it('gives a new phrase by itself when the challenge expires on an open page', async () => {
    const context = await browser.newContext();
    await context.clock.install();
    const { page, messages } = await signedInPage(context);
    const first = nextChallenge(page);
    await page.getByRole('link', { name: 'Enroll a voice' }).click();
    const shown = await shownChallenge(page, first);

    const fresh = nextChallenge(page);
    await page.clock.fastForward(limits.consentChallengeTtlSeconds * 1000 + 1_000);
    const renewed = await shownChallenge(page, fresh);
    expect(renewed.challenge.challenge_id).not.toBe(shown.challenge.challenge_id);
    expect(await page.locator('#challenge-status').textContent()).toBe(
      'The phrase expired, so here is a new one. Record the spoken consent again.',
    );
    expect(messages.filter((line) => /violation|pageerror/i.test(line))).toEqual([]);
    await context.close();
  }, 60_000);

  it('asks for the spoken consent when a voice is re-recorded, and explains a refusal', async () => {
    const voiceName = 'Voice to re-record';
    await enrolledVoice(service.originUrl, ownerToken, voiceName, [new Uint8Array(await readFile(FAKE_MICROPHONE))]);
    const context = await browser.newContext({ viewport: { width: 1100, height: 900 } });
    const { page, messages } = await signedInPage(context);
    await page.getByRole('link', { name: voiceName }).click();
    await page.getByRole('heading', { name: voiceName, level: 1 }).waitFor();
    const first = nextChallenge(page);
    await page.getByRole('button', { name: 'Re-record this voice' }).click();
    const shown = await shownChallenge(page, first);
    expect(shown.phrase).toMatch(PHRASE);

    await page.getByLabel('Or upload recordings').setInputFiles(FAKE_MICROPHONE);
    await page.locator('#speech-total[data-measuring="false"]').waitFor({ timeout: 60_000 });
    await page.getByLabel('Or upload a recording of it').setInputFiles(FAKE_MICROPHONE);
    const answered = page.waitForResponse((response) => new URL(response.url()).pathname.endsWith('/re-enroll'), { timeout: 150_000 });
    await page.getByRole('button', { name: 'Replace the voiceprint' }).click();
    const problem = (await (await answered).json()) as Record<string, unknown>;
    expect(problem).toMatchObject({ code: 'consent_statement_not_spoken' });
    const refusal = page.locator('#reenroll-result [role="alert"][data-code="consent_statement_not_spoken"]');
    await refusal.waitFor();
    expect(await refusal.locator('.heard').textContent()).toMatch(/^The service heard: /);
    await expectAccessible(page, 're-recording refused for its spoken consent');
    expect(messages.filter((line) => /Content Security Policy|Trusted Type|violation|pageerror/i.test(line))).toEqual([]);
    await context.close();
  }, 300_000);
});
