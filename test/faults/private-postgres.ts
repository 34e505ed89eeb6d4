import { execFile } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freePort } from '../../launch/free-port.js';

const run = promisify(execFile);

/** The machine's PostgreSQL 15 (CI installs it, and builds pgvector for it in .ci/provision-postgres.sh). */
const BIN = process.env.PG_BIN_DIR ?? '/usr/lib/postgresql/15/bin';
const VECTOR_CONTROL = process.env.PG_VECTOR_CONTROL ?? '/usr/share/postgresql/15/extension/vector.control';

/** Why a private server cannot be made here, or null when it can. */
export function privatePostgresUnavailable(): string | null {
  for (const tool of ['initdb', 'pg_ctl']) if (!existsSync(join(BIN, tool))) return `${join(BIN, tool)} is not installed`;
  if (!existsSync(VECTOR_CONTROL))
    return `pgvector is not installed for PostgreSQL 15 (${VECTOR_CONTROL}); .ci/provision-postgres.sh builds it`;
  return null;
}

export interface PrivatePostgres {
  url: string;
  port: number;
  /** The cluster's data directory (its postmaster.pid names the server process). */
  dataDir: string;
  /** `pg_ctl restart -m fast`: active sessions are ended, the server is back when this resolves. */
  restart(): Promise<void>;
  /** `pg_ctl stop -m fast`. */
  stop(): Promise<void>;
  start(): Promise<void>;
  /** Stops the server (immediate) and deletes its files. */
  destroy(): Promise<void>;
}

/**
 * A throw-away PostgreSQL server of its own (initdb into a temporary folder, a free port on 127.0.0.1,
 * trust authentication), so a test may stop and restart it without touching the machine's server
 * that other tests use. Run as the `postgres` user when this process is root (initdb refuses root).
 */
export async function startPrivatePostgres(): Promise<PrivatePostgres> {
  const dir = mkdtempSync(join(tmpdir(), 'vip-pg-'));
  const data = join(dir, 'data');
  const port = await freePort();
  const asRoot = process.getuid?.() === 0;
  if (asRoot) {
    const { stdout } = await run('id', ['-u', 'postgres']);
    const { stdout: gid } = await run('id', ['-g', 'postgres']);
    chownSync(dir, Number(stdout.trim()), Number(gid.trim()));
  }
  const pg = (tool: string, args: string[]) =>
    asRoot ? run('runuser', ['-u', 'postgres', '--', join(BIN, tool), ...args]) : run(join(BIN, tool), args);
  await pg('initdb', ['-D', data, '-A', 'trust', '-U', 'postgres', '-E', 'UTF8', '--no-instructions']);
  const options = `-p ${port} -c listen_addresses=127.0.0.1 -c unix_socket_directories=${dir} -c max_connections=40`;
  const ctl = (args: string[]) => pg('pg_ctl', ['-D', data, '-l', join(dir, 'server.log'), '-w', '-t', '60', ...args]);
  await ctl(['-o', options, 'start']);
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    port,
    dataDir: data,
    restart: async () => {
      await ctl(['-m', 'fast', '-o', options, 'restart']);
    },
    stop: async () => {
      await ctl(['-m', 'fast', 'stop']);
    },
    start: async () => {
      await ctl(['-o', options, 'start']);
    },
    destroy: async () => {
      await ctl(['-m', 'immediate', 'stop']).catch(() => undefined);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
