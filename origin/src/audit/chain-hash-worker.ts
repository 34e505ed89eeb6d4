import { parentPort } from 'node:worker_threads';
import { checkPage, type RawChainPage } from './chain-page.js';

/** The chain hashing thread: checks the pages verification reads, while the main thread reads the next ones. */
const port = parentPort!;
port.on('message', async ({ id, page }: { id: number; page: RawChainPage }) => {
  port.postMessage({ id, check: await checkPage(page) });
});
