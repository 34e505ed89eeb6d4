import { h, replace } from '@vip/shared-schema/browser/dom';
import type { DisputeInput } from '@vip/shared-schema/client';
import { errorNotice, successNotice } from './messages.js';
import { receiptControl } from './receipt.js';
import { api } from './session.js';

/**
 * What an enrollment refused as another owner's voice (409 identity_conflict), or held because it
 * sounds like one, offers: a dispute of that voice with the same recordings and name
 * (docs/OWNER-GUIDE.md#if-your-voice-is-enrolled-by-someone-else). `form` reads the page when the
 * button is pressed: null while a biometric consent or a spoken consent of the phrase shown is
 * missing. `opened` runs once the dispute is filed.
 */
export function disputeOffer(form: () => DisputeInput | null, opened: () => void): HTMLElement {
  const result = h('div', { id: 'dispute-result' });
  const button = h('button', { type: 'button', id: 'dispute' }, 'Dispute it: this is my voice');
  button.addEventListener('click', async () => {
    const filled = form();
    if (!filled) {
      return replace(
        result,
        h(
          'div',
          { class: 'notice error', role: 'alert' },
          'A dispute needs your biometric consent (step 1) and your spoken consent of the phrase shown (step 4): give them, then press the button again.',
        ),
      );
    }
    button.disabled = true;
    replace(result, h('p', { role: 'status' }, 'Sending the dispute: the service checks your spoken consent…'));
    try {
      const dispute = await api.voices.dispute(filled);
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
      'If another owner enrolled your voice without your consent, dispute it with these recordings and your spoken consent. An administrator then decides whether that voice stays with its owner, is erased, or becomes yours.',
    ),
    button,
    result,
  );
}
