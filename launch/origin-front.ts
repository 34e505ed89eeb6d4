/**
 * The one origin address of `npm start -- --replicas N`: a small round-robin front on ORIGIN_PORT
 * that forwards each request to one of the N origin replicas, as the load balancer of a production
 * deployment does. Everyone who reaches "the origin" reaches it here: owners and admins, the edge
 * (its ORIGIN_URL: the JWKS for Bearer callers, the licensing page it links to) and the seed. The
 * replicas themselves call the edge directly (EDGE_URL), so nothing in that direction passes here.
 *
 * Loopback only, like the replicas behind it: every caller is 127.0.0.1 whichever way it comes, so
 * the front adds no X-Forwarded-For and the replicas keep TRUST_PROXY off.
 *
 * A replica that refuses the connection (stopped, crashed, not listening yet) is skipped for
 * `RESTING_MS` and the request goes to the next one: nothing of it was sent, so even a POST is safe to
 * send elsewhere. A replica that fails after the request reached it cannot be retried (the request
 * may have taken effect): the caller gets `503 unavailable` with Retry-After if no answer had started,
 * or a cut connection if one had, as a real load balancer does.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, request, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { limits, PROBLEM_CONTENT_TYPE, ProblemError, REQUEST_ID_HEADER, toProblem } from '@vip/shared-schema';
import { clientErrorResponse } from '../origin/src/http/error-handler.js';

/** How long a replica that refused a connection is left out of the rotation before it is tried again. */
export const RESTING_MS = 1_000;

/** Hop-by-hop headers (RFC 9110 §7.6.1): they describe one connection and are not forwarded. */
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'te', 'trailer', 'upgrade']);

export interface OriginFront {
  url: string;
  close(): Promise<void>;
}

function forwardable(headers: IncomingMessage['headers']): Record<string, string | string[]> {
  const kept: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(headers)) if (value !== undefined && !HOP_BY_HOP.has(name)) kept[name] = value;
  return kept;
}

function answerUnavailable(req: IncomingMessage, res: ServerResponse, detail: string): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  const requestId = randomUUID();
  const problem = new ProblemError('unavailable', detail);
  res
    .writeHead(problem.status, { 'content-type': PROBLEM_CONTENT_TYPE, 'retry-after': '1', [REQUEST_ID_HEADER]: requestId })
    .end(JSON.stringify(toProblem(problem, (req.url ?? '/').split('?')[0]!, requestId)));
}

/** Listens on 127.0.0.1:`port` and forwards to the replicas on 127.0.0.1:`replicaPorts`. */
export async function startOriginFront(port: number, replicaPorts: readonly number[]): Promise<OriginFront> {
  const restingUntil = new Map<number, number>(replicaPorts.map((p) => [p, 0]));
  let next = 0;
  /** The replicas to try for one request, in order: the rotation's next first, resting ones last. */
  const candidates = () => {
    const start = next++ % replicaPorts.length;
    const order = replicaPorts.map((_, i) => replicaPorts[(start + i) % replicaPorts.length]!);
    const now = Date.now();
    return [...order.filter((p) => restingUntil.get(p)! <= now), ...order.filter((p) => restingUntil.get(p)! > now)];
  };

  const forward = (req: IncomingMessage, res: ServerResponse, untried: number[]) => {
    const target = untried.shift();
    if (target === undefined) {
      answerUnavailable(req, res, 'No origin replica is serving.');
      return;
    }
    let connected = false;
    // A connection of its own per request (no pooling): a refused connect then always means nothing was sent.
    const upstream = request({
      host: '127.0.0.1',
      port: target,
      method: req.method,
      path: req.url,
      headers: { ...forwardable(req.headers), connection: 'close' },
      agent: false,
    });
    upstream.on('socket', (socket: Socket) => {
      socket.once('connect', () => {
        connected = true;
        restingUntil.set(target, 0);
        req.pipe(upstream);
      });
    });
    upstream.on('response', (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.statusMessage, forwardable(answer.headers));
      answer.pipe(res);
      answer.on('error', () => res.destroy());
      answer.on('aborted', () => res.destroy());
    });
    upstream.on('error', (error: NodeJS.ErrnoException) => {
      if (!connected && error.code === 'ECONNREFUSED') {
        restingUntil.set(target, Date.now() + RESTING_MS);
        forward(req, res, untried);
        return;
      }
      answerUnavailable(
        req,
        res,
        'The origin replica serving this request stopped before it answered; the request may or may not have taken effect.',
      );
    });
    // The caller went away: so does the request to the replica.
    res.on('close', () => {
      if (!res.writableFinished) upstream.destroy();
    });
  };

  const server = createServer({ maxHeaderSize: limits.headersMaxBytes }, (req, res) => forward(req, res, candidates()));
  // Node's parser refused the request: answered as the origin answers it, so the front changes no answer.
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Socket) => {
    if (error.code === 'ECONNRESET' || socket.destroyed) return;
    if (!socket.writable) socket.destroy();
    else socket.end(clientErrorResponse(error, randomUUID()).raw);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve());
  });
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
