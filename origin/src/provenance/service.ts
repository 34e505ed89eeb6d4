import {
  type AuditEntry,
  type AuthorizationAssertion,
  buildAuditRecord,
  limits,
  ProblemError,
  type ProvenanceVerdict,
  type ProvenanceVerification,
  sha256Hex,
} from '@vip/shared-schema';
import { type FileCredentials, readCredentials } from '@vip/shared-schema/provenance/credentials';
import {
  authorizationReport,
  checkAssertionReceipt,
  credentialsReport,
  isApproval,
  settleCredentials,
} from '@vip/shared-schema/provenance/judgement';
import { manifestStoreSize } from '@vip/shared-schema/provenance/jumbf';
import { queueAuditRecords, redemptionLogged, type TransparencyLog } from '../audit/index.js';
import type { Caller } from '../auth/index.js';
import type { Database } from '../db/client.js';
import { recordEvent } from '../events/index.js';
import type { MultipartForm } from '../http/multipart-form.js';
import type { RateLimiter } from '../http/rate-limit.js';
import { holdsLiveLicense } from '../registry/index.js';
import type { Runtime } from '../runtime.js';
import { protectedVoicesLike } from '../screening/index.js';
import { type EmbedFileResult, sniffContainer, type VoiceprintEngine } from '../voiceprint/index.js';
import { findEmbeddingOfVoice, voiceStanding } from '../voices/index.js';
import * as store from './store.js';

export interface ProvenanceServiceDeps {
  db: Database;
  runtime: Runtime;
  limiter: RateLimiter;
  tlog: TransparencyLog;
  /** Absent in processes that serve no audio: verification answers 503. */
  engine?: VoiceprintEngine;
}

/** Who asks: a platform key or an account, or nobody (a client IP). */
export type VerifyCaller = Caller | { kind: 'anonymous'; ip: string };

/** The containers Content Credentials are read from, by the MIME type c2pa-rs reads them as. */
const MIME_OF_CONTAINER: Partial<Record<string, string>> = { wav: 'audio/wav', mp3: 'audio/mpeg', m4a: 'audio/mp4' };

const malformed = (detail: string) => new ProblemError('malformed_manifest', detail);

type Verification = Omit<ProvenanceVerification, 'check_id'>;

/**
 * Judges one audio file (docs/CONTRACT.md#content-credentials): its Content Credentials (c2pa-rs,
 * trust anchors = the live certificates platforms registered), the authorization they carry (the
 * receipt against this log, the logged decision, its redemption, consent and licence today) and
 * the voice in it. The file and its embedding live only in this call.
 */
export class ProvenanceService {
  constructor(private readonly deps: ProvenanceServiceDeps) {}

  /** The limit, before the upload is read: per client IP without credentials, per key or account with. */
  async admit(caller: VerifyCaller): Promise<void> {
    const [credential, callsPerMinute] =
      caller.kind === 'anonymous'
        ? [`ip:${caller.ip}`, limits.provenanceVerifyAnonymousPerMinute]
        : [caller.kind === 'platform' ? `key:${caller.keyId}` : `user:${caller.userId}`, limits.provenanceVerifyPerCredentialPerMinute];
    await this.deps.limiter.take({ name: 'provenance-verify', callsPerMinute }, credential);
  }

