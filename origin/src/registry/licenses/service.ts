import {
  type IntendedUse,
  LICENSE_MAX_TERM_MS,
  LICENSE_TOKEN_PREFIX,
  type License,
  type LicenseDescriptionSource,
  type LicenseRepresentation,
  licenseTermsSha256,
  ProblemError,
  sha256Hex,
} from '@vip/shared-schema';
import { queueAuditRecords } from '../../audit/index.js';
import type { Principal } from '../../auth/index.js';
import type { Database, Executor } from '../../db/client.js';
import type { LicenseRow, VoiceRow } from '../../db/schema.js';
import { recordEvent } from '../../events/index.js';
import type { WakeSignal } from '../../loops/wake-signal.js';
import { platformExists } from '../../platforms/index.js';
import type { Runtime } from '../../runtime.js';
import { findVoice, lockVoice } from '../../voice-records/store.js';
import { findVoiceFor, lockVoiceFor, refuseWhileHeld } from '../edge-index/access.js';
import { type RegistryActor, registryAuditRecord } from '../edge-index/audit.js';
import { publishToEdgeIndex } from '../edge-index/publish.js';
import * as store from './store.js';
import { licenseTermsOf, termsSha256Of } from './terms.js';

export interface LicenseServiceDeps {
  db: Database;
  runtime: Runtime;
  outbox: WakeSignal;
}

/** A licence's terms as its row holds them (shared-schema/src/license-terms.ts). */
export interface TermsOfLicense {
  description: string;
  descriptionSource: LicenseDescriptionSource;
  representedBy: LicenseRepresentation;
  compensation: string | null;
}

export interface NewLicense {
  platform_name: string;
  scopes: IntendedUse[];
  expires_at: string;
  terms: TermsOfLicense;
}

/** What a body states as terms: its words, stated there (not written from scopes). */
export const statedTerms = (body: { description: string; represented_by: LicenseRepresentation; compensation?: string | undefined }) =>
  ({
    description: body.description,
    descriptionSource: 'stated',
    representedBy: body.represented_by,
    compensation: body.compensation ?? null,
  }) satisfies TermsOfLicense;

/** A renewal's body: a new expiry, and new terms when it states a description. */
export interface LicenseRenewal {
  expires_at: string;
  description?: string | undefined;
  represented_by?: LicenseRepresentation | undefined;
  compensation?: string | undefined;
}

/** What a licence change did, as its event and audit reason name it. */
type LicenseChange = 'created' | 'renewed' | 'renewed_with_new_terms' | 'revoked' | 'expired';

/** Creation has no webhook event in the spec; the other changes do. */
const EVENT_OF: Record<Exclude<LicenseChange, 'created'>, 'license.renewed' | 'license.revoked' | 'license.expired'> = {
  renewed: 'license.renewed',
  renewed_with_new_terms: 'license.renewed',
  revoked: 'license.revoked',
  expired: 'license.expired',
};

/** Voices the expiry job handles per round, each in its own transaction. */
const EXPIRY_BATCH = 100;

/**
 * Licences (docs/CONTRACT.md#answers-to-the-specifications-gaps, docs/CONTRACT.md#contract-details). Every change commits together with the voice's edge index
 * update, its domain event and its audit record, and nudges the outbox sender after commit.
 */
export class LicenseService {
  constructor(private readonly deps: LicenseServiceDeps) {}

  /** The token is returned here and nowhere else; only its SHA-256 is stored and published. */
  async createLicense(principal: Principal, voiceId: string, body: Omit<NewLicense, 'terms'> & Parameters<typeof statedTerms>[0]) {
    const now = this.deps.runtime.clock.now();
    const request: NewLicense = {
      platform_name: body.platform_name,
      scopes: body.scopes,
      expires_at: body.expires_at,
      terms: statedTerms(body),
    };
    const { licence, licenseToken } = await this.deps.db.transaction(async (tx) => {
      const voice = await lockVoiceFor(tx, principal, voiceId);
      return this.grantLicense(tx, voice, request, { type: 'user', userId: principal.userId }, now);
    });
    this.deps.outbox.nudge();
    return { ...(await toLicense(licence)), license_token: licenseToken };
  }

