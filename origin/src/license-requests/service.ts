import {
  type AuditActor,
  type AuditRecord,
  auditCaller,
  buildAuditRecord,
  type IntendedUse,
  type LicenseRepresentation,
  type LicenseRequest,
  type LicenseRequestStatus,
  ProblemError,
  platformNameMismatch,
} from '@vip/shared-schema';
import { queueAuditRecords } from '../audit/index.js';
import type { Caller, Principal } from '../auth/index.js';
import type { Database, Executor } from '../db/client.js';
import type { LicenseRequestRow, VoiceRow } from '../db/schema.js';
import { recordEvent } from '../events/index.js';
import { decodeCursor, encodeCursor, keysetPage } from '../http/cursor.js';
import type { RateLimiter } from '../http/rate-limit.js';
import type { WakeSignal } from '../loops/wake-signal.js';
import {
  acceptableExpiry,
  findVoiceFor,
  type LicenseService,
  lockVoiceFor,
  type RegistryActor,
  statedTerms,
  type TermsOfLicense,
  termsSha256Of,
} from '../registry/index.js';
import type { Runtime } from '../runtime.js';
import { lockVoice } from '../voice-records/store.js';
import { type SecretEncryption, sealLicenseToken } from '../webhooks/index.js';
import * as store from './store.js';

export interface LicenseRequestServiceDeps {
  db: Database;
  runtime: Runtime;
  outbox: WakeSignal;
  licenses: LicenseService;
  limiter: RateLimiter;
  licenseRequestsPerMinute: number;
  /** Seals the licence token of `license.granted` in the event tables (webhooks/sealed-fields.ts). */
  secretEncryption: SecretEncryption;
}

interface NewRequest {
  platform_name: string;
  scopes: IntendedUse[];
  expires_at: string;
  message?: string | undefined;
  description: string;
  represented_by: LicenseRepresentation;
  compensation?: string | undefined;
}

const notFound = () => new ProblemError('not_found', 'No such licence request.');

/**
 * Licence requests (docs/CONTRACT.md#closing-the-loop-receipts-pages): a platform asks, the voice's owner approves (the licence is
 * made by LicenseService.grantLicense, as `POST …/licenses` makes it) or declines. Every step
 * commits with its event and audit record; the platform learns the outcome from its webhooks or by
 * reading its request. A withdrawn consent or a deleted voice closes what is pending.
 */
export class LicenseRequestService {
  constructor(private readonly deps: LicenseRequestServiceDeps) {}

  async request(caller: Caller, voiceId: string, body: NewRequest) {
    const { db, runtime, limiter } = this.deps;
    if (caller.kind !== 'platform') throw new ProblemError('forbidden', 'This route is for platform API keys.');
    await limiter.take({ name: 'license-request', callsPerMinute: this.deps.licenseRequestsPerMinute }, `key:${caller.keyId}`);
    const mismatch = platformNameMismatch(caller.platformName, body.platform_name);
    if (mismatch) throw new ProblemError('platform_mismatch', mismatch);
    const now = runtime.clock.now();
    acceptableExpiry(body.expires_at, now);
    const row = await db.transaction(async (tx) => {
      // Locked, so two requests of one platform cannot both find none pending.
      const voice = await lockVoice(tx, voiceId);
      if (voice?.status !== 'ready') throw new ProblemError('not_found', 'No such voice.');
      if (voice.consentStatus === 'withdrawn') {
        throw new ProblemError('conflict', "The voice's owner has withdrawn consent to synthesis; no licence can be requested.");
      }
      if (await store.findPendingRequest(tx, voiceId, caller.platformName)) {
        throw new ProblemError('conflict', 'This platform already has a pending request for this voice.');
      }
      const created = await store.insertRequest(tx, {
        id: runtime.newId(),
        voiceId,
        platformName: caller.platformName,
        scopes: body.scopes,
        expiresAt: new Date(body.expires_at),
        message: body.message ?? null,
        ...statedTerms(body),
        status: 'pending',
        createdAt: now,
      });
      // The owner's notice shows the terms asked for, as approving would record them.
      const fields = {
        request_id: created.id,
        platform_name: created.platformName,
        scopes: created.scopes,
        expires_at: created.expiresAt.toISOString(),
        message: created.message,
        ...termsFields(created),
      };
      await recordEvent(tx, { type: 'license.requested', voiceId, ownerId: voice.ownerId, fields }, now);
      const by: RequestActor = { type: 'api_key', keyId: caller.keyId };
      await queueAuditRecords(tx, [requestAuditRecord(runtime.newId(), voice, created, `requested:${created.id}`, by, now)], now);
      return created;
    });
    const { request_id, voice_id, platform_name, scopes, expires_at, description, represented_by, compensation, created_at } =
      toLicenseRequest(row);
    return {
      request_id,
      voice_id,
      platform_name,
      scopes,
      expires_at,
      description,
      represented_by,
      compensation,
      status: 'pending' as const,
      created_at,
    };
  }

