import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { enrolledVoice, registeredOwner } from '../support/service.js';
import { ENROLL_CLIPS } from '../support/speech.js';
import { chromiumMissing, collectConsole, serviceAndChromiumPerSuite, skipReason } from './support.js';

/** What a newcomer meets on a first visit to each page: nothing on the console, nothing cut off. */
describe.skipIf(chromiumMissing)(`A first visit in Chromium${skipReason}`, () => {
  const running = serviceAndChromiumPerSuite();

  it('the console, the playground and both reference pages load without a console error or a policy violation', async () => {
    const { originUrl, edgeUrl } = running.service;
    const pages = [
      `${originUrl}/console`,
      `${originUrl}/console#/sign-in`,
      `${edgeUrl}/playground`,
      `${originUrl}/docs`,
      `${edgeUrl}/docs`,
    ];
    for (const url of pages) {
      const page = await running.browser.newPage();
      const messages = await collectConsole(page);
      await page.goto(url, { waitUntil: 'networkidle' });
      // A Trusted Types or CSP violation, a failed load (a missing icon included) or an uncaught error.
      expect(
        messages.filter((line) => /^(error|pageerror)|violation/i.test(line)),
        url,
      ).toEqual([]);
      await page.close();
    }
  });

  it("the licensing page's request example fits the page at 1280 px and on a phone, without scrolling sideways", async () => {
    const { originUrl } = running.service;
    const owner = { email: `licensing-${randomUUID().slice(0, 8)}@first-visit.example`, password: 'a long licensing passphrase' };
    const token = await registeredOwner(originUrl, owner);
    const clips = await Promise.all(ENROLL_CLIPS.map(async (path) => new Uint8Array(await readFile(path))));
    const voiceId = await enrolledVoice(originUrl, token, 'Licensed narrator', clips);
    for (const viewport of [
      { width: 1280, height: 800 },
      { width: 390, height: 844 },
    ]) {
      const context = await running.browser.newContext({ viewport });
      const page = await context.newPage();
      await page.goto(`${originUrl}/licensing?voice_id=${voiceId}`);
      const overflow = await page.evaluate(() => {
        const example = document.querySelector('pre')!;
        return {
          example: example.scrollWidth - example.clientWidth,
          page: document.documentElement.scrollWidth - window.innerWidth,
          text: example.textContent ?? '',
        };
      });
      expect(overflow.text, `${viewport.width} px`).toContain(`/api/v1/voices/${voiceId}/license-requests`);
      expect({ example: overflow.example, page: overflow.page }, `${viewport.width} px`).toEqual({ example: 0, page: 0 });
      await context.close();
    }
  }, 120_000);
});
