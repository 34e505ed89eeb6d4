/**
 * The browser pages (the owner console at the origin, the evaluator playground at the edge) and
 * what both planes send with them. Written once here so the two pages cannot drift apart.
 */

/**
 * A strict policy: scripts and styles only from the page's own origin (no inline script or style,
 * no eval), API calls only to the same origin and the origins in `connectTo`, no framing, no
 * plugins, and Trusted Types required for every DOM sink that parses HTML, so no string can become
 * markup. The pages build their DOM with createElement and textContent only.
 */
export const pageContentSecurityPolicy = (connectTo: readonly string[] = []): string =>
  [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    ["connect-src 'self'", ...connectTo].join(' '),
    "img-src 'self' data:",
    "media-src 'self' blob:",
    "form-action 'self'",
    "base-uri 'none'",
    "frame-ancestors 'none'",
    "require-trusted-types-for 'script'",
    "trusted-types 'none'",
  ].join('; ');

/** Sent with every page and page asset. The microphone is allowed for the page's own origin only. */
export const PAGE_SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'content-security-policy': pageContentSecurityPolicy(),
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-resource-policy': 'same-origin',
  'permissions-policy': 'microphone=(self), camera=(), geolocation=(), payment=()',
  // The pages are small and change with each release; the assets are named by the page, not hashed.
  'cache-control': 'no-cache',
};

/** The same, for a page whose script also calls `connectTo` (the playground checks files at the origin). */
export const pageSecurityHeaders = (connectTo: readonly string[] = []): Readonly<Record<string, string>> => ({
  ...PAGE_SECURITY_HEADERS,
  'content-security-policy': pageContentSecurityPolicy(connectTo),
});

/** Paragraphs every version of the biometric consent statement has in common. */
const BIOMETRIC_CONSENT_PURPOSE = [
  'I consent to the Voice Identity Protection Service processing recordings of my voice to create a voiceprint: a numerical description of my voice (an embedding) that cannot be turned back into audio.',
  'The voiceprint is used only to protect my voice: to recognise it when a text-to-speech platform asks to synthesize it, to detect another enrollment of the same voice, and to compare recordings I or a platform submit.',
] as const;
const BIOMETRIC_CONSENT_SCOPE =
  'This consent serves one enrollment. I can withdraw synthesis consent for the voice at any time, and delete the voice at any time.';

/**
 * Every biometric consent statement the console has shown, by the version `POST /api/v1/consents`
 * records as `statement_version`, so a consent record always names words that were read: a record of
 * an earlier version keeps its meaning (as SPOKEN_CONSENT_STATEMENTS keeps every spoken statement).
 */
export const BIOMETRIC_CONSENT_STATEMENTS = {
  /** Written before the spoken consent: it says no recording is kept, which stopped being true when the consent recording was kept. */
  '2026-01': {
    version: '2026-01',
    paragraphs: [
      ...BIOMETRIC_CONSENT_PURPOSE,
      'My recordings are processed when I upload them and are not kept; the voiceprint and this consent are stored until I delete the voice, which erases them, its licences and its record at the edge. The audit log keeps the decisions made about the voice, which hold no biometric data.',
      BIOMETRIC_CONSENT_SCOPE,
    ],
  },
  /** Says what is kept: the spoken-consent recording, with the voice, as the evidence of the consent (docs/DECISIONS.md#biometric-consent-statement-2026-11). */
  '2026-11': {
    version: '2026-11',
    paragraphs: [
      ...BIOMETRIC_CONSENT_PURPOSE,
      'The recordings I enroll my voice with are processed when I upload them and are not kept. The recording of my spoken consent, in which I read the consent statement and a phrase aloud, is kept with the voice as the evidence of this consent; I can download it.',
      'The voiceprint, this consent and the spoken-consent recording are stored until I delete the voice, which erases them, its licences and its record at the edge. The audit log keeps the decisions made about the voice, which hold no biometric data.',
      BIOMETRIC_CONSENT_SCOPE,
    ],
  },
} as const satisfies Record<string, { version: string; paragraphs: readonly string[] }>;

/** The statement the console shows in full before an owner accepts it: the one new consents record. */
export const BIOMETRIC_CONSENT_STATEMENT = BIOMETRIC_CONSENT_STATEMENTS['2026-11'];

/**
 * Sent by a `crossOrigin` route (contract.ts) with every answer, problems included, so a page of
 * another origin reads the verdict or the problem and the rate limit. Any origin: the route is
 * public and no credential rides along by itself (the API reads none from cookies), and a form on
 * any site could already post the same file; this only lets the page read the answer.
 */
export const PUBLIC_CROSS_ORIGIN_HEADERS: Readonly<Record<string, string>> = {
  'access-control-allow-origin': '*',
  'access-control-expose-headers': 'ratelimit, ratelimit-policy, retry-after, x-request-id',
};

export const escapeHtml = (text: string): string =>
  text.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;').replaceAll('"', '&quot;').replaceAll("'", '&#39;');

export interface PageShell {
  title: string;
  /** Site name in the header. */
  brand: string;
  /** Same-origin paths of the page's style sheet and module script. */
  stylePath: string;
  scriptPath: string;
  /** Links in the header, as [label, href]. */
  links: readonly (readonly [string, string])[];
  /** The inside of <main>, already escaped. */
  mainHtml: string;
}

/**
 * Every page's document: in English, sized for phones, titled; `head` and `body` are markup already
 * escaped, put inside <head> after the title and inside <body>.
 */
/** The icon both planes serve at `/favicon.ico` (routes/pages.ts): a shield, the service's one mark. */
export const FAVICON_SVG =
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><path d="M16 2 4 7v8c0 7.2 5.1 13.4 12 15 6.9-1.6 12-7.8 12-15V7z" fill="#1d4ed8"/><path d="M10 16h2v-4h2v8h2v-10h2v8h2v-4h2" fill="none" stroke="#fff" stroke-width="1.6" stroke-linejoin="round"/></svg>';

export function renderHtmlDocument(title: string, head: string, body: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
${head}
</head>
<body>
${body}
</body>
</html>
`;
}

/** The HTML around a page: a skip link, the site header, one <main>, no inline code. */
export function renderPageShell(shell: PageShell): string {
  const links = shell.links.map(([label, href]) => `<a href="${escapeHtml(href)}">${escapeHtml(label)}</a>`).join('');
  return renderHtmlDocument(
    shell.title,
    `<link rel="stylesheet" href="${escapeHtml(shell.stylePath)}">
<script type="module" src="${escapeHtml(shell.scriptPath)}"></script>`,
    `<a class="skip-link" href="#main">Skip to content</a>
<header class="site"><p class="brand">${escapeHtml(shell.brand)}</p><nav aria-label="Site" class="row">${links}</nav></header>
<main id="main" tabindex="-1">
${shell.mainHtml}
</main>`,
  );
}
