/**
 * `required`: every enrollment and re-enrollment needs a spoken consent. `when_given`: one that is
 * sent is checked like a required one, and an enrollment without one goes ahead as before (the
 * default until every client sends one: docs/OPERATIONS.md#spoken-consent).
 */
export const SPOKEN_CONSENT_MODES = ['required', 'when_given'] as const;
export type SpokenConsentMode = (typeof SPOKEN_CONSENT_MODES)[number];

export interface SpokenConsentSettings {
  mode: SpokenConsentMode;
  /** 0: the phrase must be heard exactly; 1: one word of it may be wrong. */
  phraseMaxWrongWords: number;
}

export const defaultSpokenConsentSettings: SpokenConsentSettings = { mode: 'when_given', phraseMaxWrongWords: 1 };
