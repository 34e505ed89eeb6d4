import { byId, h, replace } from '@vip/shared-schema/browser/dom';
import { fetchVerifierKey, receiptProof } from '@vip/shared-schema/browser/receipt-proof';
import type { ProvenanceVerdict, ProvenanceVerification } from '@vip/shared-schema/provenance';
import { renderProblem } from './problem.js';

/**
 * "Check a file": the chosen or dropped file goes to the origin's `POST /api/v1/provenance/verify`
 * (the page names the address), the verdict is put in words, and the receipt the file carries is
 * checked here with the log's verifier key, so the page does not take the service's word for it.
 */

type Tone = 'success' | 'warning' | 'error' | 'neutral';

/** Each verdict of docs/CONTRACT.md#verifying-a-file, for a person. */
const VERDICT_WORDS: Record<ProvenanceVerdict, [Tone, string]> = {
  authorized: [
    'success',
    'Authorized: the voice in this file was synthesized by the platform the log names, with its owner’s consent, and that consent still stands.',
  ],
  authorization_revoked_since: [
    'warning',
    'Authorization revoked since: the file was authorized when it was made, but today the voice is gone, its owner withdrew consent, or the platform’s licence ended.',
  ],
  not_redeemed: ['warning', 'Not redeemed: the gate approved, but the platform never redeemed the approval’s token.'],
  altered: ['error', 'Altered: the audio changed after the platform signed it, so its Content Credentials no longer vouch for it.'],
  credentials_invalid: ['error', 'Invalid credentials: the file’s Content Credentials are broken (an edited assertion, a bad signature).'],
  no_credentials_protected_voice: [
    'error',
    'No credentials, and a protected voice: the file carries no Content Credentials, and the voice in it sounds like one an owner protects here.',
  ],
  no_credentials: [
    'neutral',
    'No credentials: the file carries no Content Credentials, and its voice does not sound like one protected here.',
  ],
  no_authorization_protected_voice: [
    'error',
    'No authorization, and a protected voice: the file’s Content Credentials carry no owner’s consent, and the voice in it sounds like one protected here.',
  ],
  no_authorization: [
    'neutral',
    'No authorization: the file’s Content Credentials are intact but carry no owner’s consent from this service.',
  ],
  authorization_malformed: ['error', 'Malformed authorization: the consent the file carries is not in the form this service defines.'],
  receipt_invalid: ['error', 'Receipt invalid: the receipt in the file does not prove the check it names in this service’s log.'],
  not_approved: ['error', 'Not approved: the check the file names did not approve this synthesis.'],
  signer_not_registered: ['error', 'Signer not registered: no platform registered the certificate the file was signed under.'],
  signer_not_the_platform: [
    'error',
    'Signer not the platform: the file was signed under another platform’s certificate than the one the check names.',
  ],
  voice_mismatch: ['error', 'Voice mismatch: the voice in the file is not the voice the check names.'],
  watermark_authorized: [
    'success',
    'Authorized by its watermark: the file carries no Content Credentials, but its inaudible mark names a check that approved this voice for a platform that redeemed it, with its owner’s consent that still stands. The mark alone cannot show that this very audio is the synthesis it was issued for.',
  ],
  watermark_not_issued: ['error', 'Unknown watermark: the file carries a mark this service never issued.'],
  credentials_watermark_mismatch: [
    'error',
    'Credentials and watermark disagree: the file’s Content Credentials name one check and its watermark another.',
  ],
};

const STATE_WORDS: Record<string, string> = {
  trusted: 'intact, signed under a certificate a platform registered here',
  valid_untrusted: 'intact, signed under a certificate no platform registered here',
  invalid: 'invalid',
};

const yesNo = (value: boolean) => (value ? 'yes' : 'no');
/** A finding of the verification: null is a check it did not run, never a "no" (docs/DECISIONS.md). */
const finding = (value: boolean | null) => (value === null ? 'not checked' : yesNo(value));

/** A labelled list of facts; rows whose value is null are left out. */
function facts(label: string, rows: [string, Node | string | null][]): HTMLElement {
  return h(
    'dl',
    { class: 'facts', 'aria-label': label },
    ...rows.filter(([, value]) => value !== null).flatMap(([term, value]) => [h('dt', {}, term), h('dd', {}, value)]),
  );
}

