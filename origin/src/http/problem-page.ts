import type { Problem } from '@vip/shared-schema';
import { escapeHtml } from './html.js';

/** The problem a browser gets on a page route: the same title, detail and request id as the JSON. */
export function renderProblemPage(problem: Problem): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(problem.title)}</title>
<style>body{font-family:system-ui,sans-serif;max-width:46rem;margin:2rem auto;padding:0 1rem;line-height:1.5}code{background:#f4f4f4;padding:.1rem .3rem}</style></head>
<body><h1>${escapeHtml(problem.title)}</h1>
<p>${escapeHtml(problem.detail)}</p>
<p>Error <code>${escapeHtml(problem.code)}</code> (HTTP ${problem.status}), request <code>${escapeHtml(problem.request_id)}</code>. The API reference is at <a href="/docs">/docs</a>.</p>
</body></html>
`;
}
