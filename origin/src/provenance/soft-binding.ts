import { buildAuditRecord, limits, ProblemError, type SoftBindingQueryResult } from '@vip/shared-schema';
import { superbox } from '@vip/shared-schema/provenance/jumbf';
import { isWatermarkId, WATERMARK_ALGORITHM } from '@vip/shared-schema/watermark/index';
import { queueAuditRecords, type TransparencyLog } from '../audit/index.js';
import type { Caller } from '../auth/index.js';
import type { Database } from '../db/client.js';
import { watermarkManifests } from '../db/schema.js';
import type { MultipartForm } from '../http/multipart-form.js';
import type { RateLimiter } from '../http/rate-limit.js';
import type { Runtime } from '../runtime.js';
import type { VoiceprintEngine } from '../voiceprint/index.js';
import { admitPublicCaller, auditedPublicCaller, type PublicCaller } from './callers.js';
import { type ResolvedMark, resolveMark } from './marks.js';
import * as store from './store.js';

export interface SoftBindingServiceDeps {
  db: Database;
  runtime: Runtime;
  limiter: RateLimiter;
  tlog: TransparencyLog;
  /** Absent in processes that serve no audio: lookups by content answer 503. */
  engine?: VoiceprintEngine;
}

/** The id a byBinding `value` names: the id as the soft-binding assertion carries it, or the base64 of its 5 bytes. */
export function watermarkIdOfBinding(value: string): string | null {
  if (isWatermarkId(value)) return value;
  const bytes = /^[A-Za-z0-9+/]{7}=?$/.test(value) ? Buffer.from(value, 'base64') : null;
  return bytes?.length === 5 ? bytes.toString('hex') : null;
}

/**
 * The C2PA soft-binding resolution API over this service's watermark (docs/CONTRACT.md#the-soft-binding-resolution-api):
 * an id, or the mark read from an uploaded file, resolved to the authorizations it was issued for and the
 * manifests their platforms deposited. Every lookup is an audit entry; the upload lives only in the call.
 */
export class SoftBindingService {
  constructor(private readonly deps: SoftBindingServiceDeps) {}

  admit(caller: PublicCaller): Promise<void> {
    return admitPublicCaller(this.deps.limiter, 'provenance-lookup', caller, {
      anonymous: limits.provenanceLookupAnonymousPerMinute,
      perCredential: limits.provenanceLookupPerCredentialPerMinute,
    });
  }

  supportedAlgorithms() {
    return { watermarks: [{ alg: WATERMARK_ALGORITHM }], fingerprints: [] };
  }

  async byBinding(caller: PublicCaller, query: { alg: string; value: string; maxResults: number }): Promise<SoftBindingQueryResult> {
    const id = query.alg === WATERMARK_ALGORITHM ? watermarkIdOfBinding(query.value) : null;
    if (query.alg === WATERMARK_ALGORITHM && id === null) {
      throw new ProblemError('validation_failed', 'The query is invalid.', {
        errors: [{ field: 'query.value', message: 'a watermark id: 10 lowercase hex digits, or the base64 of its 5 bytes' }],
      });
    }
    // An algorithm this service does not resolve matches nothing (the C2PA API answers an empty list).
    return this.answer(caller, 'binding', id === null ? [] : await resolveMark(this.deps.db, this.deps.tlog, id), query.maxResults);
  }

  async byContent(caller: PublicCaller, form: MultipartForm, query: { alg?: string | undefined; maxResults: number }) {
    const audio = form.files.get('audio')?.[0];
    if (!audio) {
      throw new ProblemError('validation_failed', 'The multipart form is invalid.', {
        errors: [{ field: 'body.audio', message: 'an audio file is required' }],
      });
    }
    if (query.alg !== undefined && query.alg !== WATERMARK_ALGORITHM) return this.answer(caller, 'content', [], query.maxResults);
    if (!this.deps.engine) throw new ProblemError('unavailable', 'This process has no voiceprint engine.');
    const read = await this.deps.engine.readWatermark(audio.bytes);
    const marks = read.found && read.id ? await resolveMark(this.deps.db, this.deps.tlog, read.id) : [];
    return this.answer(caller, 'content', marks, query.maxResults);
  }

