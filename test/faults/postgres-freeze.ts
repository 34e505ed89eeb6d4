import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { PrivatePostgres } from './private-postgres.js';

/**
 * Freezes a private PostgreSQL server as a stalled host would (SIGSTOP to the postmaster and every
 * process it started: backends, checkpointer, walwriter…): connections stay open, new ones are
 * accepted by the kernel into the listen queue, and nothing answers. Returns the thaw (SIGCONT).
 */
export function freezePostgres(postgres: PrivatePostgres): () => void {
  const pids = clusterPids(postgres.dataDir);
  for (const pid of pids) process.kill(pid, 'SIGSTOP');
  let thawed = false;
  return () => {
    if (thawed) return;
    thawed = true;
    for (const pid of pids) {
      try {
        process.kill(pid, 'SIGCONT');
      } catch {
        // Gone meanwhile: nothing to thaw.
      }
    }
  };
}

/** The postmaster (first line of postmaster.pid) and its children, read from /proc. */
function clusterPids(dataDir: string): number[] {
  const postmaster = Number(readFileSync(join(dataDir, 'postmaster.pid'), 'utf8').split('\n', 1)[0]);
  if (!Number.isInteger(postmaster) || postmaster <= 0) throw new Error(`no postmaster pid in ${dataDir}/postmaster.pid`);
  const children = readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .map(Number)
    .filter((pid) => parentOf(pid) === postmaster);
  return [postmaster, ...children];
}

function parentOf(pid: number): number | null {
  try {
    // `pid (comm) state ppid …`: the command may hold spaces and parentheses, so read after the last ')'.
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
  } catch {
    return null;
  }
}
