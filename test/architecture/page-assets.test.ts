import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { PAGE_BUNDLES } from '../../launch/page-bundles.js';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const git = (...args: string[]) => execFileSync('git', args, { cwd: root, encoding: 'utf8' });

// The pages' bundles are build output (launch/page-bundles.ts): made at start, in tests and at
// deploy from the sources of the checkout, so none can be stale in git or edited by hand there.
describe('page assets', () => {
  it.each(PAGE_BUNDLES.map((bundle) => bundle.output))('%s is ignored by git and not committed', (output) => {
    expect(git('ls-files', '--', output)).toBe('');
    expect(git('check-ignore', '--no-index', '--', output).trim()).toBe(output);
  });

  it('no generated module is committed, and a production deploy builds the bundles before bundling the Worker', () => {
    const wrangler = readFileSync(join(root, 'wrangler.toml'), 'utf8');
    expect(wrangler).toMatch(/\[env\.production\.build\]\ncommand = "npm run --silent pages:build"/);
    expect(git('ls-files', '--', '*.generated.ts')).toBe('');
  });
});