  async list(
    principal: Principal,
    voiceId: string,
    query: { limit: number; cursor?: string | undefined; status?: LicenseRequestStatus | undefined },
  ) {
    const { db } = this.deps;
    const after = decodeCursor(query.cursor);
    await findVoiceFor(db, principal, voiceId);
    const { rows, nextCursor } = await keysetPage(
      query.limit,
      (rowsWanted) => store.listRequestsOfVoice(db, voiceId, { limit: rowsWanted, after, status: query.status }),
      (last) => encodeCursor({ at: last.createdAt, id: last.id }),
    );
    return { requests: rows.map(toLicenseRequest), next_cursor: nextCursor };
  }

  /** The platform's own requests only (an admin reads any): another platform's answers like a missing one. */
  async read(caller: Caller, requestId: string): Promise<LicenseRequest> {
    const row = await store.findRequest(this.deps.db, requestId);
    const visible = row && (caller.kind === 'platform' ? row.platformName === caller.platformName : caller.role === 'admin');
    if (!visible) throw notFound();
    return toLicenseRequest(row);
  }

  /**
   * The licence takes the request's scopes and expiry unless the owner gives others, and the terms
   * the request showed the owner (its description, representation and compensation) as they are.
   */
  async approve(principal: Principal, voiceId: string, requestId: string, changes: { expires_at?: string; scopes?: IntendedUse[] }) {
    const { db, runtime, outbox, licenses, secretEncryption } = this.deps;
    const now = runtime.clock.now();
    const licenseId = await db.transaction(async (tx) => {
      const voice = await lockVoiceFor(tx, principal, voiceId);
      const request = await this.lockPending(tx, voiceId, requestId);
      const actor: RegistryActor = { type: 'user', userId: principal.userId };
      const terms = {
        platform_name: request.platformName,
        scopes: changes.scopes ?? request.scopes,
        expires_at: changes.expires_at ?? request.expiresAt.toISOString(),
        terms: termsOfRequest(request),
      };
      const { licence, licenseToken } = await licenses.grantLicense(tx, voice, terms, actor, now);
      await store.updateRequest(tx, requestId, { status: 'approved', licenseId: licence.id, answeredAt: now });
      const fields = {
        license_id: licence.id,
        request_id: requestId,
        scopes: licence.scopes,
        expires_at: licence.expiresAt.toISOString(),
        ...termsFields(licence),
        license_terms_sha256: await termsSha256Of(licence),
        license_token: sealLicenseToken(secretEncryption, licenseToken, requestId),
      };
      await recordEvent(tx, { type: 'license.granted', voiceId, ownerId: null, platformName: request.platformName, fields }, now);
      const record = requestAuditRecord(runtime.newId(), voice, request, `approved:${requestId}:${licence.id}`, actor, now);
      await queueAuditRecords(tx, [record], now);
      return licence.id;
    });
    outbox.nudge();
    return { request_id: requestId, status: 'approved' as const, license_id: licenseId };
  }

