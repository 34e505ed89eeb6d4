import { Agent, request as httpRequest } from 'node:http';
import autocannon from 'autocannon';

export interface LoadRequest {
  method: 'GET' | 'POST';
  path: string;
  headers: Record<string, string>;
  body?: string;
}

export interface LoadResult {
  requests: number;
  requestsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
}

/**
 * Closed-loop load from autocannon: `connections` callers, each sending the next request of
 * `requests` (cycled) as soon as the previous answer arrives. Any non-2xx answer or socket error
 * fails the run: a figure made of 429s or 500s would measure the wrong thing.
 */
export async function measureLoad(
  baseUrl: string,
  requests: LoadRequest[],
  options: { connections: number; durationSeconds: number },
): Promise<LoadResult> {
  const result = await autocannon({
    url: baseUrl,
    connections: options.connections,
    duration: options.durationSeconds,
    requests,
  });
  if (result.non2xx > 0 || result.errors > 0 || result.timeouts > 0) {
    throw new Error(`${baseUrl}: ${result.non2xx} non-2xx answers, ${result.errors} errors, ${result.timeouts} timeouts under load`);
  }
  return {
    requests: result.requests.total,
    requestsPerSecond: result.requests.total / options.durationSeconds,
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
  };
}

/**
 * Latency as one caller sees it: requests one after another on a kept-alive connection for
 * `durationSeconds`, timed with the high-resolution clock (autocannon rounds to whole ms).
 */
export async function measureLatency(
  baseUrl: string,
  requests: LoadRequest[],
  options: { durationSeconds: number },
): Promise<{ samplesMs: number[] }> {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const samplesMs: number[] = [];
  const until = performance.now() + options.durationSeconds * 1000;
  try {
    for (let index = 0; performance.now() < until; index++) {
      const request = requests[index % requests.length]!;
      const started = performance.now();
      const status = await send(agent, new URL(request.path, baseUrl), request);
      samplesMs.push(performance.now() - started);
      if (status < 200 || status > 299) throw new Error(`${baseUrl}${request.path}: answered ${status} during the latency run`);
    }
  } finally {
    agent.destroy();
  }
  return { samplesMs };
}

function send(agent: Agent, url: URL, request: LoadRequest): Promise<number> {
  return new Promise((resolve, reject) => {
    const outgoing = httpRequest(url, { agent, method: request.method, headers: request.headers }, (response) => {
      response.resume();
      response.once('end', () => resolve(response.statusCode ?? 0));
    });
    outgoing.once('error', reject);
    outgoing.end(request.body);
  });
}
