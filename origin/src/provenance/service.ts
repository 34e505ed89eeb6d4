import {
  type AuditEntry,
  type AuthorizationAssertion,
  buildAuditRecord,
  limits,
  PROVENANCE_VERDICTS,
  ProblemError,
  type ProvenanceVerdict,
  type ProvenanceVerification,
  type ProvenanceWatermark,
} from '@vip/shared-schema';
import { isCredentialContainer, MIME_OF_CREDENTIAL_CONTAINER } from '@vip/shared-schema/provenance/container-scan';
import type { FileCredentials } from '@vip/shared-schema/provenance/credentials';
import {
  authorizationReport,
  checkAssertionReceipt,
  checked,
  credentialsReport,
  isApproval,
  noneChecked,
  settleCredentials,
} from '@vip/shared-schema/provenance/judgement';
import { WATERMARK_ALGORITHM, type WatermarkDetection } from '@vip/shared-schema/watermark/index';
import { queueAuditRecords, redemptionLogged, type TransparencyLog } from '../audit/index.js';
import type { Database } from '../db/client.js';
import { recordEvent } from '../events/index.js';
import type { MultipartForm } from '../http/multipart-form.js';
import type { RateLimiter } from '../http/rate-limit.js';
import { holdsLiveLicense } from '../registry/index.js';
import type { Runtime } from '../runtime.js';
import { protectedVoicesLike } from '../screening/index.js';
import { findEmbeddingOfVoice, voiceStanding } from '../voice-records/store.js';
import { type EmbedFileResult, sniffContainer, type VoiceprintEngine } from '../voiceprint/index.js';
import { admitPublicCaller, auditedPublicCaller, type PublicCaller } from './callers.js';
import { type ResolvedMark, resolveMark } from './marks.js';
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
export type VerifyCaller = PublicCaller;

type Verification = Omit<ProvenanceVerification, 'check_id'>;

/** The watermark read from a file, and every registration of its id (none when never issued). */
interface ReadMark {
  detection: Pick<WatermarkDetection, 'found' | 'id' | 'windowsRead'>;
  marks: ResolvedMark[];
}

/** What named the file's authorization: its own assertion, or (the file carrying none) the mark it resolved to. */
function namedBy({ authorization }: Verification): 'credentials' | 'watermark' | 'none' {
  if (authorization.present) return 'credentials';
  return authorization.voice_id !== null ? 'watermark' : 'none';
}

/** The verdicts that tell a voice owner nothing went wrong (no provenance.verification_failed). */
const GRANTED_VERDICTS: readonly ProvenanceVerdict[] = ['authorized', 'watermark_authorized'];

function watermarkReport({ detection }: ReadMark, resolved: ResolvedMark | undefined): ProvenanceWatermark {
  const report: ProvenanceWatermark = { found: detection.found, alg: WATERMARK_ALGORITHM, windows_read: detection.windowsRead };
  if (!detection.found || !detection.id) return report;
  return {
    ...report,
    id: detection.id,
    issued: resolved !== undefined,
    ...(resolved && { redemption_check_id: resolved.redemptionCheckId }),
    ...(resolved?.approval && { check_id: resolved.approval.check_id }),
  };
}

/**
 * Judges one audio file (docs/CONTRACT.md#content-credentials): its Content Credentials (c2pa-rs,
 * trust anchors = the live certificates platforms registered), the authorization they carry (the
 * receipt against this log, the logged decision, its redemption, consent and licence today) and
 * the voice in it. The file and its embedding live only in this call.
 */
export class ProvenanceService {
  constructor(private readonly deps: ProvenanceServiceDeps) {}

  /** The limit, before the upload is read: per client IP without credentials, per key or account with. */
  admit(caller: VerifyCaller): Promise<void> {
    return admitPublicCaller(this.deps.limiter, 'provenance-verify', caller, {
      anonymous: limits.provenanceVerifyAnonymousPerMinute,
      perCredential: limits.provenanceVerifyPerCredentialPerMinute,
    });
  }

