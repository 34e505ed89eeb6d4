import { defineRoute, type RouteContract } from '../contract.js';

/** The browser pages of both planes: public, HTML and their own script and style sheet (no inline code). */

const page = (path: string, operationId: string, summary: string, contentType: string): RouteContract =>
  defineRoute({
    method: 'get',
    path,
    operationId,
    summary,
    tag: 'pages',
    auth: ['none'],
    success: { status: 200, description: summary, contentType },
    problems: [],
  });

const HTML = 'text/html; charset=utf-8';
const SCRIPT = 'text/javascript; charset=utf-8';
const STYLE = 'text/css; charset=utf-8';

/**
 * Served by both planes, where a browser asks for it on its own: an SVG (pages.ts's FAVICON_SVG)
 * under the conventional name, which browsers read by its content type; without it every page
 * visit logs a 404.
 */
export const faviconRoute = page('/favicon.ico', 'favicon', "The service's icon", 'image/svg+xml');

/** Served by the origin. */
export const consolePageRoutes = {
  page: page(
    '/console',
    'ownerConsole',
    'The owner console: account, consent, enrollment, voices, licences, audit timeline, webhooks',
    HTML,
  ),
  script: page('/console/console.js', 'ownerConsoleScript', "The owner console's script", SCRIPT),
  style: page('/console/console.css', 'ownerConsoleStyle', "The owner console's style sheet", STYLE),
} as const;

/** Served by the edge. */
export const playgroundPageRoutes = {
  page: page('/playground', 'evaluatorPlayground', "The evaluator playground: the demo's outcomes, a live call and snippets", HTML),
  script: page('/playground/playground.js', 'evaluatorPlaygroundScript', "The playground's script", SCRIPT),
  style: page('/playground/playground.css', 'evaluatorPlaygroundStyle', "The playground's style sheet", STYLE),
} as const;

/**
 * The `/docs` page's assets, served by the origin (docs-page.ts): Swagger UI's bundle and style sheet
 * as the `swagger-ui-dist` package ships them, and the start-up script and style that configure it.
 */
export const docsPageRoutes = {
  renderer: page('/docs/assets/swagger-ui-bundle.js', 'docsRenderer', 'Swagger UI, the renderer of the API reference', SCRIPT),
  rendererStyle: page('/docs/assets/swagger-ui.css', 'docsRendererStyle', "Swagger UI's style sheet", STYLE),
  script: page('/docs/assets/docs.js', 'docsScript', 'Starts the renderer on the OpenAPI document the page names', SCRIPT),
  style: page('/docs/assets/docs.css', 'docsStyle', "The reference's own style sheet", STYLE),
} as const;