function signerPart({ credentials, not_checked }: ProvenanceVerification): HTMLElement {
  const { signer } = credentials;
  return h(
    'section',
    { 'aria-labelledby': 'signer-title', id: 'check-signer' },
    h('h3', { id: 'signer-title' }, 'The signer'),
    credentials.present && signer
      ? facts('The signer', [
          ['Certificate subject', signer.common_name ?? '(none given)'],
          ['Issued by', signer.issuer],
          ['Serial number', signer.serial_number],
          [
            'Platform it chains to',
            signer.registered_platform ??
              (not_checked.includes('signer_platform')
                ? 'not checked'
                : 'none: the signer does not chain to a certificate of the platform the check names'),
          ],
          ['Credentials', STATE_WORDS[credentials.state ?? ''] ?? credentials.state],
          ['Failures', credentials.failure_codes.length ? credentials.failure_codes.join(', ') : null],
          ['Made by a trained model', yesNo(credentials.synthetic)],
        ])
      : h('p', {}, 'The file carries no Content Credentials, so nobody signed for it.'),
  );
}

async function checkPart(authorization: ProvenanceVerification['authorization'], vkeyUrl: string): Promise<HTMLElement> {
  const part = h(
    'section',
    { 'aria-labelledby': 'named-check-title', id: 'check-named' },
    h('h3', { id: 'named-check-title' }, 'The check it names'),
  );
  // Without credentials, a watermark the service issued names the check (the file carries no assertion).
  if (!authorization.check_id) {
    part.append(h('p', {}, 'The file names no check of the gate.'));
    return part;
  }
  if (!authorization.present) part.append(h('p', {}, 'Named by the file’s watermark: the file carries no authorization of its own.'));
  part.append(
    facts('The check it names', [
      ['Check', h('code', {}, authorization.check_id)],
      ['Voice', h('code', {}, authorization.voice_id ?? '')],
      ['Platform', authorization.platform_name],
      ['Use', authorization.intended_use],
      ['Decided at', authorization.decided_at],
      ['Under the licence terms (SHA-256)', authorization.license_terms_sha256 ? h('code', {}, authorization.license_terms_sha256) : null],
      ['The service found the decision approved', finding(authorization.approved)],
      ['Its token redeemed', finding(authorization.redeemed)],
      ['The owner’s consent stands today', finding(authorization.consent_standing)],
      ['The platform’s licence stands today', finding(authorization.license_standing)],
      ['Problems', authorization.problems.length ? authorization.problems.join('; ') : null],
    ]),
  );
  const receipt = authorization.receipt;
  const proofArea = h('div', { class: 'receipt', id: 'check-receipt' }, h('h4', {}, 'Its receipt, verified in this page'));
  part.append(proofArea);
  if (!receipt) {
    proofArea.append(h('p', {}, 'The file carries no receipt that could be read.'));
    return part;
  }
  try {
    const { element, verified } = await receiptProof(receipt, await fetchVerifierKey(vkeyUrl));
    proofArea.append(element);
    if (verified) {
      const { entry } = verified;
      proofArea.append(
        entry.check_id === authorization.check_id
          ? h(
              'p',
              { 'data-logged': entry.decision ?? '' },
              `The log says: ${entry.kind} ${entry.decision ?? ''} at ${entry.decided_at}, voice ${entry.voice_id}, platform ${entry.platform_name}, use ${entry.intended_use}.`,
            )
          : h('p', { role: 'alert' }, `The receipt proves check ${entry.check_id}, not the check the file names.`),
      );
    }
  } catch (error) {
    proofArea.append(h('p', { class: 'proof failed', role: 'alert' }, `The receipt could not be checked: ${(error as Error).message}`));
  }
  return part;
}

