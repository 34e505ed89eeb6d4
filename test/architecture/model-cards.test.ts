import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const models = join(root, 'origin/src/voiceprint/models');
const calibrate = join(root, 'tools/voiceprint-training/calibrate.py');
const manifest = JSON.parse(readFileSync(join(models, 'manifest.json'), 'utf8')) as { models: Array<{ name: string; card: string }> };
/** Python with numpy, which calibrate.py needs (the CI machine installs Debian's python3-numpy). */
const python = existsSync('/usr/bin/python3') ? '/usr/bin/python3' : null;
const withBlocks = manifest.models.filter((model) => readFileSync(join(models, model.card), 'utf8').includes('<!-- calibrate.py: '));

// A model card's measured tables lie between markers that `evaluate.ts --write` (calibrate.py) fills
// from its report: a figure typed or edited by hand there differs from what the report renders.
describe.skipIf(python === null)('model cards', () => {
  it.each(withBlocks.map((model) => [model.name, model] as const))('%s: the generated tables are what its report renders', (_, model) => {
    const card = readFileSync(join(models, model.card), 'utf8');
    const blocks = JSON.parse(execFileSync(python!, [calibrate, '--card-blocks', model.name], { encoding: 'utf8' })) as Record<
      string,
      string
    >;
    expect(Object.keys(blocks).length).toBeGreaterThan(0);
    for (const [name, text] of Object.entries(blocks)) {
      expect(card, `${model.card}: the ${name} block`).toContain(`<!-- calibrate.py: ${name} -->\n${text}<!-- /calibrate.py: ${name} -->`);
    }
  });
});
