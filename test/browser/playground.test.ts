import { describe, expect, it } from 'vitest';
import { chromiumMissing, collectConsole, expectAccessible, screenshot, serviceAndChromiumPerSuite, skipReason } from './support.js';

describe.skipIf(chromiumMissing)(`evaluator playground in Chromium${skipReason}`, () => {
  const running = serviceAndChromiumPerSuite();

  it('serves the page with a strict Content-Security-Policy and no inline code', async () => {
    const response = await fetch(`${running.service.edgeUrl}/playground`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/html/);
    const csp = response.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("require-trusted-types-for 'script'");
    expect(csp).not.toContain('unsafe-inline');
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
});
