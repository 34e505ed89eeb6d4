import { h, replace } from '@vip/shared-schema/browser/dom';
import { fetchVerifierKey, receiptProof } from '@vip/shared-schema/browser/receipt-proof';
import type { AuditReceipt } from '@vip/shared-schema/client';
import { tlogVerifierKeyRoute } from '@vip/shared-schema/routes/origin/audit';
import { errorNotice } from './messages.js';
import { api } from './session.js';

/**
 * A fresh entry's receipt waits for the log's next signed checkpoint (about a second, more on a busy
 * service); the page asks again after each `Retry-After`, this long in all.
 */
const PENDING_WAIT_MS = 10_000;

const fetchReceipt = (checkId: string, waiting: () => void): Promise<AuditReceipt> =>
  api.audit.receipt(checkId, { waitMs: PENDING_WAIT_MS, onPending: waiting });

/**
 * A "Receipt" button for one audit entry (`what`: "entry 12", "the dispute"). It fetches the entry's receipt, checks it in this page
 * (`receiptProof`), says whether it holds, and offers the receipt as a JSON file exactly as the
 * service sent it.
 */
export function receiptControl(checkId: string, what: string): HTMLElement {
  const area = h('div', { class: 'receipt', 'aria-live': 'polite' });
  const button = h(
    'button',
    {
      type: 'button',
      class: 'secondary small',
      'aria-label': `Receipt of ${what}`,
      onclick: async () => {
        button.disabled = true;
        replace(area, h('span', { class: 'hint' }, 'Fetching the receipt…'));
        try {
          const waiting = () =>
            replace(area, h('span', { class: 'hint' }, 'Waiting for the log to sign a checkpoint that covers this entry…'));
          const [receipt, key] = await Promise.all([fetchReceipt(checkId, waiting), fetchVerifierKey(tlogVerifierKeyRoute.path)]);
          const download = h(
            'a',
            {
              href: URL.createObjectURL(new Blob([JSON.stringify(receipt, null, 2)], { type: 'application/json' })),
              download: `receipt-${checkId}.json`,
              class: 'receipt-download',
            },
            `Download the receipt of ${what} (JSON)`,
          );
          const { element: verdict } = await receiptProof(receipt, key);
          replace(area, verdict, download);
        } catch (error) {
          button.disabled = false;
          replace(area, errorNotice(error));
        }
      },
    },
    'Receipt',
  );
  return h('span', {}, ' ', button, area);
}
