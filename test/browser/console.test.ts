import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { basename } from 'node:path';
import { BIOMETRIC_CONSENT_STATEMENT } from '@vip/shared-schema';
import { type AuditReceipt, verifyReceipt } from '@vip/shared-schema/client';
import { edgeRoutes } from '@vip/shared-schema/routes/edge';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { enrolledVoice, json, post, type RunningService, registeredOwner, startService } from '../support/service.js';
import { ENROLL_CLIPS, OTHER_SPEAKER_CLIPS } from '../support/speech.js';
import {
  chromiumMissing,
  collectConsole,
  expectAccessible,
  FAKE_MICROPHONE,
  launchChromium,
  screenshot,
  signIntoConsole,
  skipReason,
} from './support.js';

const admin = { email: 'admin@console-e2e.example', password: 'console-e2e-admin-password' };
const owner = { email: `owner-${randomUUID().slice(0, 8)}@console-e2e.example`, password: 'a long owner passphrase' };
const platformName = `Console TTS ${randomUUID().slice(0, 6)}`;
/** A second platform, which asks the owner for a licence instead of being granted one. */
const askingPlatform = `Console Radio ${randomUUID().slice(0, 6)}`;

/** Until the owner's receiver answers a delivery, it records what arrived. */
function startReceiver(): Promise<{ server: Server; url: string; received: string[] }> {
  const received: string[] = [];
  const server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => {
      body += chunk.toString();
    });
    request.on('end', () => {
      received.push(body);
      response.writeHead(204).end();
    });
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve({ server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`, received }),
    ),
  );
}

describe.skipIf(chromiumMissing)(`owner console in Chromium${skipReason}`, () => {
  let service: RunningService;
  let browser: Browser;
  let apiKey: string;
  let askingKey: string;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;

  beforeAll(async () => {
    [service, browser, receiver] = await Promise.all([
      // Designed for a handful of voices (DESIGN_REGISTRY_SIZE), so that a screening of the owner's recording names the voice (test/e2e/protection-loop.test.ts).
      startService({
        env: { ADMIN_EMAIL: admin.email, ADMIN_PASSWORD: admin.password, WEBHOOK_ALLOW_LOOPBACK: 'true', DESIGN_REGISTRY_SIZE: '10' },
      }),
      launchChromium(),
      startReceiver(),
    ]);
    const adminToken = (await json(await post(`${service.originUrl}/api/v1/auth/login`, admin))).access_token as string;
    const auth = { authorization: `Bearer ${adminToken}` };
    const keyOf = async (name: string) => {
      const platform = await json(await post(`${service.originUrl}/api/v1/platforms`, { name }, auth));
      return (await json(await post(`${service.originUrl}/api/v1/platforms/${platform.platform_id}/api-keys`, {}, auth))).api_key as string;
    };
    [apiKey, askingKey] = await Promise.all([keyOf(platformName), keyOf(askingPlatform)]);
  });

  afterAll(async () => {
    await browser?.close();
    receiver?.server.close();
    await service?.stop();
  });

  it('serves the console with a strict Content-Security-Policy, no inline code and no cookie', async () => {
    for (const path of ['/console', '/console/console.js', '/console/console.css']) {
      const response = await fetch(`${service.originUrl}${path}`);
      expect(response.status).toBe(200);
      const csp = response.headers.get('content-security-policy') ?? '';
      expect(csp).toContain("default-src 'none'");
      expect(csp).toContain("script-src 'self'");
      expect(csp).toContain("frame-ancestors 'none'");
      expect(csp).not.toMatch(/unsafe-(inline|eval)/);
      expect(response.headers.get('set-cookie')).toBeNull();
    }
    const html = await (await fetch(`${service.originUrl}/console`)).text();
    expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
    expect(html).not.toMatch(/\son[a-z]+=/);
    // The API's own answers carry no page headers: the scope is the three page routes.
    expect((await fetch(`${service.originUrl}/healthz`)).headers.get('content-security-policy')).toBeNull();
  });

  describe('an owner, start to finish', () => {
    let context: BrowserContext;
    let page: Page;
    let messages: string[];
    let voiceUrl: string;

    beforeAll(async () => {
      context = await browser.newContext({ viewport: { width: 1100, height: 900 } });
      page = await context.newPage();
      messages = await collectConsole(page);
    });

    afterAll(async () => {
      await context?.close();
    });

    /** Clicks a button that draws the view again, and waits until the new view has replaced the old one. */
    async function redrawWith(button: string): Promise<void> {
      await page.locator('#app h1').evaluate((heading) => heading.setAttribute('data-stale', ''));
      await page.getByRole('button', { name: button, exact: true }).click();
      await page.locator('#app h1:not([data-stale])').waitFor();
    }

    it('signs up with the keyboard alone and lands on an empty voice list', async () => {
      await page.goto(`${service.originUrl}/console`);
      await page.getByRole('heading', { name: 'Owner console' }).waitFor();
      await expectAccessible(page, 'sign-in');
      await screenshot(page, 'console-sign-in');

      // The first Tab reaches the skip link; the sign-up fields are reached by Tab in reading order.
      await page.keyboard.press('Tab');
      expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Skip to content');
      for (let presses = 0; presses < 20; presses++) {
        await page.keyboard.press('Tab');
        if ((await page.evaluate(() => document.activeElement?.id)) === 'sign-up-email') break;
      }
      await page.keyboard.type(owner.email);
      await page.keyboard.press('Tab');
      await page.keyboard.type(owner.password);
      await page.keyboard.press('Enter');
      await page.getByRole('heading', { name: 'Your voices' }).waitFor();
      expect(await page.evaluate(() => document.activeElement?.tagName)).toBe('H1');
      await expectAccessible(page, 'voices (empty)');
    });

    it('keeps the session across a reload, from the tab only, and never in localStorage or a cookie', async () => {
      await page.reload();
      await page.getByRole('heading', { name: 'Your voices' }).waitFor();
      expect(await page.evaluate(() => Object.keys(localStorage))).toEqual([]);
      expect(await context.cookies()).toEqual([]);
      expect(await page.evaluate(() => Object.keys(sessionStorage))).toEqual(['vip-console.refresh-token']);
    });

    it('consents, records from the microphone, and enrolls with per-file quality', async () => {
      await page.getByRole('link', { name: 'Enroll a voice' }).click();
      await page.getByRole('heading', { name: 'Enroll a voice' }).waitFor();
      expect(await page.locator('#consent-statement').textContent()).toContain('voiceprint');
      expect(await page.getByText(`Consent statement, version ${BIOMETRIC_CONSENT_STATEMENT.version}`).count()).toBe(1);

      // Enrolling before consenting is refused in the page; the notice goes once consent is given.
      await page.getByRole('button', { name: 'Enroll this voice' }).click();
      await expect.poll(() => page.locator('#enroll-result').textContent()).toBe('Give your biometric consent first (step 1).');
      // Consent is not given without the explicit tick.
      await page.getByRole('button', { name: 'Give consent' }).click();
      await expect.poll(() => page.getByRole('alert').first().textContent()).toContain('Tick the box');
      await page.getByLabel('I have read this statement and I consent.').check();
      await page.getByRole('button', { name: 'Give consent' }).click();
      await page.getByText(`Consent given (statement version ${BIOMETRIC_CONSENT_STATEMENT.version})`).waitFor();
      expect(await page.locator('#enroll-result').textContent()).toBe('');

      await page.getByLabel('Voice name').fill('My narrator voice');
      await page.getByRole('button', { name: 'Start recording' }).click();
      await expect.poll(() => page.locator('#take-progress').textContent()).toContain('Recording:');
      await expect.poll(() => page.locator('#level').evaluate((meter) => (meter as HTMLMeterElement).value)).toBeGreaterThan(0);
      await expectAccessible(page, 'enroll while recording');
      await screenshot(page, 'console-enroll-recording');
      // The fake microphone loops 18.7 s of read sentences (about 13 s of speech). A first take of
      // 6 s holds less than the 10 s of speech enrollment needs: the owner is told, records a second
      // take and enrolls again with the consent already given.
      await page.waitForTimeout(6_000);
      await page.getByRole('button', { name: 'Stop recording' }).click();
      await page.getByText('take-1.webm').first().waitFor();
      // The page's figure is the service's measurement of the take (the detector enrollment uses).
      const total = page.locator('#speech-total');
      await page.locator('#speech-total[data-measuring="false"]').waitFor({ timeout: 60_000 });
      expect(await total.textContent()).toMatch(/^\d+\.\d s of speech, as the service measured it, of the 10 s needed\. Keep reading\.$/);
      const pageFigure = async () => Number(await total.getAttribute('data-speech-seconds'));
      const firstTake = await pageFigure();
      await page.getByRole('button', { name: 'Enroll this voice' }).click();
      const refusal = page.locator('#enroll-result [role="alert"]');
      await refusal.waitFor({ timeout: 90_000 });
      expect(await refusal.textContent()).toMatch(/not enough speech yet.*The service said: .*detected/);
      const detected = Number(/(\d+\.\d) s was detected/.exec((await refusal.textContent()) ?? '')?.[1]);
      expect(Math.abs(firstTake - detected)).toBeLessThanOrEqual(0.2 * detected);
      await screenshot(page, 'console-enroll-too-short');

      await page.getByRole('button', { name: 'Start recording' }).click();
      await page.waitForTimeout(19_000);
      await page.getByRole('button', { name: 'Stop recording' }).click();
      await page.getByText('take-2.webm').first().waitFor();
      await page.locator('#speech-total[data-measuring="false"]').waitFor({ timeout: 60_000 });
      expect(await total.textContent()).toContain('enough to enroll.');
      const bothTakes = await pageFigure();
      await page.getByRole('button', { name: 'Enroll this voice' }).click();
      await page.locator('#quality, #enroll-result [role="alert"]').first().waitFor({ timeout: 90_000 });
      const enrolledText = (await page.locator('#enroll-result').textContent()) ?? '';
      expect(enrolledText).toMatch(/Enrolled "My narrator voice" from \d+\.\d s of speech/);
      const enrolledSpeech = Number(/from (\d+\.\d) s of speech/.exec(enrolledText)?.[1]);
      expect(Math.abs(bothTakes - enrolledSpeech)).toBeLessThanOrEqual(0.2 * enrolledSpeech);
      // The page follows what happened: no "Keep reading" after success, no stale consent notice.
      expect(await total.textContent()).toBe(`Enrolled from ${enrolledSpeech.toFixed(1)} s of speech, as the service measured it.`);
      expect(await page.getByText('Give your biometric consent first').count()).toBe(0);
      expect(await page.locator('#quality tbody tr td:first-child').allTextContents()).toEqual(['take-1.webm', 'take-2.webm']);
      await expectAccessible(page, 'enrolled');
      await screenshot(page, 'console-enrolled');
      await page.locator('#open-voice').click();
      await page.getByRole('heading', { name: 'My narrator voice' }).waitFor();
      voiceUrl = page.url();
    }, 200_000);

    it('gives synthesis consent and grants a licence, then sees the gate approve and block in the timeline', async () => {
      await page.getByRole('button', { name: 'Give synthesis consent' }).click();
      await expect.poll(() => page.locator('#consent-state').textContent(), { timeout: 10_000 }).toContain('on: platforms with a licence');

      await page.getByLabel('Platform name').fill(platformName);
      await page.getByLabel('audiobook').check();
      await page.getByLabel('Intended uses, described').fill('Narration of the novel "Harbour Lights", English audiobook');
      await page.getByLabel('You were represented by').selectOption('union');
      await page.getByRole('button', { name: 'Grant licence' }).click();
      await page.locator('#license-token').waitFor();
      expect(await page.locator('#license-token').textContent()).toMatch(/^vlt_/);
      expect(await page.locator('#licences tbody tr').count()).toBe(1);
      const terms = await page.locator('#licences tbody tr td[data-label="Terms"]').textContent();
      expect(terms).toContain('Narration of the novel "Harbour Lights", English audiobook');
      expect(terms).toContain('Owner represented by: a union');
      expect(terms).toMatch(/Terms hash .*[0-9a-f]{64}/);

      const voiceId = voiceUrl.split('/').pop()!;
      const gate = (intendedUse: string) =>
        post(
          `${service.edgeUrl}/api/v1/protect/pre-synthesis-check`,
          { voice_id: voiceId, platform_name: platformName, intended_use: intendedUse },
          { 'x-api-key': apiKey },
        ).then(json);
      let approved: Record<string, unknown> = {};
      await expect
        .poll(
          async () => {
            approved = await gate('audiobook');
            return approved.status;
          },
          { timeout: 10_000 },
        )
        .toBe('approved');
      // The token redeemed, then redeemed again: the second is refused and audited as such.
      const redeem = () =>
        post(`${service.edgeUrl}${edgeRoutes.redeem.path}`, { token: approved.authorization_token }, { 'x-api-key': apiKey });
      expect((await redeem()).status).toBe(200);
      expect((await redeem()).status).toBe(409);
      expect(await gate('podcast')).toMatchObject({ status: 'blocked', reason: 'scope_mismatch' });
      // A platform screens a recording of this voice (the fake microphone's): the owner sees the match.
      const form = new FormData();
      form.set('platform_name', platformName);
      form.set('audio', new Blob([await readFile(FAKE_MICROPHONE)], { type: 'audio/wav' }), 'sample.wav');
      const screened = await fetch(`${service.originUrl}/api/v1/protect/screen`, {
        method: 'POST',
        headers: { 'x-api-key': apiKey },
        body: form,
      });
      expect(((await json(screened)).matches as { voice_id: string }[]).map((match) => match.voice_id)).toContain(voiceId);

      await expect
        .poll(
          async () => {
            await redrawWith('Refresh');
            // The edge's decisions and the origin's screening entry reach the chain separately.
            const denials = await page.locator('#timeline li[data-decision="deny"]').count();
            return denials > 1 && (await page.locator('#timeline li[data-kind="screening"]').count()) > 0;
          },
          { timeout: 30_000, interval: 1_000 },
        )
        .toBe(true);
      const timeline = (await page.locator('#timeline').textContent()) ?? '';
      expect(timeline).toContain(`${platformName} asked to synthesize it for audiobook: approved`);
      expect(timeline).toContain(`${platformName} asked to synthesize it for podcast: blocked (scope mismatch)`);
      // In the order the decisions were made, to the millisecond: the approval, its redemption, the refused second redemption.
      const decidedAt = await page.locator('#timeline li time').evaluateAll((times) => times.map((each) => each.getAttribute('datetime')!));
      expect(decidedAt).toEqual([...decidedAt].sort());
      expect(await page.locator('#timeline li time').first().textContent()).toMatch(/\d[.,]\d{3}/);
      const entries = await page.locator('#timeline li').allTextContents();
      const approvedAt = entries.findIndex((text) => text.includes('for audiobook: approved'));
      const redeemedAt = entries.findIndex((text) => text.includes('redeemed its authorization token for audiobook.'));
      const refusedAt = entries.findIndex((text) =>
        text.includes(`${platformName} tried to redeem an authorization token for audiobook: refused (token already used).`),
      );
      expect(
        [approvedAt, redeemedAt, refusedAt].every((index) => index >= 0),
        entries.join('\n'),
      ).toBe(true);
      expect(approvedAt).toBeLessThan(redeemedAt);
      expect(redeemedAt).toBeLessThan(refusedAt);
      expect(await page.locator('#timeline li[data-kind="authorization.redeemed"][data-action="refused"]').count()).toBe(1);
      expect(timeline).toContain(`${platformName} screened a recording, and it matched this voice (confidence `);
      // The enrollment reads in plain words, not as its audit kind.
      expect(await page.locator('#timeline li[data-kind="enrollment.completed"]').textContent()).toContain(
        'A new voiceprint was enrolled for this voice.',
      );
      expect(timeline).not.toContain('enrollment.completed');
      expect(timeline).toContain(`A licence for ${platformName} was created.`);
      await expectAccessible(page, 'voice');
      await screenshot(page, 'console-voice');

      await page.setViewportSize({ width: 390, height: 844 });
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
      await expectAccessible(page, 'voice at phone width');
      await screenshot(page, 'console-voice-phone');
      await page.setViewportSize({ width: 1100, height: 900 });
    });

    it('renews and revokes the licence, and the gate then blocks', async () => {
      await page.getByRole('button', { name: `Renew ${platformName}` }).click();
      await page.getByRole('button', { name: `Revoke ${platformName}` }).waitFor();
      await page.getByRole('button', { name: `Revoke ${platformName}` }).click();
      await expect.poll(() => page.locator('#licences tbody tr td[data-label="Status"]').textContent()).toBe('revoked');
      const voiceId = voiceUrl.split('/').pop()!;
      const check = () =>
        post(
          `${service.edgeUrl}/api/v1/protect/pre-synthesis-check`,
          { voice_id: voiceId, platform_name: platformName, intended_use: 'audiobook' },
          { 'x-api-key': apiKey },
        ).then(json);
      // The revocation reaches the voice's gate object through the origin's outbox, in milliseconds.
      await expect.poll(async () => (await check()).status, { timeout: 5_000 }).toBe('blocked');
    });

    it('registers a webhook, tests it and rotates its secret', async () => {
      await page.getByRole('link', { name: 'Webhooks' }).click();
      await page.getByRole('heading', { name: 'Webhooks' }).waitFor();
      await page.getByLabel('URL').fill(receiver.url);
      await page.getByLabel('license.requested').check();
      await page.getByLabel('voice.deleted').check();
      await page.getByRole('button', { name: 'Add endpoint' }).click();
      await expect.poll(() => page.locator('code.secret').textContent()).toMatch(/^whsec_/);

      await page.getByRole('button', { name: `Send a test to ${receiver.url}` }).click();
      await expect.poll(() => page.locator('.notice.success').first().textContent()).toContain('delivered (HTTP 204)');
      expect(receiver.received.some((body) => body.includes('webhook.test'))).toBe(true);
      // The test is in the endpoint's delivery history, read from the origin.
      const testRow = page.locator('table.deliveries tr[data-event="webhook.test"]');
      expect(await testRow.getAttribute('data-status')).toBe('delivered');
      expect(await testRow.locator('td[data-label="Last answer"]').textContent()).toBe('HTTP 204');

      await page.getByRole('button', { name: `Rotate the secret of ${receiver.url}` }).click();
      await page.getByText('The previous secret also signs until').waitFor();
    });

    it("approves a platform's licence request from the inbox, sees the gate approve it in the timeline, and checks the decision's receipt", async () => {
      const voiceId = voiceUrl.split('/').pop()!;
      const check = () =>
        post(
          `${service.edgeUrl}/api/v1/protect/pre-synthesis-check`,
          { voice_id: voiceId, platform_name: askingPlatform, intended_use: 'podcast' },
          { 'x-api-key': askingKey },
        ).then(json);
      expect(await check()).toMatchObject({ status: 'blocked', reason: 'no_license' });
      const asked = await post(
        `${service.originUrl}/api/v1/voices/${voiceId}/license-requests`,
        {
          platform_name: askingPlatform,
          scopes: ['podcast'],
          description: 'Reading our weekly news podcast, in English',
          expires_at: new Date(Date.now() + 30 * 86_400_000).toISOString(),
          message: 'We would like your voice to read our weekly news podcast.',
        },
        { 'x-api-key': askingKey },
      );
      expect(asked.status).toBe(201);

      // The voice points to the waiting request; the inbox holds it.
      await page.goto(voiceUrl);
      await page.getByText('A platform asks for a licence of this voice').waitFor();
      await page.getByRole('link', { name: 'answer in the licence requests' }).click();
      await page.getByRole('heading', { name: 'Licence requests' }).waitFor();
      const request = page.getByRole('article', { name: `${askingPlatform} asks to license "My narrator voice"` });
      expect(await request.textContent()).toContain('For: podcast');
      expect(await request.textContent()).toContain('weekly news podcast');
      expect(await request.textContent()).toContain('Intended uses: Reading our weekly news podcast, in English');
      await expectAccessible(page, 'licence requests');
      await screenshot(page, 'console-licence-requests');
      await request.getByRole('button', { name: `Approve ${askingPlatform}` }).click();
      await page.getByText(`Approved: ${askingPlatform} holds a licence of "My narrator voice" for podcast.`).waitFor();
      await page.getByText('No request is waiting.').waitFor();

      // The approval reaches the gate; the platform asks again and is approved.
      await expect.poll(async () => (await check()).status, { timeout: 10_000 }).toBe('approved');
      await page.getByRole('link', { name: 'Open My narrator voice' }).click();
      await page.getByRole('heading', { name: 'My narrator voice' }).waitFor();
      const decision = page.locator('#timeline li', { hasText: `${askingPlatform} asked to synthesize it for podcast: approved` });
      await expect
        .poll(
          async () => {
            await redrawWith('Refresh');
            return decision.count();
          },
          { timeout: 30_000, interval: 1_000 },
        )
        .toBe(1);

      // Its receipt, checked in the page (inclusion proof and signed checkpoint), then downloaded.
      await decision.getByRole('button', { name: /^Receipt of entry \d+$/ }).click();
      await decision.locator('.receipt [data-proof], .receipt [role="alert"]').first().waitFor({ timeout: 15_000 });
      expect(await decision.locator('.receipt').textContent()).toMatch(/^Proof verified/);
      expect(await decision.locator('[data-proof]').getAttribute('data-proof')).toBe('verified');
      expect(await decision.locator('[data-proof]').textContent()).toMatch(
        /^Proof verified: entry \d+ is in the log .+ signed by the key /,
      );
      const [download] = await Promise.all([
        page.waitForEvent('download'),
        decision.getByRole('link', { name: /^Download the receipt of entry \d+ \(JSON\)$/ }).click(),
      ]);
      const receipt = JSON.parse(await readFile((await download.path())!, 'utf8')) as AuditReceipt;
      expect(download.suggestedFilename()).toBe(`receipt-${receipt.check_id}.json`);
      // The file verifies outside the browser too, against the key the origin publishes.
      const vkey = await (await fetch(`${service.originUrl}/tlog/vkey`)).text();
      const { entry } = await verifyReceipt(receipt, vkey);
      expect(entry).toMatchObject({ voice_id: voiceId, platform_name: askingPlatform, intended_use: 'podcast', decision: 'allow' });
      await expectAccessible(page, 'verified receipt');
      await screenshot(page, 'console-receipt');

      // A receipt whose entry was altered on the way fails the check, and the page says so.
      const first = page.locator('#timeline li[data-decision="allow"]').first();
      await page.route('**/api/v1/protect/audit-log/*/receipt', async (route) => {
        const answer = await route.fetch();
        const body = (await answer.json()) as AuditReceipt;
        await route.fulfill({ response: answer, json: { ...body, leaf: body.leaf.replace('"allow"', '"deny"') } });
      });
      await first.getByRole('button', { name: /^Receipt of entry \d+$/ }).click();
      await first.locator('.receipt [data-proof], .receipt [role="alert"]').first().waitFor({ timeout: 15_000 });
      expect(await first.locator('[data-proof]').getAttribute('data-proof')).toBe('failed');
      expect(await first.locator('[data-proof]').textContent()).toContain('the inclusion proof does not lead to the signed root');
      await page.unroute('**/api/v1/protect/audit-log/*/receipt');
      await expectAccessible(page, 'failed receipt');

      await page.setViewportSize({ width: 390, height: 844 });
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
      await page.setViewportSize({ width: 1100, height: 900 });
    }, 90_000);

    it("shows the webhook's latest deliveries from the origin, then removes the endpoint", async () => {
      await page.getByRole('link', { name: 'Webhooks' }).click();
      await page.getByRole('heading', { name: 'Webhooks' }).waitFor();
      const requested = page.locator('table.deliveries tr[data-event="license.requested"]');
      await expect
        .poll(
          async () => {
            await redrawWith('Refresh deliveries');
            return requested.getAttribute('data-status', { timeout: 1_000 }).catch(() => null);
          },
          { timeout: 30_000, interval: 1_000 },
        )
        .toBe('delivered');
      expect(await requested.locator('td[data-label="Attempts"]').textContent()).toBe('1');
      expect(await requested.locator('td[data-label="Last answer"]').textContent()).toBe('HTTP 204');
      expect(receiver.received.some((body) => body.includes('license.requested'))).toBe(true);
      await expectAccessible(page, 'webhooks');
      await screenshot(page, 'console-webhooks');
      await page.setViewportSize({ width: 390, height: 844 });
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
      await expectAccessible(page, 'webhooks at phone width');
      await page.setViewportSize({ width: 1100, height: 900 });

      await page.getByRole('button', { name: `Remove ${receiver.url}` }).click();
      await page.getByText('No endpoint yet.').waitFor();
    });

    it('deletes the voice and shows the erasure receipt', async () => {
      await page.goto(voiceUrl);
      await page.getByRole('button', { name: 'Delete this voice…' }).click();
      await page.getByRole('button', { name: 'Yes, erase My narrator voice now' }).click();
      await page.locator('#erasure-receipt').waitFor();
      const receipt = (await page.locator('#erasure-receipt').textContent()) ?? '';
      expect(receipt).toContain('Voiceprints removed: 1');
      // The revoked licence and the one the approval created.
      expect(receipt).toContain('Licences removed: 2');
      expect(receipt).toContain('Biometric consents removed: 1');
      await expectAccessible(page, 'erasure receipt');
      await screenshot(page, 'console-erased');
      await page.getByRole('link', { name: 'Back to your voices' }).click();
      await page.getByText('No voice is enrolled yet.').waitFor();
    });

    it('changes the password, then signs out: the origin revokes the session and a reload stays signed out', async () => {
      await page.getByRole('link', { name: 'Account' }).click();
      await page.getByRole('heading', { name: 'Account' }).waitFor();
      // The page names the account, and still does after a reload (the session resumed from its refresh token).
      expect(await page.locator('#signed-in-as').textContent()).toContain(`Signed in as ${owner.email}`);
      await page.reload();
      await page.getByRole('heading', { name: 'Account' }).waitFor();
      expect(await page.locator('#signed-in-as').textContent()).toContain(`Signed in as ${owner.email}`);
      await page.getByLabel('Current password').fill(owner.password);
      await page.getByLabel('New password').fill(`${owner.password} changed`);
      await page.getByRole('button', { name: 'Change password' }).click();
      await page.getByText('Password changed.').waitFor();
      owner.password = `${owner.password} changed`;
      await expectAccessible(page, 'account');
      await screenshot(page, 'console-account');

      const refreshToken = await page.evaluate(() => sessionStorage.getItem('vip-console.refresh-token'));
      await page.getByRole('button', { name: 'Sign out' }).click();
      await page.getByRole('heading', { name: 'Owner console' }).waitFor();
      expect(await page.evaluate(() => Object.keys(sessionStorage))).toEqual([]);
      const refreshed = await post(`${service.originUrl}/api/v1/auth/refresh`, { refresh_token: refreshToken });
      expect(refreshed.status).toBe(401);
      await page.reload();
      await page.getByRole('heading', { name: 'Owner console' }).waitFor();
    });

    it('never hit a Content-Security-Policy or Trusted Types violation on the way', async () => {
      expect(messages.filter((line) => /Content Security Policy|Trusted Type|violation|pageerror/i.test(line))).toEqual([]);
    });
  });

  describe('an owner re-records a voice', () => {
    const rerecorder = { email: `rerecorder-${randomUUID().slice(0, 8)}@console-e2e.example`, password: 'a long re-recording passphrase' };
    const voiceName = 'Re-recorded narrator';
    let context: BrowserContext;
    let page: Page;
    let messages: string[];
    let ownerToken: string;
    let voiceId: string;

    /** The voice as the origin lists it to its owner. */
    const listed = async () => {
      const response = await fetch(`${service.originUrl}/api/v1/voices`, { headers: { authorization: `Bearer ${ownerToken}` } });
      const { voices } = (await response.json()) as { voices: { voice_id: string; status: string; voiceprint_current: boolean }[] };
      return voices.find((voice) => voice.voice_id === voiceId);
    };
    const read = (paths: string[]) => Promise.all(paths.map(async (path) => new Uint8Array(await readFile(path))));

    beforeAll(async () => {
      // This owner's voice is one speaker's; another owner holds a second speaker's voice.
      const other = { email: `other-${randomUUID().slice(0, 8)}@console-e2e.example`, password: 'another owner passphrase' };
      const [token, otherToken] = await Promise.all([
        registeredOwner(service.originUrl, rerecorder),
        registeredOwner(service.originUrl, other),
      ]);
      ownerToken = token;
      voiceId = await enrolledVoice(service.originUrl, ownerToken, voiceName, await read(OTHER_SPEAKER_CLIPS));
      await enrolledVoice(service.originUrl, otherToken, 'Another owner voice', await read(ENROLL_CLIPS));

      context = await browser.newContext({ viewport: { width: 1100, height: 900 } });
      page = await context.newPage();
      messages = await collectConsole(page);
      await signIntoConsole(page, service.originUrl, rerecorder);
    }, 180_000);

    afterAll(async () => {
      await context?.close();
    });

    /** From the voice list to the voice's page, then the re-recording panel opened. */
    async function openReRecording(): Promise<void> {
      await page.goto(`${service.originUrl}/console#/voices`);
      await page.getByRole('link', { name: voiceName }).click();
      await page.getByRole('heading', { name: voiceName, level: 1 }).waitFor();
      const open = page.getByRole('button', { name: 'Re-record this voice' });
      await open.click();
      expect(await open.getAttribute('aria-expanded')).toBe('true');
      await page.getByRole('heading', { name: 'New recordings' }).waitFor();
    }

    it('says a voiceprint of an older speaker model needs re-recording, and re-records it from uploaded files with their quality', async () => {
      // As after a model upgrade: the voice list the page reads says an earlier model made the voiceprint.
      const voiceList = (url: URL) => url.pathname === '/api/v1/voices';
      await page.route(voiceList, async (route) => {
        const answer = await route.fetch();
        const body = (await answer.json()) as { voices: { voice_id: string }[] };
        const voices = body.voices.map((voice) =>
          voice.voice_id === voiceId ? { ...voice, model: 'vip-speaker-v0', voiceprint_current: false } : voice,
        );
        await route.fulfill({ response: answer, json: { ...body, voices } });
      });
      await openReRecording();
      await page.unroute(voiceList);
      expect(await page.locator('#voiceprint-outdated').textContent()).toContain('made by an older speaker model (vip-speaker-v0)');

      await page.getByLabel('Or upload recordings').setInputFiles(OTHER_SPEAKER_CLIPS);
      await page.locator('#speech-total[data-measuring="false"]').waitFor({ timeout: 60_000 });
      expect(await page.locator('#speech-total').textContent()).toContain(`(0 take(s), ${OTHER_SPEAKER_CLIPS.length} uploaded file(s))`);
      const measuredUploads = Number(await page.locator('#speech-total').getAttribute('data-speech-seconds'));
      await expectAccessible(page, 're-recording a voice of an older model');
      await page.getByRole('button', { name: 'Replace the voiceprint' }).click();
      await page.locator('#reenrolled, #reenroll-result [role="alert"]').first().waitFor({ timeout: 120_000 });

      // The view is drawn again from the origin's answers: the new report, and no outdated notice.
      expect(await page.locator('#reenrolled').textContent()).toMatch(
        /^Re-recorded "Re-recorded narrator" from \d+\.\d s of speech, under the speaker model \S+\. Status: ready/,
      );
      // The committed fixtures: what the page said before sending agrees with what the service enrolled.
      const reenrolledSpeech = Number(/from (\d+\.\d) s of speech/.exec((await page.locator('#reenrolled').textContent()) ?? '')?.[1]);
      expect(Math.abs(measuredUploads - reenrolledSpeech)).toBeLessThanOrEqual(0.2 * reenrolledSpeech);
      expect(await page.locator('#quality tbody tr td:first-child').allTextContents()).toEqual(
        OTHER_SPEAKER_CLIPS.map((path) => basename(path)),
      );
      expect(await page.locator('#voiceprint-outdated').count()).toBe(0);
      await page.getByText('Made by the speaker model the service runs now').waitFor();
      expect(await page.evaluate(() => document.activeElement?.tagName)).toBe('H1');
      expect(await listed()).toMatchObject({ status: 'ready', voiceprint_current: true });
      await expectAccessible(page, 're-recorded voice');
      await screenshot(page, 'console-reenrolled');
    }, 180_000);

    it("shows a refused re-recording's problem to the owner, and the voiceprint stays", async () => {
      await openReRecording();
      const send = page.getByRole('button', { name: 'Replace the voiceprint' });
      const refusal = (code: string) => page.locator(`#reenroll-result [role="alert"][data-code="${code}"]`);

      await send.click();
      expect(await page.locator('#reenroll-result [role="alert"]').textContent()).toBe('Record a take or choose a file first.');

      // One short clip holds less speech than a voiceprint needs.
      await page.getByLabel('Or upload recordings').setInputFiles(OTHER_SPEAKER_CLIPS.slice(0, 1));
      await send.click();
      await refusal('too_short').waitFor({ timeout: 60_000 });
      expect(await refusal('too_short').textContent()).toMatch(
        /^Audio too short\. There is not enough speech yet.*The service said: .*detected/,
      );

      // Another owner's recordings: the service refuses them as it refuses such an enrollment.
      await page.getByLabel('Or upload recordings').setInputFiles(ENROLL_CLIPS);
      await send.click();
      await refusal('identity_conflict').waitFor({ timeout: 120_000 });
      expect(await refusal('identity_conflict').textContent()).toMatch(
        /^Voice already enrolled by another owner\. This voice is already enrolled by another owner\./,
      );
      await expectAccessible(page, 'refused re-recording');
      await screenshot(page, 'console-reenroll-refused');

      expect(await listed()).toMatchObject({ status: 'ready', voiceprint_current: true });
      expect(messages.filter((line) => /Content Security Policy|Trusted Type|violation|pageerror/i.test(line))).toEqual([]);
    }, 240_000);
  });

  it('ends a session whose refresh token was spent elsewhere, and says so', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    await signIntoConsole(page, service.originUrl, owner);
    // Someone else redeems the tab's refresh token first (a stolen copy): the origin revokes the family.
    const stolen = await page.evaluate(() => sessionStorage.getItem('vip-console.refresh-token'));
    expect((await post(`${service.originUrl}/api/v1/auth/refresh`, { refresh_token: stolen })).status).toBe(200);
    await page.reload();
    await page.getByRole('heading', { name: 'Owner console' }).waitFor();
    expect(await page.getByRole('alert').textContent()).toContain('used twice');
    expect(await page.evaluate(() => Object.keys(sessionStorage))).toEqual([]);
    await context.close();
  });

  it('an inline script injected into the page does not run (CSP and Trusted Types)', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(`${service.originUrl}/console`);
    await page.getByRole('heading', { name: 'Owner console' }).waitFor();
    const ran = await page.evaluate(() => {
      const script = document.createElement('script');
      try {
        script.textContent = 'window.injected = true';
        document.body.append(script);
      } catch {
        // Trusted Types refuses the assignment itself.
      }
      return 'injected' in window;
    });
    expect(ran).toBe(false);
    await context.close();
  });
});
