import { type ChainLink, type ChainVerdict, verifyChainLinks } from '@vip/shared-schema';
import { hashStoredEntry } from './entries.js';

/** An entry as verification reads it: its position, its stored hash and the JSON that was hashed. */
export interface ChainLine extends ChainLink {
  entryJson: string;
}

/**
 * The entries of the seq window [fromSeq, toSeq] as one text, `entry_hash || seq || entry_json` per
 * row joined by a record separator, in no particular order, and how many rows the database counted.
 */
export interface RawChainPage {
  fromSeq: number;
  toSeq: number;
  rows: number;
  text: string | null;
}

export const RECORD_SEPARATOR = String.fromCharCode(30);
const HASH_LENGTH = 64;

/**
 * The page's lines, each at its seq's place in the window, or null when they do not match the rows
 * one to one. entry_json cannot hold a bare separator (the derived columns parse it as JSON), but a
 * tampered entry_hash can; such a page is then read row by row, which names the tampered row exactly.
 */
export function linesOfPage(page: RawChainPage): ChainLine[] | null {
  const { fromSeq, toSeq } = page;
  const window: ChainLine[] = new Array(toSeq - fromSeq + 1);
  let placed = 0;
  for (const line of page.text ? page.text.split(RECORD_SEPARATOR) : []) {
    const jsonStart = line.indexOf('{', HASH_LENGTH);
    const seq = Number(line.slice(HASH_LENGTH, jsonStart));
    if (!(seq >= fromSeq && seq <= toSeq) || window[seq - fromSeq]) return null;
    window[seq - fromSeq] = { seq, entry_hash: line.slice(0, HASH_LENGTH), entryJson: line.slice(jsonStart) };
    placed++;
  }
  if (placed !== page.rows) return null;
  return placed === window.length ? window : window.filter((line) => line !== undefined);
}

/** entry_hash = SHA-256(prev_hash || entry JSON): a line hashed onto the hash it should follow. */
export const hashLine = (line: ChainLine, prevHash: string): string => hashStoredEntry(prevHash, line.entryJson);

/**
 * What the hashing thread finds in a page without knowing the entry before it: every entry after
 * the first checked against the one before it (`rest`); the first is left for the caller, who knows
 * what it must follow. `unreadable`: the lines do not match the rows (see linesOfPage).
 */
export type PageCheck =
  | { kind: 'unreadable' }
  | { kind: 'checked'; count: number; first: ChainLine; rest: ChainVerdict }
  | { kind: 'empty' };

export async function checkPage(page: RawChainPage): Promise<PageCheck> {
  const lines = linesOfPage(page);
  if (!lines) return { kind: 'unreadable' };
  const first = lines[0];
  if (!first) return { kind: 'empty' };
  return { kind: 'checked', count: lines.length, first, rest: await verifyChainLinks(lines.slice(1), first, hashLine) };
}