  async verify(caller: VerifyCaller, form: MultipartForm): Promise<ProvenanceVerification> {
    const { engine } = this.deps;
    const audio = form.files.get('audio')?.[0];
    if (!audio) {
      throw new ProblemError('validation_failed', 'The multipart form is invalid.', {
        errors: [{ field: 'body.audio', message: 'an audio file is required' }],
      });
    }
    const container = sniffContainer(audio.bytes);
    const mime = container ? MIME_OF_CONTAINER[container] : undefined;
    if (!mime) throw new ProblemError('unsupported_format', 'Content Credentials are read from WAV, MP3 or M4A files.');
    if (!engine) throw new ProblemError('unavailable', 'This process has no voiceprint engine.');
    const storeSize = manifestStoreSize(audio.bytes);
    if (storeSize !== null && storeSize > limits.manifestStoreMaxBytes) {
      throw new ProblemError('payload_too_large', `The file's manifest store is larger than ${limits.manifestStoreMaxBytes} bytes.`);
    }

    const anchors = await store.liveCertificates(this.deps.db);
    const credentials = await readOrRefuse(audio.bytes, mime, anchors.map((anchor) => anchor.pem).join(''));
    if (credentials && credentials.assertion_count > limits.manifestMaxAssertions) {
      throw malformed(
        `The file's manifests hold ${credentials.assertion_count} assertions; at most ${limits.manifestMaxAssertions} are read.`,
      );
    }
    // The voice is judged on every file: it fails with the audio problems (no speech, too short) before anything is recorded.
    const sample = await engine.embedFile(audio.bytes);
    const verification = await this.judge(engine, audio.bytes, mime, credentials, anchors, sample);
    return this.record(caller, verification);
  }

  private async judge(
    engine: VoiceprintEngine,
    bytes: Uint8Array,
    mime: string,
    credentials: FileCredentials | null,
    anchors: { pem: string; platformName: string }[],
    sample: EmbedFileResult,
  ): Promise<Verification> {
    const result: Verification = {
      verdict: 'no_credentials',
      credentials: credentialsReport(credentials),
      authorization: authorizationReport(credentials),
      voice: {
        model: sample.model,
        compared_with: null,
        similarity: null,
        probability: null,
        is_same_speaker: null,
        protected_matches: [],
      },
    };
    const verdict = (value: ProvenanceVerdict) => ({ ...result, verdict: value });

    const settled = settleCredentials(credentials);
    if (settled.verdict === 'no_credentials' || settled.verdict === 'no_authorization') {
      const matches = await this.deps.db.transaction((tx) => protectedVoicesLike(tx, engine, sample));
      result.voice.protected_matches = matches.map((match) => ({ voice_id: match.voice.voiceId, confidence: match.confidence }));
      if (matches.length > 0) return verdict(`${settled.verdict}_protected_voice`);
    }
    if (settled.verdict) return verdict(settled.verdict);
    const { assertion } = settled;

    const receipt = await this.checkReceipt(assertion);
    result.authorization.problems = receipt.problems;
    result.authorization.receipt_verified = receipt.entry !== null;
    if (!receipt.entry) return verdict('receipt_invalid');
    result.authorization.approved = isApproval(receipt.entry);
    if (!result.authorization.approved) return verdict('not_approved');

    if (settled.state !== 'trusted') return verdict('signer_not_registered');
    const platformAnchors = anchors.filter((anchor) => anchor.platformName === assertion.platform_name);
    const signedByPlatform =
      platformAnchors.length === anchors.length ||
      (platformAnchors.length > 0 &&
        (await readOrRefuse(bytes, mime, platformAnchors.map((anchor) => anchor.pem).join('')))?.state === 'trusted');
    if (!signedByPlatform) return verdict('signer_not_the_platform');
    if (result.credentials.signer) result.credentials.signer.registered_platform = assertion.platform_name;

    const { db, runtime } = this.deps;
    const voice = await voiceStanding(db, assertion.voice_id);
    const enrolled = voice ? await findEmbeddingOfVoice(db, assertion.voice_id) : null;
    if (voice && enrolled && enrolled.model === sample.model) {
      const similarity = engine.cosine(sample, enrolled);
      const calibrated = engine.score(sample.model, 'sample_vs_enrolled', similarity, Math.min(sample.speechSeconds, voice.speechSeconds));
      Object.assign(result.voice, {
        compared_with: assertion.voice_id,
        similarity,
        probability: calibrated?.probability ?? null,
        is_same_speaker: similarity >= engine.points(sample.model).sample_vs_enrolled.verify,
      });
      if (!result.voice.is_same_speaker) return verdict('voice_mismatch');
    }
    const now = runtime.clock.now();
    result.authorization.consent_standing = voice !== null && voice.status === 'ready' && voice.consentStatus === 'active';
    result.authorization.license_standing =
      voice !== null && (await holdsLiveLicense(db, assertion.voice_id, assertion.platform_name, now));
    result.authorization.redeemed =
      receipt.entry.token_jti !== null && (await redemptionLogged(db, assertion.voice_id, receipt.entry.token_jti));
    if (!result.authorization.consent_standing || !result.authorization.license_standing) return verdict('authorization_revoked_since');
    if (!result.authorization.redeemed) return verdict('not_redeemed');
    return verdict('authorized');
  }

