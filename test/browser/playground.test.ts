import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { limits, redeemResultSchema } from '@vip/shared-schema';
import type { AuditReceipt } from '@vip/shared-schema/client';
import { embedAuthorization } from '@vip/shared-schema/client/provenance';
import { edgeRoutes } from '@vip/shared-schema/routes/edge';
import { verifyProvenanceRoute } from '@vip/shared-schema/routes/origin/provenance';
import { audioByteOffset, platformSigner } from '@vip/shared-schema/testing/provenance-files';
import { concatSamples } from '@vip/shared-schema/testing/speech-like';
import { markPcm } from '@vip/shared-schema/watermark/index';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { pcm16Wav } from '../../origin/src/testing/fixtures.js';
import { decodeAudio } from '../../origin/src/voiceprint/decode.js';
import { enrolledVoice, eventually, issuePlatformKey, json, post, registeredOwner } from '../support/service.js';
import { ENROLL_CLIPS, OTHER_SPEAKER_CLIPS } from '../support/speech.js';
import { chromiumMissing, collectConsole, expectAccessible, screenshot, serviceAndChromiumPerSuite, skipReason } from './support.js';

const admin = { email: 'admin@playground-e2e.example', password: 'playground-e2e-admin-password' };
const owner = { email: 'owner@playground-e2e.example', password: 'playground-e2e-owner-password' };
/**
 * The protected voice: eight clips enroll it, a ninth stands for the platform's synthesis, and the
 * ninth and tenth together for a synthesis long enough to carry its watermark surely (5 s,
 * docs/WATERMARK.md). Another speaker, whom nobody protects.
 */
const read = (path: string) => new Uint8Array(readFileSync(path));
const VOICE_CLIPS = OTHER_SPEAKER_CLIPS.slice(0, 8).map(read);
const SYNTHESIZED_CLIP = read(OTHER_SPEAKER_CLIPS[8]!);
const LONGER_SYNTHESIS_CLIPS = [SYNTHESIZED_CLIP, read(OTHER_SPEAKER_CLIPS[9]!)];
const STRANGER_CLIP = read(ENROLL_CLIPS[0]!);

/** Clips one after the other as 16 kHz PCM, what a TTS engine holds before it encodes. */
async function speechPcm(...clips: Uint8Array[]): Promise<Float32Array> {
  const decoded = await Promise.all(
    clips.map(async (clip) => (await decodeAudio(clip, { maxBytes: 2 ** 24, maxSeconds: 60, minSeconds: 0 })).samples),
  );
  return concatSamples(...decoded);
}

/** Drops `bytes` as a file on the page's drop zone, as a person dragging it from their desktop does. */
async function dropFile(page: Page, name: string, bytes: Uint8Array): Promise<void> {
  const transfer = await page.evaluateHandle(
    ({ name, data }) => {
      const transfer = new DataTransfer();
      transfer.items.add(new File([Uint8Array.from(data)], name, { type: 'audio/wav' }));
      return transfer;
    },
    { name, data: [...bytes] },
  );
  await page.locator('#drop-zone').dispatchEvent('drop', { dataTransfer: transfer });
}

