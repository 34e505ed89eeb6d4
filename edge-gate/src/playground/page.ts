import { escapeHtml, INTENDED_USES, limits, renderPageShell } from '@vip/shared-schema';
import { edgeRoutes } from '@vip/shared-schema/routes/edge';
import { tlogVerifierKeyRoute } from '@vip/shared-schema/routes/origin/audit';
import { originDocsRoute } from '@vip/shared-schema/routes/origin/http';
import { createApiKeyRoute, createPlatformRoute } from '@vip/shared-schema/routes/origin/platforms';
import { verifyProvenanceRoute } from '@vip/shared-schema/routes/origin/provenance';
import { consolePageRoutes, playgroundPageRoutes } from '@vip/shared-schema/routes/pages';

/** A code sample the page shows with a copy button; `id` ties the button to the sample. */
interface Snippet {
  id: string;
  title: string;
  text: string;
}

function snippets(edgeUrl: string): Snippet[] {
  const demo = `${edgeUrl}${edgeRoutes.demo.path}`;
  const gate = `${edgeUrl}${edgeRoutes.preSynthesisCheck.path}`;
  const body = JSON.stringify({ voice_id: '<voice_id>', platform_name: '<your platform name>', intended_use: INTENDED_USES[1] });
  return [
    { id: 'curl-demo', title: 'curl: the demo (public, no key)', text: `curl -s ${demo}` },
    {
      id: 'curl-gate',
      title: 'curl: the real gate (your platform API key)',
      text: `curl -s -X POST ${gate} \\\n  -H "x-api-key: $VIP_API_KEY" \\\n  -H 'content-type: application/json' \\\n  -d '${body}'`,
    },
    {
      id: 'client-gate',
      title: 'TypeScript: the typed client',
      text: [
        "import { authorizationTokenOf, createGateClient, isBlocked } from '@vip/client'; // npm pack ./client (client/README.md)",
        '',
        `const gate = createGateClient({ baseUrl: '${edgeUrl}', apiKey: process.env.VIP_API_KEY! });`,
        "const result = await gate.preSynthesisCheck({ voice_id, platform_name: 'Example TTS', intended_use: 'audiobook' });",
        'const token = authorizationTokenOf(result); // approved: synthesize, then redeem the token once',
        "if (isBlocked(result)) console.log('blocked:', result.reason, result.license_url);",
      ].join('\n'),
    },
  ];
}

/**
 * "Live call": the demo, called now; then what the real gate needs (a platform's key, which only an
 * administrator issues) and where to read on: the origin's reference of the calls that issue it,
 * the owner console where voice owners license a platform, and the guides in the repository.
 */
function liveCall(originUrl: string): string {
  const keyCall = (route: typeof createPlatformRoute | typeof createApiKeyRoute) =>
    `<a href="${escapeHtml(`${originUrl}${originDocsRoute.path}#/${route.tag}/${route.operationId}`)}"><code>${route.method.toUpperCase()} ${escapeHtml(route.path)}</code></a>`;
  return `<section aria-labelledby="live-title">
<h2 id="live-title">Live call</h2>
<p>Calls the public demo now (${limits.demoPerIpPerHour} calls per hour per address) and shows the status, the rate-limit headers and the body as received.</p>
<button type="button" id="call-demo">Call the demo</button>
<div id="live-result" role="status" aria-live="polite"></div>
<h3 id="real-gate-title">Calling the real gate</h3>
<p id="real-gate">The gate itself needs your platform's API key in <code>X-API-Key</code> (the snippets below).
An administrator of this service registers your platform and issues its key at the origin
(${keyCall(createPlatformRoute)}, then ${keyCall(createApiKeyRoute)}); nothing lets a platform sign itself up.
The gate approves a voice only for a platform its owner licensed: owners sign in at the
<a href="${escapeHtml(`${originUrl}${consolePageRoutes.page.path}`)}">owner console</a> to consent and license.
On your own machine, <code>npm start -- --demo</code> prints a demo key and a licensed voice.
The guides are in the repository: <code>docs/INTEGRATION.md</code> (platforms: the key, the gate, redemption, webhooks)
and <code>docs/OWNER-GUIDE.md</code> (voice owners).</p>
</section>`;
}

