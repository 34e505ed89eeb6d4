import type { ConsentStatus } from '@vip/shared-schema';
import { queueAuditRecords } from '../../audit/index.js';
import type { Principal } from '../../auth/index.js';
import type { Database, Executor } from '../../db/client.js';
import type { VoiceRow } from '../../db/schema.js';
import type { WakeSignal } from '../../loops/wake-signal.js';
import type { Runtime } from '../../runtime.js';
import { setConsentStatus } from '../../voice-records/store.js';
import { lockVoiceFor, refuseWhileHeld } from '../edge-index/access.js';
import { registryAuditRecord } from '../edge-index/audit.js';
import { publishToEdgeIndex } from '../edge-index/publish.js';

/**
 * What else a withdrawal ends, in its transaction: the licence requests still pending for the voice.
 * Handed in by the composition root (services.ts), since licence requests build on the registry.
 */
export type OnConsentWithdrawn = (tx: Executor, voice: VoiceRow, actor: { type: 'user'; userId: string }, now: Date) => Promise<void>;

export interface SynthesisConsentServiceDeps {
  db: Database;
  runtime: Runtime;
  outbox: WakeSignal;
  onWithdrawn: OnConsentWithdrawn;
}

/** Synthesis consent per voice (docs/CONTRACT.md#answers-to-the-specifications-gaps): what the gate's `no_consent` is judged by. */
export class SynthesisConsentService {
  constructor(private readonly deps: SynthesisConsentServiceDeps) {}

  /**
   * The new state, its edge index update and its audit record commit together; the sender is
   * nudged at once, so a withdrawal reaches the edge's VoiceGate within a second. Setting the state
   * the voice already has changes, publishes and audits nothing.
   */
  async setSynthesisConsent(principal: Principal, voiceId: string, status: Exclude<ConsentStatus, 'unknown'>) {
    const { db, runtime, outbox, onWithdrawn } = this.deps;
    const now = runtime.clock.now();
    const changed = await db.transaction(async (tx) => {
      const voice = await lockVoiceFor(tx, principal, voiceId);
      // Withdrawing is always possible; granting waits for the review.
      if (status === 'active') refuseWhileHeld(voice, 'synthesis consent');
      if (voice.consentStatus === status) return false;
      await setConsentStatus(tx, voiceId, status, now);
      await publishToEdgeIndex(tx, voiceId, now);
      const actor = { type: 'user' as const, userId: principal.userId };
      if (status === 'withdrawn') await onWithdrawn(tx, { ...voice, consentStatus: status }, actor, now);
      const change = registryAuditRecord({
        checkId: runtime.newId(),
        kind: 'consent.changed',
        voiceId,
        platformName: null,
        reason: status === 'active' ? 'consent_granted' : 'consent_withdrawn',
        consentStatus: status,
        actor,
        decidedAt: now,
      });
      await queueAuditRecords(tx, [change], now);
      return true;
    });
    if (changed) outbox.nudge();
    return { voice_id: voiceId, consent_status: status };
  }
}
