import { type VerifiedReceipt, verifyReceipt } from '../client/receipt.js';
import type { AuditReceipt } from '../routes/origin/audit.js';
import { h } from './dom.js';

/**
 * A receipt checked in the page, for the console's timeline and the playground's file check: the
 * typed client's `verifyReceipt` (the checkpoint's Ed25519 signature under the log's verifier key,
 * the log's origin, the inclusion path from the leaf to the signed root, the leaf being the entry
 * the receipt names), run with the browser's WebCrypto.
 */

/**
 * The log's verifier key as the service at `url` publishes it now. The check then proves that this
 * key signed a checkpoint whose tree holds the entry; whoever keeps the receipt as evidence should
 * also keep this key, or compare it with a copy from a source they trust (docs/CONSOLE.md).
 */
export async function fetchVerifierKey(url: string): Promise<string> {
  const response = await fetch(url);
  if (!response.ok) throw new Error(`the log's verifier key could not be read (HTTP ${response.status})`);
  return (await response.text()).trim();
}

/** The verdict on `receipt` in words (`data-proof` verified or failed), and the entry it proves when it holds. */
export async function receiptProof(
  receipt: AuditReceipt,
  key: string,
): Promise<{ element: HTMLElement; verified: VerifiedReceipt | null }> {
  const seq = receipt.index + 1;
  return verifyReceipt(receipt, key).then(
    (verified) => ({
      verified,
      element: h(
        'p',
        { class: 'proof verified', 'data-proof': 'verified' },
        h('strong', {}, 'Proof verified: '),
        `entry ${seq} is in the log ${verified.checkpoint.origin}, whose checkpoint of ${verified.checkpoint.size} entries is signed by the key `,
        h('code', {}, key),
        '.',
      ),
    }),
    (error: Error) => ({
      verified: null,
      element: h(
        'p',
        { class: 'proof failed', 'data-proof': 'failed', role: 'alert' },
        h('strong', {}, 'Proof check failed: '),
        error.message,
      ),
    }),
  );
}