  async verify(caller: VerifyCaller, form: MultipartForm): Promise<ProvenanceVerification> {
    const { engine } = this.deps;
    const audio = form.files.get('audio')?.[0];
    if (!audio) {
      throw new ProblemError('validation_failed', 'The multipart form is invalid.', {
        errors: [{ field: 'body.audio', message: 'an audio file is required' }],
      });
    }
    // Every format enrollment takes: Content Credentials are read from those that carry them, the
    // watermark from the decoded audio of any; the decoder refuses what is not audio.
    const container = sniffContainer(audio.bytes);
    const mime = container && isCredentialContainer(container) ? MIME_OF_CREDENTIAL_CONTAINER[container] : null;
    if (!engine) throw new ProblemError('unavailable', 'This process has no voiceprint engine.');

    // In a pool thread, under its deadline: the structural scan refuses a hostile file (boxes, depth,
    // the store's size, its assertions) before c2pa-rs parses it (docs/OPERATIONS.md#bounded-parsing).
    const anchors = await store.liveCertificates(this.deps.db);
    const readCredentials = (pems: string) => (mime ? engine.readCredentials(audio.bytes, mime, pems) : Promise.resolve(null));
    const credentials = await readCredentials(anchors.map((anchor) => anchor.pem).join(''));
    // The voice is judged on every file: it fails with the audio problems (no speech, too short)
    // before anything is recorded. The watermark is read in the same pool job, from the same decoding.
    const sample = await engine.embedFile(audio.bytes, { readWatermark: true });
    const detection = sample.watermark ?? { found: false, windowsRead: 0 };
    const marks = detection.found && detection.id ? await resolveMark(this.deps.db, this.deps.tlog, detection.id) : [];
    const verification = await this.judge(engine, readCredentials, credentials, anchors, sample, { detection, marks });
    return this.record(caller, verification);
  }

  private async judge(
    engine: VoiceprintEngine,
    readCredentials: (pems: string) => Promise<FileCredentials | null>,
    credentials: FileCredentials | null,
    anchors: { pem: string; platformName: string }[],
    sample: EmbedFileResult,
    mark: ReadMark,
  ): Promise<Verification> {
    const settled = settleCredentials(credentials);
    const base = (resolved?: ResolvedMark): Verification => ({
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
      watermark: watermarkReport(mark, resolved),
      not_checked: noneChecked(),
    });

    // Credentials that carry no authorization leave the file to its mark, when it has one that resolves.
    const withoutAuthorization = settled.verdict === 'no_credentials' || settled.verdict === 'no_authorization' ? settled.verdict : null;
    if (withoutAuthorization && mark.marks.length > 0) return this.judgeMarkOnly(engine, sample, mark.marks, base);
    const result = base(mark.marks[0]);
    const verdict = (value: ProvenanceVerdict) => ({ ...result, verdict: value });
    if (withoutAuthorization) {
      const matches = await this.deps.db.transaction((tx) => protectedVoicesLike(tx, engine, sample));
      result.voice.protected_matches = matches.map((match) => ({ voice_id: match.voice.voiceId, confidence: match.confidence }));
      checked(result, 'protected_voices');
      if (mark.detection.found) return verdict('watermark_not_issued');
      if (matches.length > 0) return verdict(`${withoutAuthorization}_protected_voice`);
    }
    if (settled.verdict) return verdict(settled.verdict);
    const { assertion } = settled;

    // A file judged by both: its mark must be one issued for the decision its credentials name.
    if (mark.detection.found) {
      const same = mark.marks.find((resolved) => resolved.approval?.check_id === assertion.check_id);
      if (!same) return verdict('credentials_watermark_mismatch');
      result.watermark = watermarkReport(mark, same);
    }

    const receipt = await this.checkReceipt(assertion);
    checked(result, 'receipt');
    result.authorization.problems = receipt.problems;
    result.authorization.receipt_verified = receipt.entry !== null;
    if (!receipt.entry) return verdict('receipt_invalid');
    checked(result, 'approval');
    result.authorization.approved = isApproval(receipt.entry);
    if (!result.authorization.approved) return verdict('not_approved');

    checked(result, 'signer_platform');
    const signerVerdict = await this.judgeSigner(readCredentials, settled.state, anchors, assertion.platform_name);
    // A file its platform did not sign learns nothing of the voice (no similarity to probe with) or of today's standing.
    if (signerVerdict) return verdict(signerVerdict);
    if (result.credentials.signer) result.credentials.signer.registered_platform = assertion.platform_name;

    // Signed by the platform the log names: the voice, consent, licence and redemption are all
    // checked and reported (a file of another voice still tells whether the token was redeemed);
    // the verdict is the first that fails in the contract's order.
    const tokenJti = receipt.entry.token_jti;
    const redeemed = async () => tokenJti !== null && (await redemptionLogged(this.deps.db, assertion.voice_id, tokenJti));
    return verdict(await this.judgeVoiceAndStanding(engine, sample, result, assertion, redeemed, 'authorized'));
  }

