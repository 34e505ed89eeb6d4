import { INTERNAL_SYNC_PATH, type SyncUpdate, signInternalRequest } from '@vip/shared-schema';
import type { LoadRequest } from './load.js';

export const GATE_PATH = '/api/v1/protect/pre-synthesis-check';

/** A platform the benches make up: its API key and name, pushed to the edge index by syncIndex. */
export interface Caller {
  apiKey: string;
  platform: string;
}

export const gateRequest = (caller: Caller, voiceId: string): LoadRequest => ({
  method: 'POST',
  path: GATE_PATH,
  headers: { 'content-type': 'application/json', 'x-api-key': caller.apiKey },
  body: JSON.stringify({ voice_id: voiceId, platform_name: caller.platform, intended_use: 'audiobook' }),
});

/** The origin's way in: signed batches on the internal sync route (at most 500 updates each). */
export async function syncIndex(gateUrl: string, internalSecret: string, updates: SyncUpdate[]): Promise<void> {
  for (let start = 0; start < updates.length; start += 500) {
    const body = JSON.stringify({ updates: updates.slice(start, start + 500) });
    const signature = await signInternalRequest(internalSecret, 'POST', INTERNAL_SYNC_PATH, body, Date.now() / 1000);
    const response = await fetchOnceMore(`${gateUrl}${INTERNAL_SYNC_PATH}`, {
      method: 'POST',
      headers: { ...signature, 'content-type': 'application/json' },
      body,
    });
    if (!response.ok) throw new Error(`index sync answered ${response.status}: ${await response.text()}`);
  }
}

/** A Worker that was just (re)started may drop the first connection; one retry covers it. */
export async function fetchOnceMore(url: string, init: RequestInit): Promise<Response> {
  try {
    return await fetch(url, init);
  } catch {
    return fetch(url, init);
  }
}
