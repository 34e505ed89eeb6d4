import { existsSync, mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { consentChallengeSchema } from '@vip/shared-schema';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, expect } from 'vitest';
import { type RunningService, type ServiceOptions, startService } from '../support/service.js';

const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, '../..');

/** Debian's chromium (`apt-get install chromium`; `.ci/run` installs it). */
export const CHROMIUM = '/usr/bin/chromium';
export const chromiumMissing = !existsSync(CHROMIUM);
/** Shown as the name of the skipped suite on a machine without it, so the reason is in the report. */
export const skipReason = chromiumMissing ? ` (skipped: ${CHROMIUM} is not installed; apt-get install chromium)` : '';

/** A few seconds of real read speech (see fixtures/README.md), played by the fake microphone in a loop. */
export const FAKE_MICROPHONE = join(here, 'fixtures/fake-microphone.wav');
export const SCREENSHOTS = join(root, 'docs/screenshots');
/**
 * Set by `npm run screenshots` only: the tests never rewrite committed files, so `npm test` on a
 * clean clone leaves `git status` clean (.ci/run checks it).
 */
const refreshScreenshots = process.env.VIP_REFRESH_SCREENSHOTS === '1';

/**
 * `microphone`: the WAV file the fake microphone plays, looping (`path%noloop`: once, then silence).
 * Chromium opens it when a page starts capturing, so a test may write it after the launch.
 */
export function launchChromium(microphone = FAKE_MICROPHONE): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-dev-shm-usage',
      '--disable-background-networking',
      '--disable-component-update',
      '--no-first-run',
      '--use-fake-ui-for-media-stream',
      '--use-fake-device-for-media-stream',
      `--use-file-for-fake-audio-capture=${microphone}`,
      '--autoplay-policy=no-user-gesture-required',
    ],
  });
}

/**
 * A service started as `npm start` starts it and a Chromium, for the suite that calls this (at the
 * top of its describe): both start before its tests and stop after them; the fields are set once
 * they have started.
 */
export function serviceAndChromiumPerSuite(options: ServiceOptions = {}): { service: RunningService; browser: Browser } {
  const running = {} as { service: RunningService; browser: Browser };
  beforeAll(async () => {
    [running.service, running.browser] = await Promise.all([startService(options), launchChromium()]);
  });
  afterAll(async () => {
    await running.browser?.close();
    await running.service?.stop();
  });
  return running;
}

/**
 * Everything the page reported on its console, and every Content-Security-Policy or Trusted Types
 * violation in its documents, to assert that none happened. Chromium writes a violation to the
 * DevTools log, which the console events do not carry; a `securitypolicyviolation` listener added
 * before any page script runs reports each one on the console instead, as `violation: ...`.
 */
export async function collectConsole(page: Page): Promise<string[]> {
  const lines: string[] = [];
  page.on('console', (message) => lines.push(`${message.type()}: ${message.text()}`));
  page.on('pageerror', (error) => lines.push(`pageerror: ${error.message}`));
  await page.addInitScript(() => {
    document.addEventListener('securitypolicyviolation', (event) => {
      console.error(`violation: ${event.effectiveDirective} blocked ${event.blockedURI} (${event.sample})`);
    });
  });
  return lines;
}

const axeSource = (createRequire(import.meta.url)('axe-core') as { source: string }).source;

interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: string[] }[];
}

/**
 * Runs axe-core (WCAG 2.x A and AA rules and best practices) in the page as it is now, and fails on
 * any serious or critical violation. axe is evaluated through the DevTools protocol, which the
 * page's CSP does not govern; the page itself is never loosened for it.
 */
export async function expectAccessible(page: Page, what: string): Promise<void> {
  const loaded = await page.evaluate(() => 'axe' in window);
  if (!loaded) await page.evaluate(axeSource);
  const violations = await page.evaluate(async () => {
    const axe = (window as unknown as { axe: { run: (context: Document, options: unknown) => Promise<{ violations: AxeViolation[] }> } })
      .axe;
    const result = await axe.run(document, { resultTypes: ['violations'] });
    return result.violations.map(({ id, impact, help, nodes }) => ({
      id,
      impact,
      help,
      nodes: nodes.map((node) => ({ target: node.target })),
    }));
  });
  const serious = violations.filter((violation) => violation.impact === 'serious' || violation.impact === 'critical');
  expect(serious, `${what}: ${JSON.stringify(serious, null, 1)}`).toEqual([]);
}

/** A full-page screenshot under docs/screenshots/, linked from the README, when `npm run screenshots` runs the tests. */
export async function screenshot(page: Page, name: string): Promise<void> {
  if (!refreshScreenshots) return;
  mkdirSync(SCREENSHOTS, { recursive: true });
  await page.screenshot({ path: join(SCREENSHOTS, `${name}.png`), fullPage: true });
}

/** Signs `who` into the owner console at `originUrl` and waits for their voice list. */
export async function signIntoConsole(page: Page, originUrl: string, who: { email: string; password: string }): Promise<void> {
  await page.goto(`${originUrl}/console#/sign-in`);
  await page.getByLabel('Email').first().fill(who.email);
  await page.getByLabel('Password').first().fill(who.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Your voices' }).waitFor();
}

/** The console asking the origin for a spoken-consent challenge. */
export const isChallengeRequest = (url: URL) => url.pathname === '/api/v1/consents/challenges';

/** The next challenge the page is issued, as the origin answered it. */
export const nextChallenge = (page: Page) =>
  page
    .waitForResponse((response) => isChallengeRequest(new URL(response.url())) && response.status() === 201)
    .then(async (response) => consentChallengeSchema.parse(await response.json()));
