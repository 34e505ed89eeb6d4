import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { OWNER_WEBHOOK_EVENTS, PLATFORM_WEBHOOK_EVENTS, WEBHOOK_EVENTS } from '@vip/shared-schema';
import { describe, expect, it } from 'vitest';
import { repositoryRoot } from '../support/repository.js';

/**
 * The guides list the webhook events shared-schema/src/webhook-events.ts declares, no more and no
 * fewer: an owner's table in OWNER-GUIDE.md, a platform's in INTEGRATION.md §8.
 */
const read = (file: string) => readFileSync(join(repositoryRoot, 'docs', file), 'utf8');
/** The lines of `text` from `heading` to the next heading of its level or above, code blocks left out (a shell comment is no heading). */
const sectionOf = (text: string, heading: string) => {
  const level = heading.split(' ')[0]!.length;
  const lines: string[] = [];
  let inside = false;
  let fenced = false;
  for (const line of text.split('\n')) {
    if (line.startsWith('```')) fenced = !fenced;
    if (fenced) continue;
    const depth = /^(#+) /.exec(line)?.[1]?.length;
    if (line === heading) inside = true;
    else if (inside && depth !== undefined && depth <= level) break;
    if (inside) lines.push(line);
  }
  expect(lines.length, heading).toBeGreaterThan(0);
  return lines.join('\n');
};
const ticked = (text: string) => [...text.matchAll(/`([a-z_]+\.[a-z_]+)`/g)].map(([, name]) => name!);
const known = (names: string[]) => names.filter((name) => (WEBHOOK_EVENTS as readonly string[]).includes(name));

describe('the webhook events in the guides', () => {
  it("OWNER-GUIDE.md's table lists exactly the events an owner receives, each once", () => {
    const rows = sectionOf(read('OWNER-GUIDE.md'), '## Webhooks')
      .split('\n')
      .filter((line) => line.startsWith('| `'));
    const listed = rows.flatMap((row) => ticked(row.split(' | ')[0]!));
    expect([...listed].sort()).toEqual([...OWNER_WEBHOOK_EVENTS].sort());
  });

  it('INTEGRATION.md §8 names every event, and exactly the platform events as what a platform receives', () => {
    const section = sectionOf(read('INTEGRATION.md'), '## 8. Webhooks');
    expect(WEBHOOK_EVENTS.filter((event) => !ticked(section).includes(event))).toEqual([]);
    const sentence = /receives only the events about its own licences and\s+requests: ([^;]+);/.exec(section)?.[1] ?? '';
    expect(known(ticked(sentence)).sort()).toEqual([...PLATFORM_WEBHOOK_EVENTS].sort());
  });
});
