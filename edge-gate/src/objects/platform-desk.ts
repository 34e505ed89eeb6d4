import type { AuthorizationTokenClaims, VoiceIndexRecord } from '@vip/shared-schema';
import { configFor } from '../config.js';
import type { StoredVoice } from '../edge-index/voices.js';
import { signAuthorizationToken } from '../gate/authorization-token.js';
import type { DecideInput, GateVerdict, Redemption } from '../gate/outcomes.js';
import { approvingLicence, evaluate, voidsTokens } from '../gate/rules.js';
import { importSealKey, isSealOf, MAX_SERIAL, newSealKey, type SealedGrant, seal, serialOf } from '../gate/token-serial.js';
import type { HeldVoice } from './held-voice.js';
import { recordFromHome } from './voice-home-client.js';

/** The key of the desk's seals (gate/token-serial.ts), made on its first approval. */
const SEAL_KEY = 'seal_key';
/** The first serial number not yet reserved; serials are reserved a block at a time. */
const SERIALS_RESERVED_KEY = 'serials_reserved';
/** One entry per block of serials with a redeemed token, its bits set for those redeemed. */
const REDEEMED_PREFIX = 'redeemed:';
const SERIALS_PER_BLOCK = 4096;
/** The latest withdrawal or erasure the desk has heard of, and the serials it voided. */
const VOIDED_KEY = 'voided';
/** A redeemed token's bit is kept this long past the token's `exp`, then purged by the alarm. */
const REDEEMED_RETENTION_MS = 10 * 60_000;

/**
 * Every token with a serial below `below_serial` was issued before the withdrawal or erasure published
 * as `version` (or an earlier one), so it is void for good, whatever consent is granted later.
 */
interface Voided {
  version: number;
  below_serial: number;
}

interface RedeemedBlock {
  bits: Uint8Array;
  /** When every token redeemed in this block is past `exp` and its retention: the block may go. */
  keep_until_ms: number;
}

/**
 * A voice's **desk** for one platform (docs/ARCHITECTURE.md#glossary), played by the VoiceGate object
 * that platform-desk-client.ts addresses: it holds the record the voice's home (voice-home.ts) hands
 * it, confirms that platform's approvals and issues their tokens in the same step, and redeems them
 * one at a time, so a token is redeemed at most once. A desk opens on its first question by asking
 * the home for the record (docs/ARCHITECTURE.md#consistency).
 *
 * Only a platform holding a live licence can be approved, so a popular voice's approvals spread over
 * one desk per licensed platform instead of queueing in one object. A withdrawal or erasure reaches
 * every desk the voice ever had before the sync is acknowledged (DECISIONS.md, "A hot voice").
 */
export class PlatformDesk {
  constructor(
    private readonly ctx: DurableObjectState,
    private readonly env: Env,
    private readonly voice: HeldVoice,
  ) {}

  /**
   * Keeps the voice's record unless a newer or equal version is held. A withdrawal or erasure,
   * even one older than the record held, voids every token issued so far (see `Voided`); erasure
   * also drops the seal key and redeemed bits, so no earlier token matches a seal again.
   */
  async holdRecord(stored: StoredVoice): Promise<void> {
    if (voidsTokens(stored.record)) await this.voidIssuedTokens(stored.version);
    const current = await this.voice.read();
    if (current && current.version >= stored.version) return;
    await this.voice.keep(stored);
    if (stored.record) return;
    this.sealKeyLoad = undefined;
    this.redeemedBlocks.clear();
    await this.deleteKeys([SEAL_KEY, ...(await this.ctx.storage.list({ prefix: REDEEMED_PREFIX })).keys()]);
  }

  /**
   * Voids the tokens issued up to now, unless this withdrawal or a later one already did: a replayed
   * withdrawal must not void the tokens of a consent granted after it. Serials only grow, so every
   * token issued after this point is above the bound.
   */
  private async voidIssuedTokens(version: number): Promise<void> {
    const voided = await this.voided();
    if (voided.version >= version) return;
    const next: Voided = { version, below_serial: await this.serialsHandedOut() };
    this.voidedNow = next;
    await this.ctx.storage.put(VOIDED_KEY, next);
  }

  /** What this desk has voided, as last read or written here; loaded on first use. */
  private voidedNow: Voided | undefined;

  private async voided(): Promise<Voided> {
    if (!this.voidedNow) {
      const stored = (await this.ctx.storage.get<Voided>(VOIDED_KEY)) ?? { version: 0, below_serial: 0 };
      this.voidedNow ??= stored;
    }
    return this.voidedNow;
  }