/**
 * "Check a file": the file goes from the browser to the origin's public verification (the route
 * answers any origin, and the page's policy lets it call the origin: routes/playground.ts); the
 * receipt the file carries is then checked in the page against the origin's verifier key.
 */
function checkAFile(originUrl: string): string {
  const verifyUrl = `${originUrl}${verifyProvenanceRoute.path}`;
  return `<section id="check-a-file" aria-labelledby="check-title">
<h2 id="check-title">Check a file</h2>
<p>Does an audio file carry its voice owner's consent? Choose or drop a WAV, MP3 or M4A file (at most ${limits.audioMaxBytes / 1024 / 1024} MB).
It is sent to <code>POST ${escapeHtml(verifyUrl)}</code> (public, ${limits.provenanceVerifyAnonymousPerMinute} files per minute per address; judged and not kept),
which reads its Content Credentials, the authorization they carry and the voice in it.
The receipt of the check the file names is then verified here, in your browser.</p>
<div id="drop-zone" class="drop-zone" data-verify-url="${escapeHtml(verifyUrl)}" data-vkey-url="${escapeHtml(`${originUrl}${tlogVerifierKeyRoute.path}`)}">
<label for="check-file">Choose an audio file</label>
<input type="file" id="check-file" accept=".wav,.mp3,.m4a,audio/wav,audio/mpeg,audio/mp4" aria-describedby="drop-hint">
<p class="hint" id="drop-hint">or drop it anywhere in this box.</p>
</div>
<div id="check-result" role="status" aria-live="polite"></div>
</section>`;
}

/**
 * The evaluator playground: what the gate answers, shown with the demo's own bodies (fetched live
 * by the page's script: the gate's production bodies first, the specification's demo shapes after), a live call, and snippets to copy. The demo is public and rate limited
 * per IP, so the page costs one demo call when it opens and one per "Call the demo" press. Then a
 * file check at the origin.
 */
export function renderPlayground(edgeUrl: string, originUrl: string): string {
  const samples = snippets(edgeUrl)
    .map(
      (s) => `<div class="card"><h3 id="${s.id}-title">${escapeHtml(s.title)}</h3>
<pre id="${s.id}" aria-labelledby="${s.id}-title"><code>${escapeHtml(s.text)}</code></pre>
<button type="button" class="secondary" data-copy="${s.id}" aria-describedby="${s.id}-title">Copy</button></div>`,
    )
    .join('\n');
  return renderPageShell({
    title: 'Evaluator playground: Voice Identity Protection',
    brand: 'Voice Identity Protection: playground',
    stylePath: playgroundPageRoutes.style.path,
    scriptPath: playgroundPageRoutes.script.path,
    links: [
      ['API reference', edgeRoutes.docs.path],
      ['OpenAPI', edgeRoutes.openApi.path],
    ],
    mainHtml: `<h1>Try the pre-synthesis gate</h1>
<p>A text-to-speech platform asks the gate before it synthesizes a voice. The gate answers with one of three outcomes:
the voice is not registered, it is registered and your platform may not use it (blocked), or it is licensed (approved, with a single-use authorization token).
Below are the bodies the gate returns, then the specification's demo shapes, a live call, and code to copy.</p>
<section aria-labelledby="outcomes-title">
<h2 id="outcomes-title">The three outcomes</h2>
<p class="hint">Fetched from <code>GET ${escapeHtml(edgeRoutes.demo.path)}</code> when the page opened; ids and the token are examples and demo calls are not audited.</p>
<div id="outcomes" aria-live="polite" data-demo-path="${escapeHtml(edgeRoutes.demo.path)}"><p>Loading the demo…</p></div>
<noscript><p>This part needs JavaScript. Open <a href="${escapeHtml(edgeRoutes.demo.path)}">the demo's JSON</a> instead.</p></noscript>
</section>
${liveCall(originUrl)}
${checkAFile(originUrl)}
<section aria-labelledby="snippets-title">
<h2 id="snippets-title">Snippets</h2>
<p id="copy-status" role="status" class="hint"></p>
${samples}
</section>`,
  });
}
