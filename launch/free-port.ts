import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';

/**
 * The lowest port the OS hands out to outgoing connections and to listen(0) (Linux's
 * ip_local_port_range; 32768 elsewhere is the common default).
 */
function ephemeralPortsFrom(): number {
  try {
    return Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]) || 32768;
  } catch {
    return 32768;
  }
}

const LOWEST = 20000;

/** Whether a process could bind `port` on 127.0.0.1 now: false when anything listens there (any address that covers it). */
export const portIsFree = (port: number) =>
  new Promise<boolean>((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });

/**
 * A TCP port on 127.0.0.1 that nothing listens on right now, for a process started next to bind.
 * It is drawn below the ephemeral range: a port the OS picked (listen(0)) could be handed to some
 * outgoing connection in the moment between this check and the other process's bind, and a busy
 * test run opens hundreds of those.
 */
export async function freePort(): Promise<number> {
  const span = Math.max(1, ephemeralPortsFrom() - LOWEST);
  for (let attempt = 0; attempt < 100; attempt++) {
    const port = LOWEST + Math.floor(Math.random() * span);
    if (await portIsFree(port)) return port;
  }
  throw new Error(`no free port between ${LOWEST} and ${LOWEST + span}`);
}