  /** Whether the file was signed under a certificate the named platform registered: null when it was. */
  private async judgeSigner(
    readCredentials: (pems: string) => Promise<FileCredentials | null>,
    state: Exclude<FileCredentials['state'], 'invalid'>,
    anchors: { pem: string; platformName: string }[],
    platformName: string,
  ): Promise<'signer_not_registered' | 'signer_not_the_platform' | null> {
    if (state !== 'trusted') return 'signer_not_registered';
    const platformAnchors = anchors.filter((anchor) => anchor.platformName === platformName);
    const signedByPlatform =
      platformAnchors.length === anchors.length ||
      (platformAnchors.length > 0 && (await readCredentials(platformAnchors.map((anchor) => anchor.pem).join('')))?.state === 'trusted');
    return signedByPlatform ? null : 'signer_not_the_platform';
  }

  /**
   * A file whose only evidence is its mark: judged as the decision the mark resolves to, with the
   * voice in the file compared with that decision's voice (a mark copied onto another voice is a
   * voice mismatch). The best verdict wins when two redemptions drew the same id.
   */
  private async judgeMarkOnly(
    engine: VoiceprintEngine,
    sample: EmbedFileResult,
    marks: readonly ResolvedMark[],
    base: (resolved: ResolvedMark) => Verification,
  ): Promise<Verification> {
    let best: Verification | null = null;
    for (const resolved of marks) {
      const result = base(resolved);
      const { approval } = resolved;
      result.authorization = {
        ...result.authorization,
        check_id: approval?.check_id ?? null,
        voice_id: resolved.voiceId,
        platform_name: resolved.platformName,
        intended_use: resolved.intendedUse,
        decided_at: approval?.decided_at ?? null,
        receipt_verified: approval !== null,
        approved: approval ? isApproval(approval) : null,
        // The mark was minted by the redemption it resolves to.
        redeemed: true,
        receipt: resolved.receipt,
        problems: approval ? [] : ['the decision the mark was issued for is not in the audit chain yet'],
      };
      checked(result, 'receipt', 'redemption', ...(approval ? (['approval'] as const) : []));
      const named = { voice_id: resolved.voiceId, platform_name: resolved.platformName };
      const verdict: ProvenanceVerdict = !approval
        ? 'receipt_invalid'
        : !result.authorization.approved
          ? 'not_approved'
          : await this.judgeVoiceAndStanding(engine, sample, result, named, async () => true, 'watermark_authorized');
      const judged = { ...result, verdict };
      if (!best || PROVENANCE_VERDICTS.indexOf(verdict) > PROVENANCE_VERDICTS.indexOf(best.verdict)) best = judged;
    }
    return best!;
  }

  /**
   * The checks after the decision is known: the voice in the file is the decision's voice, and
   * consent, licence and redemption stand today. All of them run, whatever the first finds: fills
   * `result.voice` and the standings, and answers the first that fails.
   */
  private async judgeVoiceAndStanding(
    engine: VoiceprintEngine,
    sample: EmbedFileResult,
    result: Verification,
    named: { voice_id: string; platform_name: string },
    redeemed: () => Promise<boolean>,
    granted: 'authorized' | 'watermark_authorized',
  ): Promise<ProvenanceVerdict> {
    const { db, runtime } = this.deps;
    const voice = await voiceStanding(db, named.voice_id);
    const enrolled = voice ? await findEmbeddingOfVoice(db, named.voice_id) : null;
    if (voice && enrolled && enrolled.model === sample.model) {
      const judgement = engine.judge('sample_vs_enrolled', sample, { ...enrolled, speechSeconds: voice.speechSeconds });
      Object.assign(result.voice, {
        compared_with: named.voice_id,
        similarity: judgement.similarity,
        probability: judgement.calibrated?.probability ?? null,
        is_same_speaker: judgement.isSameSpeaker,
      });
      checked(result, 'voice');
    }
    const now = runtime.clock.now();
    result.authorization.consent_standing = voice !== null && voice.status === 'ready' && voice.consentStatus === 'active';
    result.authorization.license_standing = voice !== null && (await holdsLiveLicense(db, named.voice_id, named.platform_name, now));
    result.authorization.redeemed = await redeemed();
    checked(result, 'consent_and_license_today', 'redemption');
    if (result.voice.is_same_speaker === false) return 'voice_mismatch';
    if (!result.authorization.consent_standing || !result.authorization.license_standing) return 'authorization_revoked_since';
    if (!result.authorization.redeemed) return 'not_redeemed';
    return granted;
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
      reason: `verdict=${verification.verdict};authorization=${named.check_id ?? 'none'};signer=${verification.credentials.signer?.common_name ?? 'none'};named_by=${namedBy(verification)}`,
      ...(await auditedPublicCaller(caller)),
    });
    await db.transaction(async (tx) => {
      await queueAuditRecords(tx, [record], now);
      if (voice && !GRANTED_VERDICTS.includes(verification.verdict)) {
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
