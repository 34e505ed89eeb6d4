import { readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { TestProjectInlineConfiguration } from 'vitest/config';

const testRoot = fileURLToPath(new URL('.', import.meta.url));

/** The folders of test/ that hold tests (`e2e`, `architecture`, `security`, …); bench, support and tlog-verify hold none. */
const suites = readdirSync(testRoot, { withFileTypes: true })
  .filter((entry) => entry.isDirectory())
  .map((entry) => entry.name)
  .filter((folder) => readdirSync(`${testRoot}/${folder}`, { recursive: true }).some((file) => String(file).endsWith('.test.ts')))
  .sort();

/**
 * One project per folder of test/, named `cross:<folder>` (`npm run test:cross` runs them all,
 * `npx vitest run --project cross:security` one of them). Many of them start both planes as real
 * processes, so each runs one file at a time, and the projects one after another, after every
 * other project (`sequence.groupOrder`).
 */
export const crossProjects: TestProjectInlineConfiguration[] = suites.map((folder, index) => ({
  test: {
    name: `cross:${folder}`,
    root: testRoot,
    include: [`${folder}/**/*.test.ts`],
    sequence: { groupOrder: 5 + index },
    testTimeout: 60_000,
    hookTimeout: 120_000,
    fileParallelism: false,
  },
}));
