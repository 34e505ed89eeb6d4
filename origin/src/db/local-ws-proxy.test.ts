import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { type LocalWsProxy, startLocalWsProxy } from './local-ws-proxy.js';

let proxy: LocalWsProxy;
beforeAll(async () => {
  proxy = await startLocalWsProxy();
});
afterAll(() => proxy.close());

const closeCode = (address: string) =>
  new Promise<number>((resolve) => {
    const socket = new WebSocket(`ws://127.0.0.1:${proxy.port}/v1?address=${address}`);
    socket.on('close', (code) => resolve(code));
    socket.on('error', () => {});
  });

describe('local WebSocket-to-TCP proxy', () => {
  it('refuses to relay to anything but a loopback address', async () => {
    expect(await closeCode('10.0.0.1:5432')).toBe(1008);
    expect(await closeCode('example.com:5432')).toBe(1008);
  });
});
