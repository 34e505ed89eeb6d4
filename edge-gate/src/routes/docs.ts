import { renderDocsPage } from '@vip/shared-schema';
import { edgeRoutes } from '@vip/shared-schema/routes/edge';
import type { MountRecord } from '../http/mount-record.js';
import { edgeOpenApiDocument } from './openapi.js';

export function mountDocs(mounts: MountRecord) {
  mounts.serve(edgeRoutes.docs, (c) => c.html(renderDocsPage(edgeOpenApiDocument(c.get('config'), mounts.contracts))));
}
