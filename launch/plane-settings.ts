import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Where `npm start` serves the planes and keeps their data; read by the seed too (launch/demo-seed.ts). */
export interface PlaneSettings {
  originPort: number;
  edgePort: number;
  dataDir: string;
  /**
   * `npm start -- --replicas N` (N ≥ 2): the ports of the N origin replicas, which serve behind one
   * front on `originPort` (launch/origin-front.ts). Unset or one port: the origin itself on `originPort`.
   */
  replicaPorts?: number[];
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

/** Most replicas `--replicas` starts: each holds its own database pool (10 connections) and voiceprint threads. */
export const MAX_REPLICAS = 16;

/**
 * `--replicas N` among `npm start`'s arguments: 1 without it. Replica i (1…N) listens on
 * ORIGIN_PORT + i, behind the front on ORIGIN_PORT. Throws, saying what to do, on a bad count.
 */
export function replicaCount(args: readonly string[]): number {
  const at = args.findIndex((arg) => arg === '--replicas' || arg.startsWith('--replicas='));
  if (at < 0) return 1;
  const text = args[at]!.includes('=') ? args[at]!.slice('--replicas='.length) : args[at + 1];
  const count = Number(text);
  if (!text || !Number.isInteger(count) || count < 1 || count > MAX_REPLICAS) {
    throw new Error(`--replicas takes a whole number from 1 to ${MAX_REPLICAS} (got ${text === undefined ? 'nothing' : `"${text}"`})`);
  }
  return count;
}
