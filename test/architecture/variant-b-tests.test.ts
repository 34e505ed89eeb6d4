import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { repositoryRoot } from '../support/repository.js';
import { sourceFiles } from './imports.js';

/**
 * Variant B is tested one way: as a deployment. Its tests live in edge-gate/test/variant-b/, which the
 * `edge-gate:variant-b` project runs with GATE_VARIANT=B in its bindings, so each goes through the
 * Worker exactly as a Variant B caller would. No other edge test switches the variant for a request.
 */
const VARIANT_SETTING = /\bGATE_VARIANT\s*:\s*['"][AB]['"]/;

const switchesVariant = (file: string, source: string) =>
  !file.startsWith('edge-gate/test/variant-b/') && VARIANT_SETTING.test(source) ? [file] : [];

describe('Variant B tests', () => {
  it('are only those of the variant-b project: no edge test sets GATE_VARIANT for a request', () => {
    const tests = sourceFiles(repositoryRoot, join(repositoryRoot, 'edge-gate/test'));
    expect(tests.length).toBeGreaterThan(20);
    expect(tests.flatMap((file) => switchesVariant(file, readFileSync(join(repositoryRoot, file), 'utf8')))).toEqual([]);
    expect(switchesVariant('edge-gate/test/demo.test.ts', "edgeFetch(PATH, init, { settings: { GATE_VARIANT: 'B' } })")).toEqual([
      'edge-gate/test/demo.test.ts',
    ]);
    expect(readFileSync(join(repositoryRoot, 'edge-gate/vitest.variant-b.config.ts'), 'utf8')).toMatch(/GATE_VARIANT: 'B'/);
  });
});
