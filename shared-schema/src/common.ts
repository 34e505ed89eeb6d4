import { z } from 'zod';

export const uuid = z.uuid();
export const isoTimestamp = z.iso.datetime({ offset: true });
/** Lower-case hex SHA-256 digest. */
export const hexDigest = z.string().regex(/^[0-9a-f]{64}$/);
/** Opaque cursor for paginated lists. */
export const cursor = z.string().max(512);