describe.skipIf(chromiumMissing)(`evaluator playground in Chromium${skipReason}`, () => {
  const running = serviceAndChromiumPerSuite({ env: { ADMIN_EMAIL: admin.email, ADMIN_PASSWORD: admin.password } });

  it('serves the page with a strict Content-Security-Policy and no inline code', async () => {
    const response = await fetch(`${running.service.edgeUrl}/playground`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/html/);
    const csp = response.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("require-trusted-types-for 'script'");
    expect(csp).not.toContain('unsafe-inline');
    // The one other address the page's script may call: the origin, where files are checked.
    expect(csp).toContain(`connect-src 'self' ${new URL(running.service.originUrl).origin};`);
    expect(response.headers.get('x-content-type-options')).toBe('nosniff');
    const html = await response.text();
    expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
    expect(html).not.toMatch(/\son[a-z]+=/);
    const script = await fetch(`${running.service.edgeUrl}/playground/playground.js`);
    expect(script.headers.get('content-type')).toMatch(/^text\/javascript/);
  });

  it("an evaluator sees the gate's own bodies first, the spec's demo shapes after and labelled, runs a live call and copies a snippet", async () => {
    const context = await running.browser.newContext();
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: running.service.edgeUrl });
    const page = await context.newPage();
    const messages = await collectConsole(page);
    await page.goto(`${running.service.edgeUrl}/playground`);

    await page.locator('[data-outcome]').nth(5).waitFor();
    const demo = (await (await fetch(`${running.service.edgeUrl}/api/v1/protect/demo/pre-synthesis-check`)).json()) as {
      production_responses: Record<string, Record<string, unknown>>;
      possible_responses: Record<string, Record<string, unknown>>;
    };
    // The check ids, the example voice id and the token's expiry are fresh on every call; every other byte is the demo's own.
    const withoutExampleIds = (text: string) =>
      text
        .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, '<id>')
        .replace(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z/g, '<time>');
    // First the bodies the gate returns (what INTEGRATION codes against), then the spec's demo shapes, each under its heading.
    const cards = await page
      .locator('[data-outcome]')
      .evaluateAll((elements) =>
        elements.map((element) => `${(element as HTMLElement).dataset.shape}:${(element as HTMLElement).dataset.outcome}`),
      );
    expect(cards).toEqual([
      'production:approved',
      'production:blocked',
      'production:no_registry_record',
      'spec:protected_licensed',
      'spec:protected_no_license',
      'spec:no_registry_record',
    ]);
    for (const [shape, bodies] of [
      ['production', demo.production_responses],
      ['spec', demo.possible_responses],
    ] as const) {
      for (const [name, body] of Object.entries(bodies)) {
        const shown = (await page.locator(`[data-shape="${shape}"][data-outcome="${name}"] pre`).textContent()) ?? '';
        expect(withoutExampleIds(shown)).toBe(withoutExampleIds(JSON.stringify(body, null, 2)));
      }
    }
    const headings = await page.locator('#outcomes h3').allTextContents();
    expect(headings).toEqual(['What the gate returns: code against these', "The specification's demo shapes"]);
    expect(await page.locator('[data-shape="spec"] h4').first().textContent()).toMatch(/^Spec demo shape: /);
    // The snippet imports the installable client, not a path inside the repository.
    const clientSnippet = (await page.locator('#client-gate').textContent()) ?? '';
    expect(clientSnippet).toContain("from '@vip/client'");
    expect(clientSnippet).not.toContain('@vip/shared-schema');
    await expectAccessible(page, 'playground');

    await page.getByRole('button', { name: 'Call the demo' }).click();
    await expect.poll(() => page.locator('#live-result').textContent()).toContain('HTTP 200');
    const body = JSON.parse((await page.locator('#live-body').textContent()) ?? '') as { demo: boolean };
    expect(body.demo).toBe(true);
    expect(await page.locator('#live-result').textContent()).toMatch(/ratelimit-policy: /i);

    await page.locator('button[data-copy="curl-demo"]').click();
    await expect.poll(() => page.locator('#copy-status').textContent()).toContain('Copied');
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(
      `curl -s ${running.service.edgeUrl}/api/v1/protect/demo/pre-synthesis-check`,
    );
    await screenshot(page, 'playground');

    await page.setViewportSize({ width: 390, height: 844 });
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    await expectAccessible(page, 'playground at phone width');
    await screenshot(page, 'playground-phone');

    expect(messages.filter((line) => /Content Security Policy|Trusted Type|violation|pageerror/i.test(line))).toEqual([]);
    await context.close();
  });
  it("says why it shows the specification's demo shapes, and how to get a key for the real gate, linking to where that happens", async () => {
    const { originUrl, edgeUrl } = running.service;
    const page = await running.browser.newPage();
    await page.goto(`${edgeUrl}/playground`);
    await page.locator('[data-outcome]').nth(5).waitFor();
    const specHint = (await page.locator('#spec-title + p').textContent()) ?? '';
    expect(specHint).toContain('shown so that you can hold the service against that specification');
    expect(specHint).toContain('The gate never answers them');

    // The live call says what the real gate needs and who issues it, and links to the reference of those calls and to the console.
    const realGate = page.locator('#real-gate');
    expect(await realGate.textContent()).toMatch(
      /needs your platform's API key[\s\S]*An administrator of this service registers your platform/,
    );
    const links = await realGate.locator('a').evaluateAll((anchors) => anchors.map((anchor) => (anchor as HTMLAnchorElement).href));
    expect(links).toEqual([
      `${originUrl}/docs#/platforms/createPlatform`,
      `${originUrl}/docs#/platforms/createApiKey`,
      `${originUrl}/console`,
    ]);
    for (const link of links) expect((await fetch(link)).status, link).toBe(200);
    expect(await realGate.textContent()).toContain('docs/INTEGRATION.md');
    await expectAccessible(page, 'playground, the real gate');
    await page.close();
  });

  it('checks files: a signed, authorized file dropped on the page is `authorized` with its signer and a receipt verified in the page; an altered file says so and that what it names was not checked; the check’s credentials on another voice are `voice_mismatch` with the check’s standings still shown; a file without credentials says so; a marked file without credentials is `watermark_authorized` by its mark; the owner sees the checks in the voice timeline', async () => {
    const { originUrl, edgeUrl } = running.service;
    // A voice, its consent and a licence; the platform registers its CA, is approved, redeems, and embeds the receipt.
    const platformName = `Playground TTS ${randomUUID().slice(0, 6)}`;
    const apiKey = await issuePlatformKey(originUrl, admin, platformName);
    const asPlatform = { 'x-api-key': apiKey };
    const ownerToken = await registeredOwner(originUrl, owner);
    const asOwner = { authorization: `Bearer ${ownerToken}` };
    const voiceId = await enrolledVoice(originUrl, ownerToken, 'Playground voice', VOICE_CLIPS);
    const consented = await fetch(`${originUrl}/api/v1/voices/${voiceId}/consent`, {
      method: 'PUT',
      headers: { ...asOwner, 'content-type': 'application/json' },
      body: JSON.stringify({ status: 'active' }),
    });
    expect(consented.status).toBe(200);
    const expires = new Date(Date.now() + 30 * 86_400_000).toISOString();
    const licensed = await post(
      `${originUrl}/api/v1/voices/${voiceId}/licenses`,
      {
        platform_name: platformName,
        scopes: ['audiobook'],
        description: 'Narration of audiobook chapters for the tests',
        expires_at: expires,
      },
      asOwner,
    );
    expect(licensed.status, await licensed.clone().text()).toBe(201);
    const { caPem, signer } = platformSigner(platformName);
    const registered = await post(`${originUrl}/api/v1/signing-certificates`, { certificate_pem: caPem }, asPlatform);
    expect(registered.status, await registered.clone().text()).toBe(201);
    const gate = () =>
      post(
        `${edgeUrl}${edgeRoutes.preSynthesisCheck.path}`,
        { voice_id: voiceId, platform_name: platformName, intended_use: 'audiobook' },
        asPlatform,
      );
    await eventually(async () => (await json(await gate())).status === 'approved', 20_000);
    const approved = await json(await gate());
    const redeemed = await post(`${edgeUrl}${edgeRoutes.redeem.path}`, { token: approved.authorization_token }, asPlatform);
    expect(redeemed.status).toBe(200);
    const { watermark } = redeemResultSchema.parse(await json(redeemed));
    let receipt: AuditReceipt | undefined;
    await eventually(async () => {
      const response = await fetch(`${originUrl}/api/v1/protect/audit-log/${approved.check_id}/receipt`, { headers: asPlatform });
      if (response.status === 200) receipt = (await response.json()) as AuditReceipt;
      return receipt !== undefined;
    }, 30_000);
    const signed = await embedAuthorization(
      pcm16Wav(await speechPcm(SYNTHESIZED_CLIP)),
      'audio/wav',
      { check_id: approved.check_id as string, receipt: receipt! },
      signer,
    );
    const altered = Uint8Array.from(signed);
    const at = audioByteOffset(signed);
    altered[at] = altered[at]! ^ 0xff;
    const unsigned = pcm16Wav(await speechPcm(STRANGER_CLIP));
    // The same check's credentials on a stranger's voice: the decision stands, the voice does not.
    const otherVoice = await embedAuthorization(
      unsigned,
      'audio/wav',
      { check_id: approved.check_id as string, receipt: receipt! },
      signer,
    );
    // A synthesis marked with the redeem answer's watermark, as a plain WAV: the mark is its only evidence.
    const markedOnly = pcm16Wav(markPcm(await speechPcm(...LONGER_SYNTHESIS_CLIPS), 16_000, watermark));
    // The redemption reaches the origin's log a moment after the gate answered it.
    await eventually(async () => {
      const page = await json(await fetch(`${originUrl}/api/v1/protect/audit-log?voice_id=${voiceId}`, { headers: asOwner }));
      return (page.entries as { kind: string }[]).some((entry) => entry.kind === 'authorization.redeemed');
    }, 30_000);

    const context = await running.browser.newContext({ viewport: { width: 1100, height: 900 } });
    const page = await context.newPage();
    const messages = await collectConsole(page);
    await page.goto(`${edgeUrl}/playground`);
    const verdict = page.locator('#check-result [data-verdict]');
    const checked = async (name: string) => {
      await page.locator('#check-result [data-verdict]', { hasText: name }).waitFor({ timeout: 30_000 });
      return verdict.getAttribute('data-verdict');
    };

    // Dropped: authorized, signed by the platform's certificate, the check's receipt verified here, the same speaker.
    await dropFile(page, 'synthesized.wav', signed);
    expect(await checked('synthesized.wav')).toBe('authorized');
    await page.locator('#check-receipt [data-proof]').waitFor({ timeout: 15_000 });
    const signerFacts = (await page.locator('#check-signer').textContent()) ?? '';
    expect(signerFacts).toContain(`${platformName} signer`);
    expect(signerFacts).toContain(`Platform it chains to${platformName}`);
    expect(await page.locator('#check-named').textContent()).toContain(approved.check_id as string);
    expect(await page.locator('#check-receipt [data-proof]').getAttribute('data-proof')).toBe('verified');
    expect(await page.locator('#check-receipt [data-proof]').textContent()).toMatch(
      /^Proof verified: entry \d+ is in the log .+ signed by the key /,
    );
    expect(await page.locator('#check-receipt [data-logged]').getAttribute('data-logged')).toBe('allow');
    const voiceFacts = (await page.locator('#check-voice').textContent()) ?? '';
    expect(voiceFacts).toContain(`Compared with the voice${voiceId}`);
    expect(voiceFacts).toContain('Same speakeryes');
    const authorizedCheck = (await page.locator('#check-result > p.hint code').textContent()) ?? '';
    await expectAccessible(page, 'playground, an authorized file');
    await screenshot(page, 'playground-check-file');

    // Chosen: one audio byte changed after signing, then a recording of someone nobody protects, without credentials.
    const namedFacts = async () => (await page.locator('#check-named').textContent()) ?? '';
    expect(await namedFacts()).toContain('Its token redeemedyes');
    await page.locator('#check-file').setInputFiles({ name: 'altered.wav', mimeType: 'audio/wav', buffer: Buffer.from(altered) });
    expect(await checked('altered.wav')).toBe('altered');
    // Broken credentials vouch for nothing: what they name was not checked, which is not a "no".
    for (const fact of ['approved', 'Its token redeemed', 'The owner’s consent stands today', 'The platform’s licence stands today']) {
      expect(await namedFacts()).toContain(`${fact}not checked`);
    }
    expect(await page.locator('#check-signer').textContent()).toContain('Platform it chains tonot checked');
    expect(await page.locator('#check-voice').textContent()).toContain('Not checked');
    // Another voice under the check's credentials: every finding about the check is still stated, and true.
    await page.locator('#check-file').setInputFiles({ name: 'other-voice.wav', mimeType: 'audio/wav', buffer: Buffer.from(otherVoice) });
    expect(await checked('other-voice.wav')).toBe('voice_mismatch');
    for (const fact of ['approved', 'Its token redeemed', 'The owner’s consent stands today', 'The platform’s licence stands today']) {
      expect(await namedFacts()).toContain(`${fact}yes`);
    }
    expect(await page.locator('#check-voice').textContent()).toContain('Same speakerno');
    await page.locator('#check-file').setInputFiles({ name: 'plain.wav', mimeType: 'audio/wav', buffer: Buffer.from(unsigned) });
    expect(await checked('plain.wav')).toBe('no_credentials');
    expect(await page.locator('#check-signer').textContent()).toContain('no Content Credentials');
    await expectAccessible(page, 'playground, a file without credentials');

    // Chosen: the marked file without credentials, judged by the check its watermark resolves to.
    await page.locator('#check-file').setInputFiles({ name: 'marked.wav', mimeType: 'audio/wav', buffer: Buffer.from(markedOnly) });
    expect(await checked('marked.wav'), (await page.locator('#check-watermark').textContent()) ?? '').toBe('watermark_authorized');
    expect(await verdict.textContent()).toContain('Authorized by its watermark: the file carries no Content Credentials');
    const markFacts = (await page.locator('#check-watermark').textContent()) ?? '';
    expect(markFacts).toContain(`Mark read${watermark.id}`);
    expect(markFacts).toContain('Issued by this serviceyes');
    expect(markFacts).toContain(`For the check${approved.check_id as string}`);
    expect(await page.locator('#check-named').textContent()).toContain('Named by the file’s watermark');
    const markCheck = (await page.locator('#check-result > p.hint code').textContent()) ?? '';
    expect(markCheck).toMatch(/^[0-9a-f-]{36}$/);
    expect(markCheck).not.toBe(authorizedCheck);
    await page.setViewportSize({ width: 390, height: 844 });
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    expect(messages.filter((line) => /Content Security Policy|Trusted Type|violation|pageerror/i.test(line))).toEqual([]);

    // The owner's timeline shows the checks of files that named the voice, each with its receipt.
    const consolePage = await context.newPage();
    await consolePage.setViewportSize({ width: 1100, height: 900 });
    await consolePage.goto(`${originUrl}/console`);
    await consolePage.locator('#sign-in-email').fill(owner.email);
    await consolePage.locator('#sign-in-password').fill(owner.password);
    await consolePage.getByRole('button', { name: 'Sign in', exact: true }).click();
    await consolePage.getByRole('link', { name: 'Playground voice' }).click();
    await consolePage.getByRole('heading', { name: 'Playground voice' }).waitFor();
    const verification = consolePage.locator('#timeline li[data-kind="provenance.verification"]', { hasText: authorizedCheck });
    const markVerification = consolePage.locator('#timeline li[data-kind="provenance.verification"]', { hasText: markCheck });
    await expect
      .poll(
        async () => {
          // Refreshed only while an entry is missing, so no refresh redraws the timeline under the clicks below.
          const counts = [await verification.count(), await markVerification.count()];
          if (counts.some((count) => count === 0)) await consolePage.locator('#refresh-timeline').click();
          return counts;
        },
        { timeout: 30_000, interval: 1_000 },
      )
      .toEqual([1, 1]);
    expect(await verification.textContent()).toContain(
      `Someone checked a file whose Content Credentials name this voice and ${platformName}: authorized.`,
    );
    expect(await consolePage.locator('#timeline li[data-kind="provenance.verification"]', { hasText: ': altered.' }).count()).toBe(1);
    expect(await markVerification.textContent()).toContain(
      `Someone checked a file without Content Credentials whose watermark names this voice and ${platformName}: authorized by its watermark.`,
    );
    await verification.getByRole('button', { name: /^Receipt of entry \d+$/ }).click();
    await verification.locator('.receipt [data-proof], .receipt [role="alert"]').first().waitFor({ timeout: 15_000 });
    expect(await verification.locator('[data-proof]').getAttribute('data-proof')).toBe('verified');
    await expectAccessible(consolePage, 'console timeline with a file check');
    await context.close();
  }, 300_000);

  // Last: it spends this minute's file checks of the address every test here calls from.
  it('past the file checks a minute allows an address, says so in the words the page uses, with the wait Retry-After gives', async () => {
    const { originUrl, edgeUrl } = running.service;
    const page = await running.browser.newPage();
    await page.goto(`${edgeUrl}/playground`);
    expect(await page.locator('#check-a-file').textContent()).toContain(
      `${limits.provenanceVerifyAnonymousPerMinute} files per minute per address`,
    );
    // The page and this test reach the origin from the same address: the test spends the rest of the minute's checks.
    const spendChecks = async () => {
      for (let call = 0; call <= limits.provenanceVerifyAnonymousPerMinute; call++) {
        const answer = await fetch(`${originUrl}${verifyProvenanceRoute.path}`, { method: 'POST', body: new FormData() });
        await answer.arrayBuffer();
        if (answer.status === 429) return;
      }
      throw new Error('the file checks were never refused');
    };
    const refusal = page.locator('#check-result .notice.error');
    // A new minute may start between the last spent check and the page's: then spend them again.
    await expect
      .poll(
        async () => {
          await spendChecks();
          await dropFile(page, 'one-too-many.wav', STRANGER_CLIP);
          await page.locator('#check-result .notice').waitFor({ timeout: 30_000 });
          return refusal.textContent();
        },
        { timeout: 120_000, interval: 0 },
      )
      .toContain('HTTP 429');
    expect(await refusal.textContent()).toContain(
      `At most ${limits.provenanceVerifyAnonymousPerMinute} provenance-verify calls per minute per address`,
    );
    const wait = page.locator('#check-result [data-retry-after]');
    const seconds = Number(await wait.getAttribute('data-retry-after'));
    expect(seconds).toBeGreaterThanOrEqual(1);
    expect(seconds).toBeLessThanOrEqual(60);
    expect(await wait.textContent()).toBe(`Retry-After: ${seconds} s. Try again after that.`);
    await page.close();
  });
});
