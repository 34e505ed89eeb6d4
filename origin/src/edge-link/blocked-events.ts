import type { AuditRecord } from '@vip/shared-schema';
import type { Executor } from '../db/client.js';
import { ownersOfErasedVoices, recordEvent } from '../events/index.js';
import { ownersOfVoices } from '../voice-records/store.js';

/**
 * docs/CONTRACT.md#events: `pre_synthesis.blocked` on every hard block the edge decided, for the voice
 * owner's subscriptions. Given the collected records pulled for the first time, in the transaction
 * that queues them, so a batch pulled twice emits no second event. The owner is recorded with the
 * event here, and is found for a voice erased since the decision too: the erasure and its
 * `voice.deleted` event commit together, so a voice missing from the first look is in the second.
 */
export async function emitBlockedEvents(tx: Executor, firstPulled: AuditRecord[]): Promise<void> {
  const denials = firstPulled.filter((record) => record.kind === 'gate.decision' && record.decision === 'deny');
  if (denials.length === 0) return;
  const voiceIds = [...new Set(denials.flatMap((record) => (record.voice_id ? [record.voice_id.toLowerCase()] : [])))];
  const owners = await ownersOfVoices(tx, voiceIds);
  const erased = await ownersOfErasedVoices(
    tx,
    voiceIds.filter((voiceId) => !owners.has(voiceId)),
  );
  for (const [voiceId, ownerId] of erased) owners.set(voiceId, ownerId);
  for (const record of denials) {
    await recordEvent(
      tx,
      {
        type: 'pre_synthesis.blocked',
        voiceId: record.voice_id,
        ownerId: (record.voice_id && owners.get(record.voice_id.toLowerCase())) ?? null,
        fields: {
          platform_name: record.platform_name,
          intended_use: record.intended_use,
          reason: record.reason,
          check_id: record.check_id,
          authorization_denied: true,
        },
      },
      new Date(record.decided_at),
    );
  }
}
