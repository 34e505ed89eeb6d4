import { PROBLEM_CODES } from './problem.js';

const escapeHtml = (text: string) =>
  text.replace(/[&<>"']/g, (ch) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[ch] ?? ch);

interface Operation {
  operationId: string;
  summary: string;
  tags: string[];
  security: Record<string, unknown>[];
  parameters?: { name: string; in: string; required: boolean }[];
  requestBody?: { content: Record<string, { schema: unknown }> };
  responses: Record<string, { description: string }>;
}

/** A self-contained HTML page (no scripts, no external assets) rendered from an OpenAPI document. */
export function renderDocsPage(document: Record<string, unknown>): string {
  const info = document.info as { title: string; version: string; description: string };
  const paths = document.paths as Record<string, Record<string, Operation>>;
  const sections = Object.entries(paths).flatMap(([path, methods]) =>
    Object.entries(methods).map(([method, op]) => {
      const auth = op.security.length ? op.security.map((s) => Object.keys(s)[0]).join(' or ') : 'public';
      const params = (op.parameters ?? [])
        .map((p) => `<li><code>${escapeHtml(p.name)}</code> (${p.in}${p.required ? ', required' : ''})</li>`)
        .join('');
      const body = op.requestBody
        ? Object.entries(op.requestBody.content)
            .map(([type, { schema }]) => `<p>Body <code>${type}</code></p><pre>${escapeHtml(JSON.stringify(schema, null, 2))}</pre>`)
            .join('')
        : '';
      const responses = Object.entries(op.responses)
        .map(([status, r]) => `<li><b>${status}</b> ${escapeHtml(r.description)}</li>`)
        .join('');
      return `<section id="${escapeHtml(op.operationId)}"><h3><span class="m">${method.toUpperCase()}</span> <code>${escapeHtml(path)}</code></h3>
<p>${escapeHtml(op.summary)} · auth: ${escapeHtml(auth)}</p>${params ? `<ul>${params}</ul>` : ''}${body}<ul>${responses}</ul></section>`;
    }),
  );
  const problems = Object.entries(PROBLEM_CODES)
    .map(
      ([code, { status, title }]) =>
        `<tr id="problem-${code}"><td><code>${code}</code></td><td>${status}</td><td>${escapeHtml(title)}</td></tr>`,
    )
    .join('');
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(info.title)}</title>
<style>body{font:15px/1.5 system-ui,sans-serif;max-width:960px;margin:2rem auto;padding:0 1rem}pre{background:#f5f5f5;padding:.5rem;overflow:auto;font-size:12px}section{border-top:1px solid #ddd;padding:.5rem 0}.m{background:#222;color:#fff;padding:0 .4rem;border-radius:3px}</style></head>
<body><h1>${escapeHtml(info.title)} <small>${escapeHtml(info.version)}</small></h1><p>${escapeHtml(info.description)}</p>
<p>Machine-readable: <a href="/openapi.json">/openapi.json</a> (OpenAPI 3.1). Errors are <code>application/problem+json</code> (RFC 9457).</p>
${sections.join('\n')}
<h2>Problem codes</h2><table><tr><th>code</th><th>status</th><th>title</th></tr>${problems}</table></body></html>`;
}
