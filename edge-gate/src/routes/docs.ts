import { docsSecurityHeaders, renderDocsPage, type ServiceIndex } from '@vip/shared-schema';
import { edgeRoutes } from '@vip/shared-schema/routes/edge';
import type { MountRecord } from '../http/mount-record.js';
import { EDGE_TITLE } from './openapi.js';

/**
 * The edge's reference renders the edge's own document with the renderer the origin serves
 * (shared-schema/src/docs-page.ts says why the Worker does not carry it).
 */
export function mountDocs(mounts: MountRecord) {
  mounts.serve(edgeRoutes.docs, (c) => {
    const assetOrigin = new URL(c.get('config').originUrl).origin;
    const page = renderDocsPage({ title: EDGE_TITLE, assetOrigin, openApiPath: edgeRoutes.openApi.path });
    return c.body(page, 200, { ...docsSecurityHeaders(assetOrigin), 'content-type': 'text/html; charset=utf-8' });
  });
  mounts.serve(edgeRoutes.index, (c) =>
    c.json({
      service: EDGE_TITLE,
      docs: edgeRoutes.docs.path,
      openapi: edgeRoutes.openApi.path,
    } satisfies ServiceIndex),
  );
}
