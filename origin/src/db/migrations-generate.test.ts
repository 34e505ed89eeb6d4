import { execFile } from 'node:child_process';
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import drizzleConfig from '../../drizzle.config.js';
import { MIGRATIONS_FOLDER } from './migrations-folder.js';

const run = promisify(execFile);
const root = fileURLToPath(new URL('../../..', import.meta.url));
const scratch = mkdtempSync(join(tmpdir(), 'vip-db-generate-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe('npm run db:generate', () => {
  it('finds the snapshots in step with the schema: on an unchanged schema it writes no migration', async () => {
    const out = join(scratch, 'migrations');
    cpSync(MIGRATIONS_FOLDER, out, { recursive: true });
    if (!drizzleConfig.schema || typeof drizzleConfig.schema !== 'string') throw new Error('drizzle.config.ts names one schema file');

    // The script's own settings, but written into the copy. drizzle-kit refuses --out beside --config
    // and prefixes `./` to every path, so the copy is named relative to the repository root.
    const { stdout } = await run(
      resolve(root, 'node_modules/.bin/drizzle-kit'),
      ['generate', '--dialect', drizzleConfig.dialect, '--schema', drizzleConfig.schema, '--out', relative(root, out)],
      { cwd: root, timeout: 120_000 },
    );

    expect(readdirSync(out)).toEqual(readdirSync(MIGRATIONS_FOLDER));
    expect(readdirSync(join(out, 'meta'))).toEqual(readdirSync(join(MIGRATIONS_FOLDER, 'meta')));
    expect(readFileSync(join(out, 'meta/_journal.json'), 'utf8')).toBe(readFileSync(join(MIGRATIONS_FOLDER, 'meta/_journal.json'), 'utf8'));
    expect(stdout).toContain('No schema changes');
  }, 180_000);
});