  /**
   * The receipt proves the decision only when it proves the named decision in this log (the shared
   * check) and its checkpoint is one this log signed or extends (consistency from the stored tiles).
   */
  private async checkReceipt(
    assertion: AuthorizationAssertion,
  ): Promise<{ entry: Omit<AuditEntry, 'entry_hash'> | null; problems: string[] }> {
    const { tlog } = this.deps;
    const { verified, problems } = await checkAssertionReceipt(assertion, await tlog.verifierKey());
    if (!verified) return { entry: null, problems };
    if (!(await tlog.consistentWith(verified.checkpoint.size, verified.checkpoint.rootHash))) {
      return { entry: null, problems: ["the receipt's checkpoint is not consistent with this log"] };
    }
    return { entry: verified.entry, problems: [] };
  }

  /** The verification's audit entry, and the named voice's owner told when the file fails. */
  private async record(caller: VerifyCaller, verification: Verification): Promise<ProvenanceVerification> {
    const { db, runtime } = this.deps;
    const checkId = runtime.newId();
    const now = runtime.clock.now();
    const named = verification.authorization;
    const voice = named.voice_id ? await voiceStanding(db, named.voice_id) : null;
    const record = buildAuditRecord('provenance.verification', {
      check_id: checkId,
      decided_at: now,
      voice_id: voice ? named.voice_id : null,
      platform_name: named.platform_name,
      reason: `verdict=${verification.verdict};authorization=${named.check_id ?? 'none'};signer=${verification.credentials.signer?.common_name ?? 'none'}`,
      caller_type: caller.kind === 'anonymous' ? 'anonymous' : caller.kind === 'platform' ? 'api_key' : 'user',
      caller_id:
        caller.kind === 'anonymous'
          ? (await sha256Hex(`ip:${caller.ip}`)).slice(0, 32)
          : caller.kind === 'platform'
            ? caller.keyId
            : caller.userId,
    });
    await db.transaction(async (tx) => {
      await queueAuditRecords(tx, [record], now);
      if (voice && verification.verdict !== 'authorized') {
        const fields = {
          owner_id: voice.ownerId,
          verdict: verification.verdict,
          verification_check_id: checkId,
          authorization_check_id: named.check_id,
          platform_name: named.platform_name,
          signer: verification.credentials.signer?.common_name ?? null,
        };
        await recordEvent(tx, { type: 'provenance.verification_failed', voiceId: named.voice_id, ownerId: voice.ownerId, fields }, now);
      }
    });
    return { ...verification, check_id: checkId };
  }
}

/** c2pa-rs's reading; a manifest it cannot parse at all (cut short, not JUMBF) is the caller's bad input. */
async function readOrRefuse(bytes: Uint8Array, mime: string, anchors: string): Promise<FileCredentials | null> {
  try {
    return await readCredentials(bytes, mime, anchors ? { trustAnchors: anchors } : {});
  } catch (error) {
    throw malformed(`The file's Content Credentials cannot be read: ${String((error as Error)?.message ?? error).slice(0, 200)}`);
  }
}
