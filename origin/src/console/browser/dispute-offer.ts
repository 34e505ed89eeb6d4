import { h, replace } from '@vip/shared-schema/browser/dom';
import type { DisputeInput } from '@vip/shared-schema/client';
import { errorNotice, successNotice } from './messages.js';
import { receiptControl } from './receipt.js';
import { api } from './session.js';

/**
 * What an enrollment refused as another owner's voice (409 identity_conflict) offers: a dispute
 * with the same recordings, name, biometric consent and spoken consent (its challenge is still
 * unspent: the refusal kept nothing), docs/OWNER-GUIDE.md#if-your-voice-is-enrolled-by-someone-else.
 * `form` is null when no spoken consent was recorded; `opened` runs once the dispute is filed.
 */
export function disputeOffer(form: DisputeInput | null, opened: () => void): HTMLElement {
  const result = h('div', { id: 'dispute-result' });
  const button = h('button', { type: 'button', id: 'dispute' }, 'Dispute it: this is my voice');
  button.addEventListener('click', async () => {
    if (!form) {
      return replace(
        result,
        h('div', { class: 'notice error', role: 'alert' }, 'A dispute needs your spoken consent: record it in step 4, then enroll again.'),
      );
    }
    button.disabled = true;
    replace(result, h('p', { role: 'status' }, 'Sending the dispute: the service checks your spoken consent…'));
    try {
      const dispute = await api.voices.dispute(form);
      opened();
      button.remove();
      replace(
        result,
        successNotice(
          'Dispute opened. The voice that sounds like yours is held: platforms are refused it until an administrator decides. Its owner has been told, without learning who you are. You can follow the dispute on your voices page.',
        ),
        h('p', {}, receiptControl(dispute.check_id, 'the dispute'), ' shows when you filed it.'),
        h('p', {}, h('a', { href: '#/voices', id: 'open-disputes' }, 'Your voices and disputes')),
      );
      result.querySelector('a')?.focus();
    } catch (error) {
      replace(result, errorNotice(error));
      button.disabled = false;
    }
  });
  return h(
    'div',
    { id: 'dispute-offer', class: 'card' },
    h('h3', {}, 'Is it your voice?'),
    h(
      'p',
      {},
      'Send the same recordings and spoken consent as a dispute. An administrator then decides whether the voice stays with its owner, is erased, or becomes yours.',
    ),
    button,
    result,
  );
}
