import { renderDocsPage, type ServiceIndex } from '@vip/shared-schema';
import { edgeRoutes } from '@vip/shared-schema/routes/edge';
import type { MountRecord } from '../http/mount-record.js';
import { EDGE_TITLE, edgeOpenApiDocument } from './openapi.js';

export function mountDocs(mounts: MountRecord) {
  mounts.serve(edgeRoutes.docs, (c) => c.html(renderDocsPage(edgeOpenApiDocument(c.get('config'), mounts.contracts))));
  mounts.serve(edgeRoutes.index, (c) =>
    c.json({
      service: EDGE_TITLE,
      docs: edgeRoutes.docs.path,
      openapi: edgeRoutes.openApi.path,
    } satisfies ServiceIndex),
  );
}