  /** The record held here, asked of the home on the desk's first question. */
  private async heldRecord(voiceId: string, platform: string): Promise<VoiceIndexRecord | null> {
    const held = await this.voice.read();
    if (held) return held.record;
    const opened = await recordFromHome(this.env, voiceId, platform);
    await this.holdRecord(opened);
    return ((await this.voice.read()) ?? opened).record;
  }

  /**
   * Judges on the state held here, never on KV; an approval comes back with its token. Nothing
   * is stored per token: its `jti` is the desk's seal on it (gate/token-serial.ts).
   */
  async decide(input: DecideInput): Promise<GateVerdict> {
    const record = await this.heldRecord(input.voice_id, input.platform_name);
    const evaluation = evaluate(record, input, input.now_ms);
    if (evaluation.outcome !== 'approved') return evaluation;
    // An approval always rests on a live licence; the token is bound to it (see `licenceSealed`).
    const licence = approvingLicence(record!, input, input.now_ms)!;

    const config = configFor(this.env);
    const iat = Math.floor(input.now_ms / 1000);
    const exp = iat + config.authorizationTokenTtlSeconds;
    const grant: SealedGrant = {
      voice_id: input.voice_id,
      platform: input.platform_name,
      intended_use: input.intended_use,
      check_id: input.check_id,
      azp: input.holder,
      iat,
      exp,
      license_id: licence.license_id,
    };
    const [key, serial] = await Promise.all([this.sealKey(), this.nextSerial()]);
    const jti = await seal(key, serial, grant);
    const { license_id: _bound, ...claims } = grant;
    const token = await signAuthorizationToken(config, { ...claims, jti });
    // An update that landed during the waits above wins: the answer is judged on the record held now.
    const judgedNow = evaluate(this.voice.now?.record ?? null, input, input.now_ms);
    if (judgedNow.outcome !== 'approved') return judgedNow;
    return {
      ...evaluation,
      token,
      jti,
      expires_at: new Date(exp * 1000).toISOString(),
      license_terms_sha256: licence.terms_sha256,
    };
  }

  /**
   * Single use: after the last wait (the seal check and the block's read), checking the token's bit
   * and setting it run with no I/O between them, and concurrent redemptions share one copy of the
   * block, so exactly one of them finds the bit clear. A token issued before a withdrawal (whatever
   * was granted since), or whose licence has since been revoked, is refused as `revoked`; one this
   * desk never sealed, or sealed before the voice was erased, is `unknown`. Who may redeem it
   * (`azp`) is the route's check: the seal covers it.
   */
  async redeem(claims: AuthorizationTokenClaims, nowMs: number): Promise<Redemption> {
    const [held] = await Promise.all([this.voice.read(), this.voided()]);
    const record = held?.record ?? null;
    const serial = serialOf(claims.jti);
    if (!record || serial === null) return 'unknown';
    const boundTo = await this.licenceSealed(claims, record);
    if (boundTo === undefined) return 'unknown';
    const blockKey = REDEEMED_PREFIX + Math.floor(serial / SERIALS_PER_BLOCK);
    const block = await this.redeemedBlock(blockKey);
    const bit = serial % SERIALS_PER_BLOCK;
    const mask = 1 << (bit % 8);
    if (block.bits[bit >> 3]! & mask) return 'already_used';
    // Judged on the record and voiding as held now, not as read before the waits: an update may have
    // landed since. Only the licence the token is bound to may approve it.
    if (serial < this.voidedNow!.below_serial) return 'revoked';
    const current = this.voice.now?.record ?? null;
    const bound = current && { ...current, licenses: current.licenses.filter((licence) => licence.license_id === boundTo) };
    const query = { platform_name: claims.platform, intended_use: claims.intended_use, license_token_hash: null };
    if (evaluate(bound, query, nowMs).outcome !== 'approved') return 'revoked';
    block.bits[bit >> 3]! |= mask;
    block.keep_until_ms = Math.max(block.keep_until_ms, claims.exp * 1000 + REDEEMED_RETENTION_MS);
    await this.ctx.storage.put(blockKey, block);
    await this.schedulePurge(block.keep_until_ms);
    return 'redeemed';
  }

  /**
   * The licence the token was sealed with, found among this platform's licences in the record;
   * undefined when none matches the seal. Every token is bound to one licence, so no other licence
   * can stand in for it, and one since removed from the record leaves its tokens unmatched, which is
   * as refused as revoked.
   */
  private async licenceSealed(claims: AuthorizationTokenClaims, record: VoiceIndexRecord): Promise<string | undefined> {
    const key = await this.sealKey();
    const { jti, iss: _issuer, ...granted } = claims;
    for (const licence of record.licenses)
      if (licence.platform_name === claims.platform && (await isSealOf(key, jti, { ...granted, license_id: licence.license_id })))
        return licence.license_id;
    return undefined;
  }

