import { INTENDED_USES } from '@vip/shared-schema';
import { escapeHtml } from '../http/html.js';

export interface LicensingPageVoice {
  voiceId: string;
  name: string;
}

/**
 * The public licensing page of one voice, where the gate's `license_url` leads a platform. It names
 * the voice and the uses a licence can cover and says how a licence is obtained; it shows nothing
 * about the owner, the voice's consent or existing licences.
 */
export function renderLicensingPage(voice: LicensingPageVoice): string {
  const name = escapeHtml(voice.name);
  const voiceId = escapeHtml(voice.voiceId);
  const uses = INTENDED_USES.map((use) => `<li><code>${use}</code></li>`).join('');
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Licensing: ${name}</title>
<style>body{font-family:system-ui,sans-serif;max-width:46rem;margin:2rem auto;padding:0 1rem;line-height:1.5}code,pre{background:#f4f4f4;padding:.1rem .3rem}pre{padding:.6rem;overflow-x:auto}</style></head>
<body><h1>Licensing a protected voice</h1>
<p>The voice <strong>${name}</strong> (<code>${voiceId}</code>) is registered with the Voice Identity Protection Service. Synthesizing it needs its owner's consent and a licence for your platform that covers the intended use.</p>
<h2>Uses a licence can cover</h2><ul>${uses}</ul>
<h2>How to obtain a licence</h2>
<ol><li>Ask the voice's owner for a licence, naming your platform (exactly as your platform is registered with the service), the uses you need and for how long.</li>
<li>The owner grants it with <code>POST /api/v1/voices/${voiceId}/licenses</code> and <code>{"platform_name": "…", "scopes": ["audiobook"], "expires_at": "…"}</code>, and hands you the licence token it returns.</li>
<li>Your platform's pre-synthesis check is then approved for those uses until the licence expires or the owner revokes it. You may send the token as <code>license_token</code> to tie a check to that licence.</li></ol>
</body></html>
`;
}
