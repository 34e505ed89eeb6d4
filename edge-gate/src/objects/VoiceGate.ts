import { DurableObject } from 'cloudflare:workers';
import type { VoiceIndexRecord } from '@vip/shared-schema';
import { configFor } from '../config.js';
import { mirrorVoiceToKv, type StoredVoice } from '../edge-index/voices.js';
import type { Env } from '../env.js';
import { signAuthorizationToken } from '../gate/authorization-token.js';
import type { DecideInput, GateVerdict, Redemption } from '../gate/outcomes.js';
import { evaluate, type GateQuery } from '../gate/rules.js';
import { holdAtDesk, recordFromHome } from './voice-gate-client.js';

const VOICE_KEY = 'voice';
/** In a voice's home: every platform whose desk holds the voice's record (desks are opened, never closed). */
const DESKS_KEY = 'desks';
const TOKEN_PREFIX = 'token:';
/** Redeemed and unredeemed token entries are kept this long past `exp`, then purged by the alarm. */
const TOKEN_RETENTION_MS = 10 * 60_000;

interface IssuedToken {
  holder: string;
  query: GateQuery;
  exp_ms: number;
  redeemed_at: number | null;
}

/**
 * The authoritative consent and licence state of a voice as the origin pushes it (docs/ARCHITECTURE.md#consistency),
 * in two roles (objects/voice-gate-client.ts names them):
 *
 * - the voice's **home** (one per voice) takes the index updates, hands each to the voice's open
 *   desks, then mirrors it to KV;
 * - a **desk** (one per voice and platform) holds the same record, confirms that platform's
 *   approvals and issues their tokens in the same step, and redeems them one at a time, so a token
 *   is redeemed at most once. A desk opens on its first question: it asks the home for the record,
 *   and the home, which answers only between two updates, counts it among the desks it updates.
 *
 * Only a platform holding a live licence can be approved, so a popular voice's approvals spread over
 * one desk per licensed platform instead of queueing in one object. A withdrawal or erasure reaches
 * every desk the voice ever had before the sync is acknowledged (DECISIONS.md, "A hot voice").
 */
export class VoiceGate extends DurableObject<Env> {
  /**
   * Home: applies an index update unless a newer or equal version is stored. A deleted voice keeps
   * its version as a tombstone. Concurrency is blocked while the desks and KV are written, so neither
   * ends on an older version than this object; a replay of the stored version repairs both if a
   * write failed. The desks are written before KV, so a desk never lacks a licence KV shows.
   */
  async applyIndexUpdate(voiceId: string, version: number, record: VoiceIndexRecord | null): Promise<'applied' | 'stale'> {
    return this.ctx.blockConcurrencyWhile(async () => {
      const current = await this.storedVoice();
      if (current && current.version > version) return 'stale';
      const stored: StoredVoice = current?.version === version ? current : { version, record };
      if (stored !== current) await this.keepVoice(stored);
      const desks = (await this.ctx.storage.get<string[]>(DESKS_KEY)) ?? [];
      await Promise.all(desks.map((platform) => holdAtDesk(this.env, voiceId, platform, stored)));
      await mirrorVoiceToKv(this.env.EDGE_INDEX, voiceId, stored);
      return stored === current ? 'stale' : 'applied';
    });
  }

  /**
   * Home: opens `platform`'s desk and hands it the record. Never while an update is being applied
   * (blockConcurrencyWhile holds this call back), so the desk misses no update: each later one
   * reaches it through `applyIndexUpdate`.
   */
  async openDesk(platform: string): Promise<StoredVoice> {
    const desks = (await this.ctx.storage.get<string[]>(DESKS_KEY)) ?? [];
    if (!desks.includes(platform)) await this.ctx.storage.put(DESKS_KEY, [...desks, platform]);
    return (await this.storedVoice()) ?? NO_RECORD;
  }

  /** Desk: keeps the voice's record unless a newer or equal version is held. Erasure voids the desk's tokens. */
  async holdRecord(stored: StoredVoice): Promise<void> {
    const current = await this.storedVoice();
    if (current && current.version >= stored.version) return;
    await this.keepVoice(stored);
    if (!stored.record) await this.deleteKeys([...(await this.ctx.storage.list({ prefix: TOKEN_PREFIX })).keys()]);
  }

  /** Desk: the record held here, asked of the home on the desk's first question. */
  private async heldRecord(voiceId: string, platform: string): Promise<VoiceIndexRecord | null> {
    const held = await this.storedVoice();
    if (held) return held.record;
    const opened = await recordFromHome(this.env, voiceId, platform);
    await this.holdRecord(opened);
    return ((await this.storedVoice()) ?? opened).record;
  }

