import { connect } from 'node:net';
import { type AddressInfo, WebSocketServer } from 'ws';

/**
 * The Neon driver speaks Postgres over a WebSocket. Neon terminates it in the cloud; a plain local
 * Postgres server needs this small relay: one WebSocket in, one TCP connection out. It only ever
 * forwards to loopback addresses, so it cannot be used to reach anything else.
 */
export interface LocalWsProxy {
  port: number;
  close(): Promise<void>;
}

const LOOPBACK_TARGET = /^(127\.\d{1,3}\.\d{1,3}\.\d{1,3}|localhost|\[?::1\]?):(\d{1,5})$/;

export async function startLocalWsProxy(): Promise<LocalWsProxy> {
  const server = new WebSocketServer({ host: '127.0.0.1', port: 0, path: '/v1' });
  server.on('connection', (socket, request) => {
    const address = new URL(request.url ?? '', 'ws://proxy').searchParams.get('address') ?? '';
    const target = LOOPBACK_TARGET.exec(address);
    if (!target) {
      socket.close(1008, 'only loopback targets');
      return;
    }
    const host = address.slice(0, address.length - target[2]!.length - 1).replace(/^\[|\]$/g, '');
    const tcp = connect({ host, port: Number(target[2]) });
    tcp.setNoDelay(true);
    // Bytes sent before the TCP connection opens are queued by the socket itself.
    socket.on('message', (data: Buffer | ArrayBuffer | Buffer[]) => {
      tcp.write(Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data as ArrayBuffer));
    });
    tcp.on('data', (chunk) => socket.send(chunk));
    socket.on('close', () => tcp.end());
    socket.on('error', () => tcp.destroy());
    tcp.on('close', () => socket.close());
    tcp.on('error', () => socket.terminate());
  });
  await new Promise<void>((resolve, reject) => {
    server.once('listening', resolve);
    server.once('error', reject);
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        for (const client of server.clients) client.terminate();
        server.close(() => resolve());
      }),
  };
}
