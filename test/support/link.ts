import { connect, createServer, type Socket } from 'node:net';
import { freePort } from '../../launch/free-port.js';

/**
 * A TCP relay on 127.0.0.1 in front of one plane, that a test can cut as a network partition cuts:
 * nothing is refused or reset, bytes simply stop arriving. While cut, new connections are accepted
 * and held unanswered, and what either side of an open connection sends is held back; when the link
 * heals, held connections are made and held bytes delivered, as TCP retransmission would. The
 * callers' own timeouts decide what gives up in between.
 */
export interface CuttableLink {
  /** The address to give the plane on the other side instead of `target`. */
  url: string;
  cut(): void;
  heal(): void;
  close(): Promise<void>;
}

interface Direction {
  from: Socket;
  held: Buffer[];
  to: Socket | null;
}

export async function startCuttableLink(target: string): Promise<CuttableLink> {
  const { hostname, port: targetPort } = new URL(target);
  const port = await freePort();
  let cut = false;
  const directions = new Set<Direction>();
  const waiting: (() => void)[] = [];
  const sockets = new Set<Socket>();

  const flush = (direction: Direction) => {
    if (cut || !direction.to) return;
    for (const chunk of direction.held.splice(0)) direction.to.write(chunk);
  };
  const relay = (from: Socket, to: Socket | null): Direction => {
    const direction: Direction = { from, held: [], to };
    directions.add(direction);
    from.once('close', () => directions.delete(direction));
    from.on('data', (chunk: Buffer) => {
      direction.held.push(chunk);
      flush(direction);
    });
    return direction;
  };

  const server = createServer((client) => {
    sockets.add(client);
    const outbound = relay(client, null);
    const open = () => {
      // Its caller gave up during the cut: its connection never got through.
      if (client.destroyed) return;
      const upstream = connect(Number(targetPort), hostname === 'localhost' ? '127.0.0.1' : hostname);
      sockets.add(upstream);
      outbound.to = upstream;
      relay(upstream, client);
      upstream.once('connect', () => flush(outbound));
      const end = () => {
        client.destroy();
        upstream.destroy();
      };
      upstream.on('error', end).on('close', end);
      client.on('close', end);
    };
    client.on('error', () => client.destroy());
    if (cut) waiting.push(open);
    else open();
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${port}`,
    cut: () => {
      cut = true;
    },
    heal: () => {
      cut = false;
      for (const open of waiting.splice(0)) open();
      for (const direction of directions) if (!direction.from.destroyed) flush(direction);
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
