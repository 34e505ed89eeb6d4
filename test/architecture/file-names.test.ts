import { readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { repositoryRoot } from '../support/repository.js';

/**
 * One case for every source file name: kebab-case, each dot-separated part lower-case words joined
 * by hyphens (`platform-desk-client.ts`, `sender.test.ts`), whatever the file declares inside.
 */
const SOURCE_FOLDERS = ['origin/src', 'edge-gate/src', 'edge-gate/test', 'shared-schema/src', 'test', 'scripts', 'launch', 'tools'];
const SOURCE_FILE = /\.(ts|mts|mjs|js)$/;
const KEBAB_CASE = /^[a-z0-9]+(-[a-z0-9]+)*(\.[a-z0-9]+(-[a-z0-9]+)*)*$/;

function sourceFileNames(directory: string): string[] {
  return readdirSync(directory, { withFileTypes: true }).flatMap((entry) => {
    const path = join(directory, entry.name);
    if (entry.isDirectory()) return entry.name === 'node_modules' || entry.name.startsWith('.') ? [] : sourceFileNames(path);
    return SOURCE_FILE.test(entry.name) ? [relative(repositoryRoot, path)] : [];
  });
}

const notKebabCase = (paths: string[]) => paths.filter((path) => !KEBAB_CASE.test(path.split('/').pop()!));

/**
 * A test file is named after its subject (`disputes.test.ts`, `delivery.test.ts`) and holds that
 * subject's cases of every kind, so nobody has to guess whether a refusal lives in `.errors` or
 * `.security` (docs/ARCHITECTURE.md#tests).
 */
const NAMED_BY_KIND_OF_CASE = /\.(errors|security|happy|edge-cases|unit|integration)\.test\.ts$/;
const namedByKindOfCase = (paths: string[]) => paths.filter((path) => NAMED_BY_KIND_OF_CASE.test(path));

describe('source file names', () => {
  it('are kebab-case in every package', () => {
    const files = SOURCE_FOLDERS.flatMap((folder) => sourceFileNames(join(repositoryRoot, folder)));
    expect(files.length).toBeGreaterThan(300);
    expect(notKebabCase(files)).toEqual([]);
  });

  it('name a test file after its subject, not after a kind of case', () => {
    const files = SOURCE_FOLDERS.flatMap((folder) => sourceFileNames(join(repositoryRoot, folder)));
    expect(namedByKindOfCase(files)).toEqual([]);
    expect(namedByKindOfCase(['origin/src/voices/voices.errors.test.ts', 'origin/src/webhooks/delivery.test.ts'])).toEqual([
      'origin/src/voices/voices.errors.test.ts',
    ]);
  });

  it('tell a PascalCase or camelCase name from a kebab-case one', () => {
    expect(notKebabCase(['edge-gate/src/objects/VoiceGate.ts', 'origin/src/jobs/auditCollector.ts'])).toEqual([
      'edge-gate/src/objects/VoiceGate.ts',
      'origin/src/jobs/auditCollector.ts',
    ]);
    expect(notKebabCase(['edge-gate/src/objects/voice-gate.ts', 'origin/src/edge-link/outbox-sender.test.ts'])).toEqual([]);
  });
});
