import { ProblemError } from '@vip/shared-schema';
import type { Principal } from '../../auth/index.js';
import type { Executor } from '../../db/client.js';
import type { VoiceRow } from '../../db/schema.js';
import { findVoice, lockVoice } from '../../voice-records/store.js';

/** The voice, locked for the rest of the transaction, when the caller owns it or is an admin. */
export async function lockVoiceFor(db: Executor, principal: Principal, voiceId: string): Promise<VoiceRow> {
  return visibleTo(principal, await lockVoice(db, voiceId));
}

/** The voice, unlocked, when the caller owns it or is an admin. */
export async function findVoiceFor(db: Executor, principal: Principal, voiceId: string): Promise<VoiceRow> {
  return visibleTo(principal, await findVoice(db, voiceId));
}

/** Another owner's voice answers exactly like a missing one, so voice ids cannot be probed. */
function visibleTo(principal: Principal, voice: VoiceRow | null): VoiceRow {
  if (!voice || (voice.ownerId !== principal.userId && principal.role !== 'admin')) {
    throw new ProblemError('not_found', 'No such voice.');
  }
  return voice;
}

/**
 * A voice held for review (status `pending_review`) grants nothing until an administrator clears it:
 * `what` (synthesis consent, a licence) is refused with 409 `voice_under_review`.
 */
export function refuseWhileHeld(voice: VoiceRow, what: string): void {
  if (voice.status === 'pending_review') {
    throw new ProblemError(
      'voice_under_review',
      `This voice is held for review by an administrator; ${what} can be given once it is cleared.`,
    );
  }
}
