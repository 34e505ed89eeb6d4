/**
 * Starts Swagger UI (loaded before this script, as the global `SwaggerUIBundle`) on the OpenAPI
 * document the page names in `data-openapi`, so one script serves the origin's and the edge's page.
 * The reference is read-only: no "Try it out" (the console and the playground are where calls are
 * made), and no call to an outside validator.
 */
import { PROBLEM_CODES_ANCHOR, PROBLEM_CODES_EXTENSION } from '@vip/shared-schema/docs-anchors';

declare const SwaggerUIBundle: (options: Record<string, unknown>) => unknown;

/** The parts of Swagger UI's plugin system this page uses. */
interface RendererSystem {
  React: { createElement(type: unknown, props: Record<string, unknown> | null, ...children: unknown[]): unknown };
  getComponent(name: string, container?: boolean): unknown;
  specSelectors: { specJson(): { get(key: string): unknown } };
}

/**
 * Draws the document's problem-code table after the operations, where a reader looks up a code
 * an operation named; the contents link to it. The table is Markdown, rendered (and sanitised)
 * by the renderer's own Markdown component, like the rest of the document's text.
 */
const problemCodesAfterOperations = () => ({
  wrapComponents: {
    operations:
      (Operations: unknown, system: RendererSystem) =>
      (props: Record<string, unknown>): unknown => {
        const { createElement } = system.React;
        const table = system.specSelectors.specJson().get(PROBLEM_CODES_EXTENSION);
        return createElement(
          'div',
          null,
          createElement(Operations, props),
          typeof table === 'string'
            ? createElement(
                'section',
                { id: PROBLEM_CODES_ANCHOR, className: 'problem-codes', 'aria-labelledby': `${PROBLEM_CODES_ANCHOR}-title` },
                createElement('h2', { id: `${PROBLEM_CODES_ANCHOR}-title` }, 'Problem codes'),
                createElement(system.getComponent('Markdown', true), { source: table }),
              )
            : null,
        );
      },
  },
});

/**
 * A read-only reference offers no "Authorize" dialog (its button, each operation's lock) and no
 * choice of server: both only serve calls made from the page, which it does not make. Each
 * operation's description says which credentials it takes.
 */
const withoutCallControls = () => ({
  components: { AuthorizeBtnContainer: () => null, authorizeOperationBtn: () => null, ServersContainer: () => null },
});

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
    plugins: [problemCodesAfterOperations, withoutCallControls],
    supportedSubmitMethods: [],
    validatorUrl: null,
  });
}
