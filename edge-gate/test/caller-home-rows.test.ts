import { env, runInDurableObject } from 'cloudflare:test';
import { INTERNAL_AUDIT_PULL_PATH } from '@vip/shared-schema';
import { describe, expect, it } from 'vitest';
import { checkIdInShard } from '../src/gate/audit-shards.js';
import { homeShardOfKey } from '../src/gate/callers.js';
import { CallerHome } from '../src/objects/caller-home.js';
import { callerHomeShard } from '../src/objects/caller-home-client.js';
import { edgeFetch, GATE_PATH, jsonPost, licensedVoice, newPlatformKey, type PlatformKey, signedPost } from './testing/edge.js';

/** Pinned inside one window, so a minute boundary cannot split a run. */
const PINNED = Date.parse('2026-11-22T10:20:15Z');
const LIMIT = 4;

const ask = (key: PlatformKey, voiceId: string, intendedUse: 'audiobook' | 'music' = 'music') =>
  edgeFetch(
    GATE_PATH,
    jsonPost({ voice_id: voiceId, platform_name: key.platformName, intended_use: intendedUse }, { 'x-api-key': key.apiKey }),
    {
      settings: { GATE_LIMIT_PER_MINUTE: String(LIMIT) },
      nowMs: PINNED,
    },
  );

async function checkIds(responses: Response[]): Promise<string[]> {
  for (const response of responses) expect(response.status).toBe(200);
  return Promise.all(responses.map(async (response) => ((await response.json()) as { check_id: string }).check_id));
}

const acknowledge = async (ack: string[]) =>
  expect((await signedPost(INTERNAL_AUDIT_PULL_PATH, JSON.stringify({ ack, limit: 1 }))).status).toBe(200);

const homeShard = (key: PlatformKey) => callerHomeShard(env, homeShardOfKey(key.keyHash));

/** What a new instance of the key's home shard (as after an eviction) answers to one more request of the key. */
const afterEviction = (key: PlatformKey) =>
  runInDurableObject(homeShard(key), (_live: CallerHome, state) =>
    new CallerHome(state, env).admit(`gate:key:${key.keyId}`, LIMIT, 60, PINNED, null, null),
  );

/** Counts the rows the live shard writes through SQL (`cursor.rowsWritten`, as Cloudflare bills them) from now on. */
async function countRowsWritten(key: PlatformKey): Promise<{ total: number }> {
  const counter = { total: 0 };
  await runInDurableObject(homeShard(key), (_live: CallerHome, state) => {
    const sql = state.storage.sql;
    const exec = sql.exec.bind(sql);
    sql.exec = ((query: string, ...bindings: SqlStorageValue[]) => {
      const cursor = exec(query, ...bindings);
      counter.total += cursor.rowsWritten;
      return cursor;
    }) as typeof sql.exec;
  });
  return counter;
}

describe('the window count a decision record carries (DECISIONS.md, "Rows written")', () => {
  it('keeps a limit exact across an eviction while the counts are held only by pending records', async () => {
    const key = await newPlatformKey();
    await checkIds(await Promise.all(Array.from({ length: LIMIT }, () => ask(key, crypto.randomUUID()))));
    const refused = await afterEviction(key);
    expect(refused).toMatchObject({ keyRevoked: false, rate: { allowed: false, remaining: 0 } });
  });

  it('writes the counts to the window rows before acknowledged records are deleted', async () => {
    const key = await newPlatformKey();
    const decided = await checkIds(await Promise.all(Array.from({ length: LIMIT - 1 }, () => ask(key, crypto.randomUUID()))));
    await acknowledge(decided);
    // One left in this window, whichever instance counts it.
    expect(await afterEviction(key)).toMatchObject({ rate: { allowed: true, remaining: 0 } });
    expect((await ask(key, crypto.randomUUID())).status).toBe(200);
    expect((await ask(key, crypto.randomUUID())).status).toBe(429);
  });

  it('a request that records nothing (a refused body) writes its count at once', async () => {
    const key = await newPlatformKey();
    const badBody = () =>
      edgeFetch(
        GATE_PATH,
        jsonPost({ voice_id: 'not-a-uuid', platform_name: key.platformName, intended_use: 'music' }, { 'x-api-key': key.apiKey }),
        {
          settings: { GATE_LIMIT_PER_MINUTE: String(LIMIT) },
          nowMs: PINNED,
        },
      );
    for (let sent = 0; sent < LIMIT; sent++) expect((await badBody()).status).toBe(422);
    expect(await afterEviction(key)).toMatchObject({ rate: { allowed: false } });
  });

  it('costs two rows per decision in its shard (record and its deletion) and one window row per acknowledgement', async () => {
    const key = await newPlatformKey();
    // An acknowledgement in the key's home shard writes whatever window counts earlier tests left unwritten there.
    await acknowledge([checkIdInShard(crypto.randomUUID(), homeShardOfKey(key.keyHash))]);
    const rows = await countRowsWritten(key);
    const { voiceId } = await licensedVoice(key.platformName, ['audiobook']);
    const decided = await checkIds([
      await ask(key, crypto.randomUUID()),
      await ask(key, voiceId, 'music'), // blocked: no licence for music
      await ask(key, voiceId, 'audiobook'), // approved
    ]);
    expect(rows.total).toBe(decided.length);
    await acknowledge(decided);
    expect(rows.total).toBe(2 * decided.length + 1);
  });

  it('writes the counts only records hold before its memory of windows is cleared (10,000 callers)', async () => {
    const key = await newPlatformKey();
    const refusedAgain = await runInDurableObject(homeShard(key), (_live: CallerHome, state) => {
      const shard = new CallerHome(state, env);
      const admitOne = (limitKey: string) =>
        shard.admit(limitKey, 1, 60, PINNED, { checkId: crypto.randomUUID(), json: '{}' }, null) as { rate?: { allowed: boolean } };
      expect(admitOne(`gate:key:${key.keyId}`).rate?.allowed).toBe(true);
      for (let other = 0; other < 10_000; other++) admitOne(`gate:key:other-${other}`);
      return admitOne(`gate:key:${key.keyId}`);
    });
    expect(refusedAgain.rate?.allowed).toBe(false);
  });

  it('adds the window columns to a shard made before them and counts its older records as before', async () => {
    const older = env.CALLER_HOME.get(env.CALLER_HOME.idFromName(`outbox-of-an-older-deploy-${crypto.randomUUID()}`));
    const answer = await runInDurableObject(older, (_live: CallerHome, state) => {
      const sql = state.storage.sql;
      sql.exec('DROP TABLE pending');
      sql.exec('CREATE TABLE pending (seq INTEGER PRIMARY KEY AUTOINCREMENT, check_id TEXT NOT NULL UNIQUE, record TEXT NOT NULL)');
      sql.exec('INSERT INTO pending (check_id, record) VALUES (?, ?)', 'older-record', '{"check_id":"older-record"}');
      const shard = new CallerHome(state, env);
      const admitted = shard.admit('gate:key:older', 1, 60, PINNED, { checkId: 'newer-record', json: '{"check_id":"newer-record"}' }, null);
      const refused = new CallerHome(state, env).admit('gate:key:older', 1, 60, PINNED, null, null);
      return { admitted, refused, pulled: shard.pull([], 10).records.map((record) => record.check_id) };
    });
    expect(answer.admitted).toMatchObject({ rate: { allowed: true } });
    expect(answer.refused).toMatchObject({ rate: { allowed: false } });
    expect(answer.pulled).toEqual(['older-record', 'newer-record']);
  });
});
