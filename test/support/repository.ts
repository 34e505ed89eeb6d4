import { execFileSync } from 'node:child_process';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const repositoryRoot = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

/** The commit measured, marked `-dirty` when the working tree differs from it. */
export function gitCommit(): string {
  const run = (...args: string[]) => execFileSync('git', args, { cwd: repositoryRoot, encoding: 'utf8' }).trim();
  try {
    return `${run('rev-parse', '--short=12', 'HEAD')}${run('status', '--porcelain') ? '-dirty' : ''}`;
  } catch {
    return 'unknown';
  }
}
