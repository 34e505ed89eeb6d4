import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Where `npm start` serves the planes and keeps their data; read by the seed too (scripts/seed.ts). */
export interface PlaneSettings {
  originPort: number;
  edgePort: number;
  dataDir: string;
}

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** `ORIGIN_PORT`, `EDGE_PORT` and `DATA_DIR`, with `npm start`'s defaults. */
export function planeSettings(env: Record<string, string | undefined> = process.env): PlaneSettings {
  return {
    originPort: Number(env.ORIGIN_PORT ?? 8080),
    edgePort: Number(env.EDGE_PORT ?? 8787),
    dataDir: resolve(env.DATA_DIR ?? join(root, '.data')),
  };
}