function watermarkPart(watermark: ProvenanceVerification['watermark']): HTMLElement {
  return h(
    'section',
    { 'aria-labelledby': 'watermark-title', id: 'check-watermark' },
    h('h3', { id: 'watermark-title' }, 'The watermark'),
    watermark.found
      ? facts('The watermark', [
          ['Mark read', h('code', {}, watermark.id ?? '')],
          ['Issued by this service', yesNo(watermark.issued === true)],
          ['For the check', watermark.check_id ? h('code', {}, watermark.check_id) : null],
          ['Windows read', String(watermark.windows_read)],
        ])
      : h('p', {}, `No inaudible mark was found (${watermark.windows_read} windows read).`),
  );
}

function voicePart({ voice, not_checked }: ProvenanceVerification): HTMLElement {
  const matches = voice.protected_matches;
  const screened = !not_checked.includes('protected_voices');
  return h(
    'section',
    { 'aria-labelledby': 'voice-title', id: 'check-voice' },
    h('h3', { id: 'voice-title' }, 'The voice'),
    voice.compared_with
      ? facts('The voice', [
          ['Compared with the voice', h('code', {}, voice.compared_with)],
          ['Same speaker', voice.is_same_speaker === null ? null : yesNo(voice.is_same_speaker)],
          ['Probability it is that voice', voice.probability === null ? null : `${(voice.probability * 100).toFixed(1)}%`],
          ['Similarity', voice.similarity === null ? null : voice.similarity.toFixed(3)],
          ['Speaker model', voice.model],
        ])
      : h(
          'p',
          {},
          !screened
            ? 'Not checked: the verification compared the voice in the file with no voice, and did not screen it against the protected voices.'
            : matches.length
              ? `It sounds like ${matches.length === 1 ? 'a protected voice' : `${matches.length} protected voices`}: ${matches
                  .map((match) => `${match.voice_id} (confidence ${match.confidence.toFixed(2)})`)
                  .join(', ')}.`
              : 'It was compared with no voice: the file names none it could be held against, and it sounds like no protected voice.',
        ),
  );
}

async function renderVerification(where: HTMLElement, fileName: string, result: ProvenanceVerification, vkeyUrl: string): Promise<void> {
  const [tone, words] = VERDICT_WORDS[result.verdict] ?? ['neutral', result.verdict];
  replace(
    where,
    h('p', { class: `notice verdict ${tone}`, 'data-verdict': result.verdict }, h('strong', {}, `${fileName}: `), words),
    signerPart(result),
    await checkPart(result.authorization, vkeyUrl),
    watermarkPart(result.watermark),
    voicePart(result),
    h('p', { class: 'hint' }, `This check is itself an entry of the audit log: `, h('code', {}, result.check_id), '.'),
  );
}

async function check(file: File, zone: HTMLElement, result: HTMLElement): Promise<void> {
  const { verifyUrl = '', vkeyUrl = '' } = zone.dataset;
  replace(result, h('p', { class: 'hint' }, `Checking ${file.name}…`));
  zone.setAttribute('aria-busy', 'true');
  try {
    const form = new FormData();
    form.set('audio', file, file.name);
    // No header of its own: a simple cross-origin request, which the origin answers without a preflight.
    const response = await fetch(verifyUrl, { method: 'POST', body: form });
    const body = (await response.json()) as unknown;
    if (response.ok) await renderVerification(result, file.name, body as ProvenanceVerification, vkeyUrl);
    else renderProblem(result, response.status, body, response.headers);
  } catch (error) {
    replace(result, h('div', { class: 'notice error' }, `The file could not be checked: ${(error as Error).message}`));
  } finally {
    zone.removeAttribute('aria-busy');
  }
}

/** Wires the file input and the drop zone. */
export function setUpFileCheck(): void {
  const zone = byId('drop-zone');
  const input = byId<HTMLInputElement>('check-file');
  const result = byId('check-result');
  input.addEventListener('change', () => {
    const file = input.files?.[0];
    if (file) void check(file, zone, result);
  });
  zone.addEventListener('dragover', (event) => {
    event.preventDefault();
    zone.classList.add('dragging');
  });
  zone.addEventListener('dragleave', () => zone.classList.remove('dragging'));
  zone.addEventListener('drop', (event) => {
    event.preventDefault();
    zone.classList.remove('dragging');
    const file = event.dataTransfer?.files[0];
    if (file) void check(file, zone, result);
  });
}
