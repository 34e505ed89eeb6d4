import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createGateClient, createOriginClient } from '@vip/shared-schema/client';
import { describe, expect, it } from 'vitest';
import { repositoryRoot } from '../support/repository.js';

/** docs/INTEGRATION.md is where an integrator starts: its reference parts must match the code they describe. */
const guide = readFileSync(join(repositoryRoot, 'docs/INTEGRATION.md'), 'utf8');

/** `group.{a, b}` and `method(…)` in a table cell, spelled out as `group.a`, `group.b`, `method`. */
function methodsNamedIn(cell: string): Set<string> {
  const names = new Set<string>();
  for (const [, group, members] of cell.matchAll(/`(\w+)\.\{([^}]+)\}`/g)) {
    for (const member of members!.split(',')) names.add(`${group}.${member.trim()}`);
  }
  for (const [, group, member] of cell.matchAll(/`(\w+)\.(\w+)`/g)) names.add(`${group}.${member}`);
  for (const [, method] of cell.matchAll(/`(\w+)\(/g)) names.add(method!);
  return names;
}

/** The methods a client object offers, as `group.method` (or `method` for a top-level one). */
function methodsOf(client: object): string[] {
  return Object.entries(client).flatMap(([name, value]) =>
    typeof value === 'function' ? [name] : Object.keys(value as object).map((member) => `${name}.${member}`),
  );
}

function tableRow(firstCell: string): string {
  const row = guide.split('\n').find((line) => line.startsWith(`| \`${firstCell}`));
  if (!row) throw new Error(`INTEGRATION.md has no table row for ${firstCell}`);
  return row;
}

describe('docs/INTEGRATION.md', () => {
  it("lists every method of the typed clients in its table of the client's exports", () => {
    const origin = createOriginClient({ baseUrl: 'http://origin.invalid' });
    const gate = createGateClient({ baseUrl: 'http://edge.invalid' });
    const listedForOrigin = methodsNamedIn(tableRow('createOriginClient'));
    const listedForGate = methodsNamedIn(tableRow('createGateClient'));
    expect(methodsOf(origin).filter((method) => !listedForOrigin.has(method))).toEqual([]);
    expect(methodsOf(gate).filter((method) => !listedForGate.has(method))).toEqual([]);
    expect(listedForOrigin).toContain('audit.receipt');
    expect(listedForOrigin).toContain('screening.screen');
  });

  it('has no table row outside a table (each run of rows starts with a header and its rule)', () => {
    const lines = guide.split('\n');
    const strays: string[] = [];
    let inCode = false;
    for (const [index, line] of lines.entries()) {
      if (line.startsWith('```')) inCode = !inCode;
      if (inCode || !line.startsWith('|')) continue;
      const startsRun = !lines[index - 1]?.startsWith('|');
      if (startsRun && !/^\|[-| :]+\|$/.test(lines[index + 1] ?? '')) strays.push(`line ${index + 1}: ${line}`);
    }
    expect(strays).toEqual([]);
  });

  it('says how to save the checkpoint its consistency example checks against', () => {
    const consistency = /consistency (\S+)/.exec(guide);
    expect(consistency).not.toBeNull();
    const file = consistency![1]!;
    const saved = guide.indexOf(`/tlog/checkpoint" > ${file}`);
    expect(saved).toBeGreaterThan(-1);
    expect(saved).toBeLessThan(consistency!.index);
  });
});
