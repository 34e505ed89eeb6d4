import { h } from '@vip/shared-schema/browser/dom';
import { LICENSE_REPRESENTATIONS, type LicenseDescriptionSource, type LicenseRepresentation } from '@vip/shared-schema/enums';
import { LICENSE_COMPENSATION_MAX, LICENSE_DESCRIPTION_MAX } from '@vip/shared-schema/license-terms';

/** A licence's or a request's terms, as the API answers them. */
interface ShownTerms {
  description: string;
  description_source: LicenseDescriptionSource;
  represented_by: LicenseRepresentation;
  compensation: string | null;
  license_terms_sha256?: string;
}

const REPRESENTATION_WORDS: Record<LicenseRepresentation, string> = {
  none: 'no one',
  counsel: 'counsel (a lawyer)',
  union: 'a union',
};

/**
 * The terms in the console's words, one a line: what the voice may be used for, who represented the
 * owner, the compensation and, for a licence, the hash its approvals are logged with.
 */
export function termsList(terms: ShownTerms): HTMLElement {
  return h(
    'ul',
    { class: 'terms' },
    h(
      'li',
      {},
      'Intended uses: ',
      h('q', { class: 'terms-description' }, terms.description),
      terms.description_source === 'from_scopes' ? ' (written from its scopes: the licence predates stated terms)' : null,
    ),
    h('li', {}, `Owner represented by: ${REPRESENTATION_WORDS[terms.represented_by]}`),
    h('li', {}, `Compensation: ${terms.compensation ?? 'none stated'}`),
    terms.license_terms_sha256
      ? h('li', { class: 'hint' }, 'Terms hash (in the audit entry of every approval): ', h('code', {}, terms.license_terms_sha256))
      : null,
  );
}

/** The form fields that state terms, named as the API's body fields, ids prefixed with `prefix`. */
export function termsFields(prefix: string): HTMLElement[] {
  return [
    h('label', { for: `${prefix}-description` }, 'Intended uses, described'),
    h(
      'p',
      { class: 'hint', id: `${prefix}-description-hint` },
      'Say specifically what the platform may make with the voice: the work, the medium, the language. Required.',
    ),
    h('textarea', {
      id: `${prefix}-description`,
      name: 'description',
      required: true,
      maxlength: LICENSE_DESCRIPTION_MAX,
      rows: 3,
      'aria-describedby': `${prefix}-description-hint`,
    }),
    h('label', { for: `${prefix}-represented-by` }, 'You were represented by'),
    h(
      'select',
      { id: `${prefix}-represented-by`, name: 'represented_by' },
      ...LICENSE_REPRESENTATIONS.map((value) => h('option', { value }, REPRESENTATION_WORDS[value])),
    ),
    h('label', { for: `${prefix}-compensation` }, 'Compensation (optional)'),
    h('input', { id: `${prefix}-compensation`, name: 'compensation', maxlength: LICENSE_COMPENSATION_MAX }),
  ];
}

/** The terms a form states, as the API's body takes them. */
export function termsOf(data: FormData): { description: string; represented_by: LicenseRepresentation; compensation?: string } {
  const compensation = String(data.get('compensation') ?? '').trim();
  return {
    description: String(data.get('description') ?? '').trim(),
    represented_by: String(data.get('represented_by')) as LicenseRepresentation,
    ...(compensation ? { compensation } : {}),
  };
}