  /**
   * Creates a licence in the caller's transaction, the voice locked, and publishes the voice to the
   * edge in the same commit; the caller nudges the outbox after commit. The one way a licence is
   * made: by its owner directly, or by approving a platform's request.
   */
  async grantLicense(tx: Executor, voice: VoiceRow, request: NewLicense, actor: RegistryActor, now: Date) {
    refuseWhileHeld(voice, 'a licence');
    const { runtime } = this.deps;
    const expiresAt = acceptableExpiry(request.expires_at, now);
    const licenseToken = `${LICENSE_TOKEN_PREFIX}${Buffer.from(runtime.randomBytes(32)).toString('base64url')}`;
    // The gate matches platform_name exactly, so a licence for a name no platform has would never be usable.
    if (!(await platformExists(tx, request.platform_name))) {
      throw new ProblemError('validation_failed', 'The licence must name a registered platform.', {
        errors: [{ field: 'body.platform_name', message: 'no registered platform has this name' }],
      });
    }
    const licence = await store.insertLicense(tx, {
      id: runtime.newId(),
      voiceId: voice.id,
      platformName: request.platform_name,
      scopes: request.scopes,
      expiresAt,
      ...request.terms,
      status: 'active',
      tokenHash: await sha256Hex(licenseToken),
      createdAt: now,
      updatedAt: now,
    });
    await this.recordChange(tx, voice, licence, 'created', actor, now);
    await publishToEdgeIndex(tx, voice.id, now);
    return { licence, licenseToken };
  }

  /** Before licensing: a licence can only name a registered platform, exactly as the gate will be asked. */
  async checkPlatformName(name: string) {
    if (!(await platformExists(this.deps.db, name))) {
      throw new ProblemError('not_found', 'No platform is registered under this exact name.');
    }
    return { platform_name: name };
  }

  /** The voice a public licensing page is about (the gate's `license_url`); an unknown voice is a 404 problem, like any other lookup. */
  async licensingPageVoice(voiceId: string): Promise<{ voiceId: string; name: string }> {
    const voice = await findVoice(this.deps.db, voiceId);
    if (!voice) throw new ProblemError('not_found', 'No voice is registered under this id.');
    return { voiceId: voice.id, name: voice.name };
  }

  async listLicenses(principal: Principal, voiceId: string) {
    const { db } = this.deps;
    await findVoiceFor(db, principal, voiceId);
    return { licenses: await Promise.all((await store.listLicenses(db, voiceId)).map(toLicense)) };
  }

  /**
   * A new expiry for an active or expired licence, which is active again with the same token; a
   * revoked one stays revoked. The terms stay, unless the renewal states new ones: its audit record
   * says which (`license_renewed` or `license_renewed_with_new_terms`) and carries the terms' hash.
   */
  async renewLicense(principal: Principal, voiceId: string, licenseId: string, renewal: LicenseRenewal) {
    const { db, runtime } = this.deps;
    const now = runtime.clock.now();
    const expiresAt = acceptableExpiry(renewal.expires_at, now);
    const { description } = renewal;
    const newTerms =
      description === undefined ? {} : statedTerms({ ...renewal, description, represented_by: renewal.represented_by ?? 'none' });
    const row = await db.transaction(async (tx) => {
      const voice = await lockVoiceFor(tx, principal, voiceId);
      const licence = await lockOwnLicense(tx, voiceId, licenseId);
      if (licence.status === 'revoked') throw new ProblemError('conflict', 'A revoked licence cannot be renewed; create a new one.');
      const renewed = await store.updateLicense(tx, licenseId, { status: 'active', expiresAt, ...newTerms, updatedAt: now });
      const change = description === undefined ? 'renewed' : 'renewed_with_new_terms';
      await this.recordChange(tx, voice, renewed, change, { type: 'user', userId: principal.userId }, now);
      await publishToEdgeIndex(tx, voiceId, now);
      return renewed;
    });
    this.deps.outbox.nudge();
    return toLicense(row);
  }

  /** Revoking twice is not an error: the licence is revoked either way, and nothing more is published. */
  async revokeLicense(principal: Principal, voiceId: string, licenseId: string) {
    const { db, runtime } = this.deps;
    const now = runtime.clock.now();
    const changed = await db.transaction(async (tx) => {
      const voice = await lockVoiceFor(tx, principal, voiceId);
      const licence = await lockOwnLicense(tx, voiceId, licenseId);
      if (licence.status === 'revoked') return false;
      const revoked = await store.updateLicense(tx, licenseId, { status: 'revoked', revokedAt: now, updatedAt: now });
      await this.recordChange(tx, voice, revoked, 'revoked', { type: 'user', userId: principal.userId }, now);
      await publishToEdgeIndex(tx, voiceId, now);
      return true;
    });
    if (changed) this.deps.outbox.nudge();
    return { license_id: licenseId, status: 'revoked' as const };
  }

