// A local HTTP server that answers with recorded-shaped responses, for the client's unit tests.
// Plain JS with a .d.mts beside it, so shared-schema's TypeScript program stays free of Node types.
import { createServer } from 'node:http';

/** Starts a server on a free loopback port; `route(request)` picks the answer for each request. */
export async function startRecordedServer(route) {
  const requests = [];
  const server = createServer((req, res) => {
    const chunks = [];
    req.on('data', (chunk) => chunks.push(chunk));
    req.on('end', () => {
      const request = { method: req.method, url: req.url, headers: req.headers, body: Buffer.concat(chunks).toString('utf8') };
      requests.push(request);
      const answer = route(request);
      res.writeHead(answer.status, { 'content-type': answer.contentType ?? 'application/json', ...answer.headers });
      res.end(typeof answer.body === 'string' ? answer.body : JSON.stringify(answer.body));
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
