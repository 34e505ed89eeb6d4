import { GENESIS_HASH } from '@vip/shared-schema';
import { afterAll, describe, expect, it } from 'vitest';
import { gateRecord } from '../testing/audit-records.js';
import { ChainHashThread } from './chain-hash-thread.js';
import { checkPage, type RawChainPage, RECORD_SEPARATOR } from './chain-page.js';
import { chainEntry } from './entries.js';

/** A page of `count` chained entries from seq 1, its lines in reverse order as a database may return them. */
function pageOf(count: number): RawChainPage {
  const lines: string[] = [];
  let previous = GENESIS_HASH;
  for (let seq = 1; seq <= count; seq++) {
    const { entryJson, entryHash } = chainEntry(gateRecord(), seq, new Date(), previous);
    lines.unshift(`${entryHash}${seq}${entryJson}`);
    previous = entryHash;
  }
  return { fromSeq: 1, toSeq: count, rows: count, text: lines.join(RECORD_SEPARATOR) };
}

const thread = new ChainHashThread();
afterAll(() => thread.close());

describe('the chain hashing thread', () => {
  it('checks a page as checkPage does on the main thread', async () => {
    const page = pageOf(50);
    const check = await thread.check(page);
    expect(check).toEqual(await checkPage(page));
    expect(check).toMatchObject({ kind: 'checked', count: 50, first: { seq: 1 }, rest: { valid: true, first_invalid_seq: null } });
  });

  it('names the first broken link of a page, and a page that does not match its rows', async () => {
    const page = pageOf(20);
    const edited = { ...page, text: page.text!.replace('"seq":7,', '"seq":7 ,') };
    expect(await thread.check(edited)).toMatchObject({ kind: 'checked', rest: { valid: false, first_invalid_seq: 7 } });
    expect(await thread.check({ ...page, rows: 21 })).toEqual({ kind: 'unreadable' });
  });

  it('starts a new thread for the next page after its thread has gone', async () => {
    await thread.close();
    expect(await thread.check(pageOf(3))).toMatchObject({ kind: 'checked', count: 3 });
  });
});