  /**
   * Marks active licences past their expiry as expired, one voice per transaction; answers how
   * many it expired. Several processes may run it at once: each voice's due licences are re-read
   * under the voice's lock, so a licence is expired (and announced) once.
   */
  async expireDueLicenses(): Promise<number> {
    const { db, runtime } = this.deps;
    const now = runtime.clock.now();
    let expired = 0;
    for (const voiceId of await store.voicesWithDueLicenses(db, now, EXPIRY_BATCH)) {
      expired += await db.transaction(async (tx) => {
        const voice = await lockVoice(tx, voiceId);
        if (!voice) return 0;
        const due = await store.lockDueLicenses(tx, voiceId, now);
        for (const licence of due) {
          const row = await store.updateLicense(tx, licence.id, { status: 'expired', updatedAt: now });
          await this.recordChange(tx, voice, row, 'expired', { type: 'system' }, now);
        }
        if (due.length > 0) await publishToEdgeIndex(tx, voiceId, now);
        return due.length;
      });
    }
    if (expired > 0) this.deps.outbox.nudge();
    return expired;
  }

  /** The domain event and the audit record of one licence change, in the caller's transaction. */
  private async recordChange(tx: Executor, voice: VoiceRow, licence: LicenseRow, change: LicenseChange, actor: RegistryActor, now: Date) {
    if (change !== 'created') {
      const type = EVENT_OF[change];
      const expiresAt = licence.expiresAt.toISOString();
      await recordEvent(
        tx,
        {
          type,
          voiceId: voice.id,
          ownerId: voice.ownerId,
          fields: { license_id: licence.id, platform_name: licence.platformName, expires_at: expiresAt },
        },
        now,
      );
      // The licensed platform's own copy: its licence's fields only, nothing about the owner.
      await recordEvent(
        tx,
        {
          type,
          voiceId: voice.id,
          ownerId: null,
          platformName: licence.platformName,
          fields: { license_id: licence.id, scopes: licence.scopes, expires_at: expiresAt },
        },
        now,
      );
    }
    const record = registryAuditRecord({
      checkId: this.deps.runtime.newId(),
      kind: 'license.changed',
      voiceId: voice.id,
      platformName: licence.platformName,
      reason: `license_${change}:${licence.id}`,
      consentStatus: voice.consentStatus,
      actor,
      decidedAt: now,
      // The terms a licence is made or renewed under are on the record; an end changes no terms.
      licenseTermsSha256: change === 'revoked' || change === 'expired' ? undefined : await termsSha256Of(licence),
    });
    await queueAuditRecords(tx, [record], now);
  }
}

async function lockOwnLicense(tx: Executor, voiceId: string, licenseId: string): Promise<LicenseRow> {
  const licence = await store.lockLicense(tx, voiceId, licenseId);
  if (!licence) throw new ProblemError('not_found', 'No such licence on this voice.');
  return licence;
}

/** An expiry in the future and at most ten years ahead, else a 422 naming the field. */
export function acceptableExpiry(value: string, now: Date): Date {
  const expiresAt = new Date(value);
  const problem =
    expiresAt.getTime() <= now.getTime()
      ? 'must be in the future'
      : expiresAt.getTime() - now.getTime() > LICENSE_MAX_TERM_MS
        ? 'must be at most ten years ahead'
        : null;
  if (problem)
    throw new ProblemError('validation_failed', 'The expiry is out of range.', {
      errors: [{ field: 'body.expires_at', message: problem }],
    });
  return expiresAt;
}

async function toLicense(row: LicenseRow): Promise<License> {
  const terms = licenseTermsOf(row);
  return {
    ...terms,
    // the row's own array: the terms type reads it as readonly, the answer's schema as mutable
    scopes: row.scopes,
    status: row.status,
    created_at: row.createdAt.toISOString(),
    revoked_at: row.revokedAt?.toISOString() ?? null,
    license_terms_sha256: await licenseTermsSha256(terms),
  };
}
