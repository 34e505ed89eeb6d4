import { randomUUID } from 'node:crypto';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { syntheticConsent, syntheticEnrollment } from '../../origin/src/testing/synthetic-consent.js';
import { enrolledVoice, json, post, type RunningService, registeredOwner, startService } from '../support/service.js';
import { chromiumMissing, collectConsole, expectAccessible, launchChromium, screenshot, signIntoConsole, skipReason } from './support.js';

/**
 * A voice dispute in the owner console (issue 35, docs/OWNER-GUIDE.md#if-your-voice-is-enrolled-by-someone-else):
 * another account enrolled a synthetic voice no corpus holds (flite's slt); the person it belongs to
 * enrolls it in the console with their spoken consent, is refused with 409, disputes it from the
 * refusal with the same recordings, and sees the administrator's transfer on their voices page. The
 * service runs for a registry of ten voices, where a copy is refused outright (as console.test.ts).
 */

const VOICE = 'flite-slt';
const admin = { email: 'admin@disputes-e2e.example', password: 'disputes-e2e-admin-password' };

describe.skipIf(chromiumMissing)(`a voice dispute in the owner console${skipReason}`, () => {
  const claimant = { email: `claimant-${randomUUID().slice(0, 8)}@console-e2e.example`, password: 'a long claimant passphrase' };
  let service: RunningService;
  let browser: Browser;
  let page: Page;
  let messages: string[];
  let copiedVoiceId: string;
  let claimantToken: string;

  beforeAll(async () => {
    [service, browser] = await Promise.all([
      startService({ env: { ADMIN_EMAIL: admin.email, ADMIN_PASSWORD: admin.password, DESIGN_REGISTRY_SIZE: '10' } }),
      launchChromium(),
    ]);
    const holderToken = await registeredOwner(service.originUrl, {
      email: `holder-${randomUUID().slice(0, 8)}@console-e2e.example`,
      password: 'a long holder passphrase',
    });
    copiedVoiceId = await enrolledVoice(service.originUrl, holderToken, 'Copied voice', syntheticEnrollment(VOICE));
    claimantToken = await registeredOwner(service.originUrl, claimant);
    const context = await browser.newContext({ viewport: { width: 1100, height: 900 } });
    page = await context.newPage();
    messages = await collectConsole(page);
    await signIntoConsole(page, service.originUrl, claimant);
  }, 180_000);

  afterAll(async () => {
    await browser?.close();
    await service?.stop();
  });

  it('offers the dispute where the enrollment is refused, files it with the same recordings, and gives its receipt', async () => {
    const challenge = page.waitForResponse(
      (response) => new URL(response.url()).pathname === '/api/v1/consents/challenges' && response.status() === 201,
    );
    await page.getByRole('link', { name: 'Enroll a voice' }).click();
    const { challenge_id: challengeId, phrase } = (await (await challenge).json()) as { challenge_id: string; phrase: string };
    await page.locator(`#spoken-challenge[data-challenge-id="${challengeId}"]`).waitFor();

    await page.getByLabel('I have read this statement and I consent.').check();
    await page.getByRole('button', { name: 'Give consent' }).click();
    await page.getByText('Consent given (statement version').waitFor();
    await page.getByLabel('Voice name').fill('My own voice');
    await page.getByLabel('Or upload recordings').setInputFiles(
      syntheticEnrollment(VOICE).map((clip, index) => ({
        name: `take-${index + 1}.opus`,
        mimeType: 'audio/ogg',
        buffer: Buffer.from(clip),
      })),
    );
    await page.locator('#speech-total[data-measuring="false"]').waitFor({ timeout: 60_000 });
    await page.getByLabel('Or upload a recording of it').setInputFiles({
      name: 'consent.wav',
      mimeType: 'audio/wav',
      buffer: Buffer.from(await syntheticConsent(VOICE, phrase)),
    });

    const refused = page.waitForResponse((response) => new URL(response.url()).pathname === '/api/v1/voices/enroll', { timeout: 150_000 });
    await page.getByRole('button', { name: 'Enroll this voice' }).click();
    expect((await refused).status()).toBe(409);
    const refusal = page.locator('#enroll-result [role="alert"][data-code="identity_conflict"]');
    await refusal.waitFor();
    expect(await refusal.textContent()).toMatch(/If it is your voice, .*dispute their enrollment/);
    await page.getByRole('heading', { name: 'Is it your voice?' }).waitFor();
    await expectAccessible(page, 'enrollment refused, dispute offered');

    const filed = page.waitForResponse((response) => new URL(response.url()).pathname === '/api/v1/voices/disputes', { timeout: 150_000 });
    await page.getByRole('button', { name: 'Dispute it: this is my voice' }).click();
    const answer = await filed;
    expect(answer.status(), await answer.text()).toBe(201);
    const dispute = (await answer.json()) as { dispute_id: string; check_id: string; status: string };
    expect(dispute.status).toBe('open');
    await page.getByText('Dispute opened.').waitFor();
    expect(await page.locator('#dispute').count()).toBe(0);

    await page.getByRole('button', { name: 'Receipt of the dispute' }).click();
    await page.getByRole('link', { name: 'Download the receipt of the dispute (JSON)' }).waitFor({ timeout: 30_000 });
    await expectAccessible(page, 'dispute opened');
    await screenshot(page, 'console-dispute-opened');

    // The copy is held for the administrators, with the claimant's spoken consent beside it: the
    // challenge the enrollment was refused with, which the refusal had not spent.
    const adminToken = (await json(await post(`${service.originUrl}/api/v1/auth/login`, admin))).access_token as string;
    const asAdmin = { authorization: `Bearer ${adminToken}` };
    const queue = await json(await fetch(`${service.originUrl}/api/v1/admin/voice-reviews`, { headers: asAdmin }));
    expect(queue.reviews).toEqual([
      expect.objectContaining({
        voice_id: copiedVoiceId,
        reason: 'dispute',
        dispute: expect.objectContaining({
          dispute_id: dispute.dispute_id,
          spoken_consent: expect.objectContaining({ challenge_id: challengeId, phrase }),
        }),
      }),
    ]);
    await page.getByRole('link', { name: 'Your voices and disputes' }).click();
    await page.getByRole('heading', { name: 'Your disputes' }).waitFor();
    expect(await page.locator('#disputes tbody tr').textContent()).toContain('open: the voice is held until an administrator decides');
  }, 400_000);

  it("shows the administrator's transfer: the voice is the claimant's, linked from the dispute", async () => {
    const adminToken = (await json(await post(`${service.originUrl}/api/v1/auth/login`, admin))).access_token as string;
    const decided = await post(
      `${service.originUrl}/api/v1/admin/voice-reviews/${copiedVoiceId}`,
      { decision: 'transfer' },
      {
        authorization: `Bearer ${adminToken}`,
      },
    );
    expect(decided.status).toBe(200);
    const { transferred_voice_id: voiceId } = await json(decided);

    await page.reload();
    await page.getByRole('heading', { name: 'Your disputes' }).waitFor();
    expect(await page.locator('#disputes tbody tr').textContent()).toContain('transferred: the voice is yours now');
    await page.locator('#disputes').getByRole('link', { name: 'My own voice' }).click();
    await page.getByRole('heading', { name: 'My own voice', level: 1 }).waitFor();
    expect(page.url()).toContain(`#/voices/${voiceId}`);
    const mine = await json(await fetch(`${service.originUrl}/api/v1/voices`, { headers: { authorization: `Bearer ${claimantToken}` } }));
    expect(mine.voices).toEqual([expect.objectContaining({ voice_id: voiceId, name: 'My own voice', status: 'ready' })]);
    await expectAccessible(page, 'a transferred voice');
    expect(messages.filter((line) => /Content Security Policy|Trusted Type|violation|pageerror/i.test(line))).toEqual([]);
  }, 120_000);
});