  /** Desk: judges on the state held here, never on KV; an approval comes back with its token. */
  async decide(input: DecideInput): Promise<GateVerdict> {
    const record = await this.heldRecord(input.voice_id, input.platform_name);
    const evaluation = evaluate(record, input, input.now_ms);
    if (evaluation.outcome !== 'approved') return evaluation;

    const config = configFor(this.env);
    const iat = Math.floor(input.now_ms / 1000);
    const exp = iat + config.authorizationTokenTtlSeconds;
    const token = await signAuthorizationToken(config, {
      jti: input.jti,
      voice_id: input.voice_id,
      platform: input.platform_name,
      intended_use: input.intended_use,
      check_id: input.check_id,
      iat,
      exp,
    });
    const query: GateQuery = {
      platform_name: input.platform_name,
      intended_use: input.intended_use,
      license_token_hash: input.license_token_hash,
    };
    const issued: IssuedToken = { holder: input.holder, query, exp_ms: exp * 1000, redeemed_at: null };
    await this.ctx.storage.put(TOKEN_PREFIX + input.jti, issued);
    await this.schedulePurge(issued.exp_ms + TOKEN_RETENTION_MS);
    return { ...evaluation, token, jti: input.jti, expires_at: new Date(exp * 1000).toISOString() };
  }

  /**
   * Single use: the read and the write below have no other I/O between them, and storage calls
   * hold the object's input gate, so concurrent redemptions of one token run strictly one by one.
   * A token whose consent or licence has since been withdrawn is refused as `revoked`.
   */
  async redeem(jti: string, holder: string, nowMs: number): Promise<Redemption> {
    const issued = await this.ctx.storage.get<IssuedToken>(TOKEN_PREFIX + jti);
    if (!issued) return 'unknown';
    if (issued.holder !== 'anonymous' && issued.holder !== holder) return 'not_holder';
    if (issued.redeemed_at !== null) return 'already_used';
    const record = (await this.storedVoice())?.record ?? null;
    if (evaluate(record, issued.query, nowMs).outcome !== 'approved') return 'revoked';
    await this.ctx.storage.put(TOKEN_PREFIX + jti, { ...issued, redeemed_at: nowMs } satisfies IssuedToken);
    return 'redeemed';
  }

  /**
   * The voice as stored here, kept in memory once read: this object is the only writer of its
   * storage, so the copy is what storage holds, and a decision reads no storage.
   */
  private voice: StoredVoice | null | undefined;

  private async storedVoice(): Promise<StoredVoice | null> {
    if (this.voice === undefined) this.voice = (await this.ctx.storage.get<StoredVoice>(VOICE_KEY)) ?? null;
    return this.voice;
  }

  private async keepVoice(stored: StoredVoice): Promise<void> {
    this.voice = stored;
    await this.ctx.storage.put(VOICE_KEY, stored);
  }

  /** When the purge alarm is set, as last read or written here; undefined until known. */
  private purgeAt: number | null | undefined;

  override async alarm(): Promise<void> {
    this.purgeAt = undefined;
    const now = Date.now();
    const tokens = await this.ctx.storage.list<IssuedToken>({ prefix: TOKEN_PREFIX });
    let next = Number.POSITIVE_INFINITY;
    const expired: string[] = [];
    for (const [key, token] of tokens) {
      const purgeAt = token.exp_ms + TOKEN_RETENTION_MS;
      if (purgeAt <= now) expired.push(key);
      else next = Math.min(next, purgeAt);
    }
    await this.deleteKeys(expired);
    if (Number.isFinite(next)) await this.ctx.storage.setAlarm(next);
  }

  /** Every approval asks for a purge; the alarm time is kept in memory so most ask no storage. */
  private async schedulePurge(at: number): Promise<void> {
    if (this.purgeAt === undefined) this.purgeAt = await this.ctx.storage.getAlarm();
    if (this.purgeAt === null || this.purgeAt > at) {
      await this.ctx.storage.setAlarm(at);
      this.purgeAt = at;
    }
  }

  /** storage.delete takes at most 128 keys a call. */
  private async deleteKeys(keys: string[]): Promise<void> {
    for (let i = 0; i < keys.length; i += 128) await this.ctx.storage.delete(keys.slice(i, i + 128));
  }
}

/** What a home that has never been sent the voice holds: version 0, no record. */
const NO_RECORD: StoredVoice = { version: 0, record: null };