  /** Redeemed-token blocks as read or written here, shared by concurrent redemptions (see redeem). */
  private readonly redeemedBlocks = new Map<string, Promise<RedeemedBlock>>();

  private redeemedBlock(key: string): Promise<RedeemedBlock> {
    let block = this.redeemedBlocks.get(key);
    if (!block) {
      block = this.ctx.storage
        .get<RedeemedBlock>(key)
        .then((stored) => stored ?? { bits: new Uint8Array(SERIALS_PER_BLOCK / 8), keep_until_ms: 0 });
      this.redeemedBlocks.set(key, block);
    }
    return block;
  }

  /** The desk's seal key, made and stored on first use; one promise, so concurrent first uses agree. */
  private sealKeyLoad: Promise<CryptoKey> | undefined;

  private sealKey(): Promise<CryptoKey> {
    this.sealKeyLoad ??= (async () => {
      let raw = await this.ctx.storage.get<Uint8Array>(SEAL_KEY);
      if (!raw) {
        raw = newSealKey();
        await this.ctx.storage.put(SEAL_KEY, raw);
      }
      return importSealKey(raw);
    })();
    return this.sealKeyLoad;
  }

  /**
   * Serials are reserved in blocks: one write per 4,096 approvals, and an evicted instance's unused
   * reservation is skipped, so no serial is handed out twice.
   */
  private serials: { next: number; reservedUntil: number } | undefined;

  private async nextSerial(): Promise<number> {
    const serials = await this.loadSerials();
    if (serials.next < serials.reservedUntil) return serials.next++;
    if (serials.reservedUntil + SERIALS_PER_BLOCK > MAX_SERIAL) throw new Error('This desk has used every serial number.');
    serials.reservedUntil += SERIALS_PER_BLOCK;
    const serial = serials.next++;
    await this.ctx.storage.put(SERIALS_RESERVED_KEY, serials.reservedUntil);
    return serial;
  }

  /** The first serial not yet handed out: every token issued so far has a lower one. */
  private async serialsHandedOut(): Promise<number> {
    return (await this.loadSerials()).next;
  }

  private async loadSerials(): Promise<{ next: number; reservedUntil: number }> {
    if (!this.serials) {
      const reserved = (await this.ctx.storage.get<number>(SERIALS_RESERVED_KEY)) ?? 0;
      this.serials ??= { next: reserved, reservedUntil: reserved };
    }
    return this.serials;
  }

  /** When the purge alarm is set, as last read or written here; undefined until known. */
  private purgeAt: number | null | undefined;

  /**
   * Purges the blocks whose redeemed tokens are all past their retention. Each is judged on the copy
   * redemptions use (which may be newer than the listed one) and dropped from memory with the same
   * step, and every delete is issued before anything else can run, so no redemption sets a bit in a
   * block that is then deleted. Run by the object's alarm, which only a redemption sets.
   */
  async purgeRedeemed(): Promise<void> {
    this.purgeAt = undefined;
    const keys = [...(await this.ctx.storage.list({ prefix: REDEEMED_PREFIX })).keys()];
    const blocks = await Promise.all(keys.map((key) => this.redeemedBlock(key)));
    const now = Date.now();
    let next = Number.POSITIVE_INFINITY;
    const expired: string[] = [];
    keys.forEach((key, i) => {
      const keepUntil = blocks[i]!.keep_until_ms;
      if (keepUntil > now) next = Math.min(next, keepUntil);
      else {
        expired.push(key);
        this.redeemedBlocks.delete(key);
      }
    });
    const deleted = this.deleteKeys(expired);
    if (Number.isFinite(next)) await this.ctx.storage.setAlarm(next);
    await deleted;
  }

  /** Every redemption asks for a purge; the alarm time is kept in memory so most ask no storage. */
  private async schedulePurge(at: number): Promise<void> {
    if (this.purgeAt === undefined) this.purgeAt = await this.ctx.storage.getAlarm();
    if (this.purgeAt === null || this.purgeAt > at) {
      await this.ctx.storage.setAlarm(at);
      this.purgeAt = at;
    }
  }

  /** storage.delete takes at most 128 keys a call; every call is issued at once, in order. */
  private async deleteKeys(keys: string[]): Promise<void> {
    const calls: Promise<number>[] = [];
    for (let i = 0; i < keys.length; i += 128) calls.push(this.ctx.storage.delete(keys.slice(i, i + 128)));
    await Promise.all(calls);
  }
}
