/**
 * Starts Swagger UI (loaded before this script, as the global `SwaggerUIBundle`) on the OpenAPI
 * document the page names in `data-openapi`, so one script serves the origin's and the edge's page.
 * The reference is read-only: no "Try it out" (the console and the playground are where calls are
 * made), and no call to an outside validator.
 */
declare const SwaggerUIBundle: (options: Record<string, unknown>) => unknown;

const root = document.getElementById('reference');
if (root?.dataset.openapi) {
  SwaggerUIBundle({
    url: root.dataset.openapi,
    domNode: root,
    // Each operation and tag gets an address (#/tag/operationId) that opens it; the contents link to them.
    deepLinking: true,
    docExpansion: 'list',
    // Fields, types and enums first; the generated example is the other tab.
    defaultModelRendering: 'model',
    defaultModelExpandDepth: 6,
    defaultModelsExpandDepth: 0,
    supportedSubmitMethods: [],
    validatorUrl: null,
  });
}