  /** A platform deposits the signed manifest store of a file it marked with a mark issued to it. */
  async deposit(caller: Caller, form: MultipartForm): Promise<{ manifestId: string; watermark_id: string }> {
    if (caller.kind !== 'platform') throw new ProblemError('forbidden', 'Only the platform that marked the file deposits its manifest.');
    const watermarkId = form.fields.get('watermark_id') ?? '';
    const manifest = form.files.get('manifest')?.[0];
    const errors = [
      ...(isWatermarkId(watermarkId) ? [] : [{ field: 'body.watermark_id', message: 'a watermark id: 10 lowercase hex digits' }]),
      ...(manifest ? [] : [{ field: 'body.manifest', message: 'the manifest store is required' }]),
    ];
    if (errors.length > 0 || !manifest) throw new ProblemError('validation_failed', 'The multipart form is invalid.', { errors });
    if (manifest.bytes.length > limits.manifestStoreMaxBytes) {
      throw new ProblemError('payload_too_large', `The manifest store is larger than ${limits.manifestStoreMaxBytes} bytes.`);
    }
    if (!isManifestStore(manifest.bytes)) throw new ProblemError('malformed_manifest', 'The file is not one JUMBF superbox labelled c2pa.');
    const { db, runtime } = this.deps;
    const marks = await store.marksOfId(db, watermarkId);
    if (marks.length === 0) throw new ProblemError('not_found', 'This service issued no such watermark id.');
    const own = marks.filter((mark) => mark.platformName === caller.platformName).at(-1);
    if (!own) throw new ProblemError('platform_mismatch', 'The watermark id was issued to another platform.');
    const [inserted] = await db
      .insert(watermarkManifests)
      .values({ redemptionCheckId: own.redemptionCheckId, manifest: Buffer.from(manifest.bytes), depositedAt: runtime.clock.now() })
      .onConflictDoNothing()
      .returning({ id: watermarkManifests.redemptionCheckId });
    if (!inserted) throw new ProblemError('conflict', 'A manifest was already deposited for this mark.');
    return { manifestId: own.redemptionCheckId, watermark_id: watermarkId };
  }

  async manifest(manifestId: string): Promise<Buffer> {
    const found = await store.depositedManifest(this.deps.db, manifestId);
    if (!found) throw new ProblemError('not_found', 'No manifest was deposited under this id.');
    return found;
  }

  /** The matches, best first, and the lookup's audit entry (under the first match's voice and platform). */
  private async answer(
    caller: PublicCaller,
    by: 'binding' | 'content',
    marks: readonly ResolvedMark[],
    maxResults: number,
  ): Promise<SoftBindingQueryResult> {
    const { db, runtime } = this.deps;
    const shown = marks.slice(0, maxResults);
    const deposited = await store.depositedManifestIds(
      db,
      shown.map((mark) => mark.redemptionCheckId),
    );
    const first = shown[0];
    const now = runtime.clock.now();
    const record = buildAuditRecord('provenance.lookup', {
      check_id: runtime.newId(),
      decided_at: now,
      voice_id: first?.voiceId ?? null,
      platform_name: first?.platformName ?? null,
      reason: `lookup=${by};authorization=${first?.approval?.check_id ?? 'none'};matches=${shown.length}`,
      ...(await auditedPublicCaller(caller)),
    });
    await queueAuditRecords(db, [record], now);
    return {
      matches: shown.map((mark) => ({
        manifestId: mark.redemptionCheckId,
        similarityScore: 100,
        authorization: {
          check_id: mark.approval?.check_id ?? null,
          voice_id: mark.voiceId,
          platform_name: mark.platformName,
          intended_use: mark.intendedUse,
          decided_at: mark.approval?.decided_at ?? null,
          redemption_check_id: mark.redemptionCheckId,
          receipt: mark.receipt,
          manifest_deposited: deposited.has(mark.redemptionCheckId),
        },
      })),
    };
  }
}

/** A manifest store: one JUMBF superbox labelled `c2pa` spanning the bytes exactly. */
function isManifestStore(bytes: Uint8Array): boolean {
  if (bytes.length < 8) return false;
  const length = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength).getUint32(0);
  const type = new TextDecoder().decode(bytes.subarray(4, 8));
  return length === bytes.length && superbox({ type, body: bytes.subarray(8) })?.label === 'c2pa';
}
