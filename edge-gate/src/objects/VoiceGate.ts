import { DurableObject } from 'cloudflare:workers';
import type { VoiceIndexRecord } from '@vip/shared-schema';
import { configFor } from '../config.js';
import { mirrorVoiceToKv, type StoredVoice } from '../edge-index/voices.js';
import type { Env } from '../env.js';
import { signAuthorizationToken } from '../gate/authorization-token.js';
import type { DecideInput, Decision, Redemption } from '../gate/outcomes.js';
import { evaluate, type GateQuery } from '../gate/rules.js';

const VOICE_KEY = 'voice';
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
 * One per voice (`idFromName(voice_id)`): the authoritative consent and licence state the origin
 * pushes (DESIGN section 3). Approvals are confirmed here and the token issued in the same step;
 * redemptions are checked here, one at a time, so a token is redeemed at most once.
 */
export class VoiceGate extends DurableObject<Env> {
  /**
   * Applies an index update unless a newer or equal version is stored. A deleted voice keeps its
   * version as a tombstone. Concurrency is blocked while KV is written, so KV never ends on an
   * older version than this object; a replay of the stored version repairs KV if a write failed.
   */
  async applyIndexUpdate(voiceId: string, version: number, record: VoiceIndexRecord | null): Promise<'applied' | 'stale'> {
    return this.ctx.blockConcurrencyWhile(async () => {
      const current = await this.ctx.storage.get<StoredVoice>(VOICE_KEY);
      if (current && current.version > version) return 'stale';
      if (current && current.version === version) {
        await mirrorVoiceToKv(this.env.EDGE_INDEX, voiceId, current);
        return 'stale';
      }
      const stored: StoredVoice = { version, record };
      await this.ctx.storage.put(VOICE_KEY, stored);
      // Erasing a voice also voids its outstanding tokens.
      if (!record) await this.deleteKeys([...(await this.ctx.storage.list({ prefix: TOKEN_PREFIX })).keys()]);
      await mirrorVoiceToKv(this.env.EDGE_INDEX, voiceId, stored);
      return 'applied';
    });
  }

  /** Judges on the state held here, never on KV; an approval comes back with its token. */
  async decide(input: DecideInput): Promise<Decision> {
    const record = (await this.ctx.storage.get<StoredVoice>(VOICE_KEY))?.record ?? null;
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
    const record = (await this.ctx.storage.get<StoredVoice>(VOICE_KEY))?.record ?? null;
    if (evaluate(record, issued.query, nowMs).outcome !== 'approved') return 'revoked';
    await this.ctx.storage.put(TOKEN_PREFIX + jti, { ...issued, redeemed_at: nowMs } satisfies IssuedToken);
    return 'redeemed';
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
