import { escapeHtml, PAGE_SECURITY_HEADERS, renderHtmlDocument } from './pages.js';
import { docsPageRoutes, faviconRoute } from './routes/pages.js';

/**
 * The `/docs` page of both planes: Swagger UI (the `swagger-ui-dist` package) rendering the plane's
 * own `/openapi.json` in the browser, so every request and response field, type, enum and example
 * and each route's problem codes are shown from the same document clients generate code from.
 * The renderer's files are served by the origin from the package (no CDN); the edge's page loads
 * them from the origin rather than carrying 1.7 MB of renderer in the gate's Worker (docs/DECISIONS.md,
 * "The API reference pages").
 */

/** The element the renderer fills; it names the document to render, so the start-up script holds no address. */
export const DOCS_ROOT_ID = 'reference';

export interface DocsPage {
  title: string;
  /** Where the page's four assets are served: '' for the same origin, else an origin like `https://origin.example.com`. */
  assetOrigin: string;
  /** Same-origin path of the OpenAPI document to render. */
  openApiPath: string;
}

/** The page: a shell for the renderer, no inline script or style; without JavaScript it points to the document. */
export function renderDocsPage(page: DocsPage): string {
  const asset = (path: string) => escapeHtml(`${page.assetOrigin}${path}`);
  return renderHtmlDocument(
    page.title,
    `<link rel="icon" href="${faviconRoute.path}" type="image/svg+xml">
<link rel="stylesheet" href="${asset(docsPageRoutes.rendererStyle.path)}">
<link rel="stylesheet" href="${asset(docsPageRoutes.style.path)}">
<script src="${asset(docsPageRoutes.renderer.path)}" defer></script>
<script src="${asset(docsPageRoutes.script.path)}" defer></script>`,
    `<main id="${DOCS_ROOT_ID}" data-openapi="${escapeHtml(page.openApiPath)}">
<h1>${escapeHtml(page.title)}</h1>
<noscript><p>This reference is drawn by a script. The same content is in <a href="${escapeHtml(page.openApiPath)}">the OpenAPI document</a>.</p></noscript>
</main>`,
  );
}

/**
 * The pages' policy (pages.ts) with two differences the renderer needs: scripts and styles may come
 * from the origin that serves the renderer, and Trusted Types are not required, because Swagger UI
 * writes the Markdown it has rendered (and sanitised with DOMPurify) through innerHTML.
 * Still no inline script or style, no eval, no other host.
 */
export function docsContentSecurityPolicy(assetOrigin: string): string {
  const source = assetOrigin === '' ? "'self'" : `'self' ${assetOrigin}`;
  return [
    "default-src 'none'",
    `script-src ${source}`,
    `style-src ${source}`,
    "connect-src 'self'",
    "img-src 'self' data:",
    "form-action 'none'",
    "base-uri 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
}

/** Headers of the page and of its assets; the assets may be loaded by the edge's page, from another origin. */
export function docsSecurityHeaders(assetOrigin: string): Record<string, string> {
  return {
    ...PAGE_SECURITY_HEADERS,
    'content-security-policy': docsContentSecurityPolicy(assetOrigin),
    'cross-origin-resource-policy': 'cross-origin',
    'permissions-policy': 'microphone=(), camera=(), geolocation=(), payment=()',
  };
}
