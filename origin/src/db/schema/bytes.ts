import { customType } from 'drizzle-orm/pg-core';

/** bytea as a Buffer from either driver (PGlite answers a Uint8Array, node-postgres a Buffer). */
export const bytes = customType<{ data: Buffer; driverData: Uint8Array | string }>({
  dataType: () => 'bytea',
  fromDriver: (value) => (typeof value === 'string' ? Buffer.from(value.replace(/^\\x/, ''), 'hex') : Buffer.from(value)),
});
