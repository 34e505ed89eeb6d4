import { INTENDED_USES, LICENSE_COMPENSATION_MAX, LICENSE_DESCRIPTION_MAX, LICENSE_REPRESENTATIONS } from '@vip/shared-schema';
import { escapeHtml } from '../../http/html.js';

export interface LicensingPageVoice {
  voiceId: string;
  name: string;
}

/**
 * The public licensing page of one voice, where the gate's `license_url` leads a platform. It names
 * the voice, the uses a licence can cover and the terms a request states, and says how a platform requests a licence; it shows nothing
 * about the owner, the voice's consent or existing licences. The request is shown one field a line,
 * and wraps rather than scrolls, so it reads whole on a phone as at a desk.
 */
export function renderLicensingPage(voice: LicensingPageVoice): string {
  const name = escapeHtml(voice.name);
  const voiceId = escapeHtml(voice.voiceId);
  const uses = INTENDED_USES.map((use) => `<li><code>${use}</code></li>`).join('');
  const representations = LICENSE_REPRESENTATIONS.map((value) => `<code>${value}</code>`).join(', ');
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Licensing: ${name}</title>
<style>body{font-family:system-ui,sans-serif;max-width:46rem;margin:2rem auto;padding:0 1rem;line-height:1.5}code,pre{background:#f4f4f4;padding:.1rem .3rem}pre{padding:.6rem;white-space:pre-wrap;overflow-wrap:anywhere}</style></head>
<body><h1>Licensing a protected voice</h1>
<p>The voice <strong>${name}</strong> (<code>${voiceId}</code>) is registered with the Voice Identity Protection Service. Synthesizing it needs its owner's consent and a licence for your platform that covers the intended use.</p>
<h2>Uses a licence can cover</h2><ul>${uses}</ul>
<h2>The terms a licence states</h2>
<ul><li><code>description</code> (required, up to ${LICENSE_DESCRIPTION_MAX} characters): a reasonably specific description of the intended uses: the work, the medium, the language. A scope alone is not a description.</li>
<li><code>represented_by</code>: who represented the owner in agreeing the terms, one of ${representations} (<code>none</code> when not given). Recorded as stated.</li>
<li><code>compensation</code> (optional, up to ${LICENSE_COMPENSATION_MAX} characters): what the owner is paid, in words.</li>
<li><code>expires_at</code>: a licence lasts at most ten years.</li></ul>
<p>The owner approves the terms as your request states them. Every licence answer carries <code>license_terms_sha256</code>, the SHA-256 of its canonical terms; the gate writes it into the audit entry of every approval the licence backs, and the authorization you embed in synthesized audio carries it, so a file says under which terms it was made.</p>
<h2>How to obtain a licence</h2>
<p>Licences are granted by the voice's owner. This page does not show who the owner is; your request reaches them through the service.</p>
<ol><li>With your platform's API key, request a licence:
<pre>POST /api/v1/voices/${voiceId}/license-requests
X-API-Key: vip_…
{
  "platform_name": "your platform's registered name",
  "scopes": ["audiobook"],
  "expires_at": "2027-06-30T00:00:00Z",
  "description": "Narration of the novel Harbour Lights as an English audiobook, sold as a download and streamed",
  "represented_by": "none",
  "compensation": "what you will pay, in words (optional)",
  "message": "a note to the owner"
}</pre>
One request per voice can be pending for your platform at a time.</li>
<li>The owner approves or declines it. An approval creates the licence on the terms you stated (the owner may shorten its term or narrow its uses); your platform receives it as the <code>license.granted</code> webhook, with the licence token, or reads it with <code>GET /api/v1/license-requests/{request_id}</code>. A decline arrives as <code>license.request_declined</code>.</li>
<li>Your platform's pre-synthesis check is then approved for the licensed uses until the licence expires or the owner revokes it. You may send the token as <code>license_token</code> to tie a check to that licence.</li></ol>
<p>An owner may also grant a licence directly (<code>POST /api/v1/voices/${voiceId}/licenses</code>) and hand you its token. If the owner withdraws consent to synthesis, pending requests are closed and no licence is honoured.</p>
</body></html>
`;
}