  async decline(principal: Principal, voiceId: string, requestId: string, reason: string | undefined) {
    const { db, runtime } = this.deps;
    const now = runtime.clock.now();
    await db.transaction(async (tx) => {
      const voice = await lockVoiceFor(tx, principal, voiceId);
      const request = await this.lockPending(tx, voiceId, requestId);
      await store.updateRequest(tx, requestId, { status: 'declined', declineReason: reason ?? null, answeredAt: now });
      const fields = { request_id: requestId, reason: reason ?? null };
      await recordEvent(tx, { type: 'license.request_declined', voiceId, ownerId: null, platformName: request.platformName, fields }, now);
      const actor: RegistryActor = { type: 'user', userId: principal.userId };
      await queueAuditRecords(tx, [requestAuditRecord(runtime.newId(), voice, request, `declined:${requestId}`, actor, now)], now);
    });
    return { request_id: requestId, status: 'declined' as const };
  }

  private async lockPending(tx: Executor, voiceId: string, requestId: string): Promise<LicenseRequestRow> {
    const request = await store.lockRequestOfVoice(tx, voiceId, requestId);
    if (!request) throw notFound();
    if (request.status !== 'pending') throw new ProblemError('conflict', `The request is already ${request.status}.`);
    return request;
  }
}

/**
 * Closes the voice's pending requests, in the transaction that withdraws its consent or deletes it,
 * each with its audit record. A closed request stays readable by its platform.
 */
export async function closePendingRequests(
  tx: Executor,
  voice: VoiceRow,
  reason: 'consent_withdrawn' | 'voice_deleted',
  actor: RegistryActor,
  runtime: Runtime,
  now: Date,
): Promise<void> {
  const closed = await store.closePendingRequests(tx, voice.id, reason, now);
  const records = closed.map((request) => requestAuditRecord(runtime.newId(), voice, request, `${reason}:${request.id}`, actor, now));
  await queueAuditRecords(tx, records, now);
}

/** Who acted on a request: the requesting platform's key, the owner (or an admin), or the service. */
type RequestActor = RegistryActor | Extract<AuditActor, { type: 'api_key' }>;

/**
 * A request's step as an audit record: `license.requested` when a platform asks,
 * `license.request_closed` for every end (approved, declined, consent withdrawn, voice deleted),
 * the end and the request (and licence) ids in `reason`.
 */
function requestAuditRecord(
  checkId: string,
  voice: VoiceRow,
  request: LicenseRequestRow,
  reason: string,
  actor: RequestActor,
  now: Date,
): AuditRecord {
  return buildAuditRecord(actor.type === 'api_key' ? 'license.requested' : 'license.request_closed', {
    check_id: checkId,
    decided_at: now,
    voice_id: voice.id,
    platform_name: request.platformName,
    reason,
    consent_status: voice.consentStatus,
    ...auditCaller(actor),
  });
}

/** The terms a request showed, as the licence its approval makes will hold them. */
const termsOfRequest = (row: LicenseRequestRow): TermsOfLicense => ({
  description: row.description,
  descriptionSource: row.descriptionSource,
  representedBy: row.representedBy,
  compensation: row.compensation,
});

/** Terms in an event's or answer's names. */
const termsFields = (terms: TermsOfLicense) => ({
  description: terms.description,
  description_source: terms.descriptionSource,
  represented_by: terms.representedBy,
  compensation: terms.compensation,
});

function toLicenseRequest(row: LicenseRequestRow): LicenseRequest {
  return {
    request_id: row.id,
    voice_id: row.voiceId,
    platform_name: row.platformName,
    scopes: row.scopes,
    expires_at: row.expiresAt.toISOString(),
    message: row.message,
    ...termsFields(row),
    status: row.status,
    created_at: row.createdAt.toISOString(),
    answered_at: row.answeredAt?.toISOString() ?? null,
    license_id: row.licenseId,
    decline_reason: row.declineReason,
    closed_reason: row.closedReason,
  };
}
