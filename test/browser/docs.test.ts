import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { chromiumMissing, collectConsole, serviceAndChromiumPerSuite, skipReason } from './support.js';

/**
 * The text of one operation, opened by its address (#/tag/operationId), once it shows every one of
 * `fields`: the renderer fills an opened operation in steps (its schemas resolve after the section
 * opens), so reading it at once can catch it half drawn. Fails when a field never appears.
 */
async function operationShowing(page: Page, base: string, tag: string, operationId: string, fields: string[]): Promise<string> {
  await page.goto(`${base}/docs#/${tag}/${operationId}`);
  const operation = page.locator(`#operations-${tag}-${operationId}`);
  await operation.locator('.opblock-body').waitFor();
  const text = async () => (await operation.textContent()) ?? '';
  const missing = async () => {
    const shown = await text();
    return fields.filter((field) => !shown.includes(field));
  };
  await expect.poll(missing, { timeout: 15_000 }).toEqual([]);
  return text();
}

describe.skipIf(chromiumMissing)(`API reference pages in Chromium${skipReason}`, () => {
  const running = serviceAndChromiumPerSuite();

  it("the origin's page shows a route's query fields, response fields and enums, its problem codes, rendered Markdown and contents", async () => {
    const page = await running.browser.newPage();
    const messages = await collectConsole(page);
    // Query parameters with their enum, the response's fields (resolved from components), problem codes by status.
    const fields = ['check_id', 'order', 'decided_at', 'recorded_at', 'seq', 'next_cursor', 'gate.decision'];
    const text = await operationShowing(page, running.service.originUrl, 'audit', 'listAuditEntries', fields);
    expect(text).toMatch(/422[\s\S]*validation_failed: Validation failed/);
    // The description is Markdown: its table of contents links to each tag, its problem codes are a table.
    const contents = page.locator('.info nav a');
    expect(await contents.allInnerTexts()).toEqual(expect.arrayContaining(['audit', 'voices', 'problem codes']));
    // The problem codes are a table drawn after the operations, not in the introduction.
    expect(await page.locator('.info table').count()).toBe(0);
    const problemCodes = page.locator('#problem-codes');
    expect(await problemCodes.locator('table td code', { hasText: 'identity_conflict' }).count()).toBe(1);
    const [lastOperation, codesTop] = await Promise.all([
      page.locator('.opblock-tag-section').last().boundingBox(),
      problemCodes.boundingBox(),
    ]);
    expect(codesTop!.y).toBeGreaterThan(lastOperation!.y);
    // Fields read with their one-line description, formats by name (no regular expression shown).
    expect(text).toContain('Id of the gate decision');
    expect(text).not.toContain('[0-9a-fA-F]{8}');
    // Every contents link lands on an element of the drawn page (a tag's section, the problem codes).
    const targets = await contents.evaluateAll((links) =>
      links.map((link) => [link.getAttribute('href'), document.getElementById(link.getAttribute('href')!.slice(1)) !== null]),
    );
    expect(targets).toContainEqual(['#operations-tag-audit', true]);
    expect(targets.filter(([, found]) => !found)).toEqual([]);
    expect(messages.filter((line) => /error|violat/i.test(line))).toEqual([]);
    await page.close();
  });

  it("the edge's page renders the gate's request and answer from the origin's renderer, and leaves the internal routes out", async () => {
    const page = await running.browser.newPage();
    const messages = await collectConsole(page);
    const fields = ['voice_id', 'platform_name', 'intended_use', 'authorization_token', 'no_registry_record', 'rate_limited'];
    await operationShowing(page, running.service.edgeUrl, 'gate', 'preSynthesisCheck', fields);
    expect(await page.locator('.opblock-summary-path', { hasText: '/internal/' }).count()).toBe(0);
    expect(await page.locator('.opblock').count()).toBeGreaterThan(5);
    expect(messages.filter((line) => /error|violat/i.test(line))).toEqual([]);
    await page.close();
  });

  it('offers no "Authorize" dialog or server choice, since the page calls nothing, and says in each operation which credentials it takes', async () => {
    const page = await running.browser.newPage();
    const text = await operationShowing(page, running.service.originUrl, 'platforms', 'createApiKey', ['Credentials:']);
    expect(text).toContain("Credentials: bearer: a user's access token (Authorization: Bearer).");
    // Neither the page's "Authorize" button nor an operation's lock, which opened the same dialog.
    const dialogOpeners = 'button.authorize, button.authorization__btn';
    expect(await page.locator(dialogOpeners).count()).toBe(0);
    expect(await page.locator('.scheme-container').isVisible()).toBe(false);
    // The operation's body shows before its description is rendered: wait for the text, as on the origin's page.
    const gateText = await operationShowing(page, running.service.edgeUrl, 'gate', 'preSynthesisCheck', ['Credentials:']);
    expect(gateText).toContain("Credentials: apiKey: a platform's key in X-API-Key");
    expect(await page.locator(dialogOpeners).count()).toBe(0);
    await page.close();
  });
});
