import { ProblemError, type SyncAck, type SyncUpdate } from '@vip/shared-schema';
import { edgeRoutes } from '@vip/shared-schema/routes/edge';
import { applyApiKeyUpdate } from '../edge-index/api-keys.js';
import { requireInternalSignature } from '../http/internal-signature.js';
import { internalBodyLimit, parseJsonText } from '../http/json-body.js';
import type { MountRecord } from '../http/mount-record.js';
import { applyKeyUpdate } from '../objects/caller-home-client.js';
import { applyVoiceUpdate } from '../objects/voice-home-client.js';

const contract = edgeRoutes.indexSync;

/**
 * An API key goes to the KV index (who the key is) and to its home shard (whether it is revoked,
 * authoritative: the gate's copy of the index may be older).
 */
async function applyUpdate(env: Env, update: SyncUpdate): Promise<'applied' | 'stale'> {
  if (update.kind === 'api_key') {
    const outcomes = await Promise.all([applyKeyUpdate(env, update), applyApiKeyUpdate(env.EDGE_INDEX, update)]);
    return outcomes.includes('applied') ? 'applied' : 'stale';
  }
  return applyVoiceUpdate(env, update);
}

/** A voice record must sit under its own id, or it would land in another voice's home. */
function refuseMisaddressedVoices(updates: SyncUpdate[]): void {
  const errors = updates.flatMap((update, index) =>
    update.kind === 'voice' && update.record && update.record.voice_id !== update.voice_id
      ? [{ field: `body.updates.${index}.record.voice_id`, message: 'differs from the update voice_id' }]
      : [],
  );
  if (errors.length) throw new ProblemError('validation_failed', 'The request body is invalid.', { errors });
}

/** Origin -> edge index sync (docs/ARCHITECTURE.md#consistency): signature first, then the batch, version-ordered. */
export function mountInternalSync(mounts: MountRecord) {
  mounts.serve(contract, internalBodyLimit, async (c) => {
    const raw = await c.req.text();
    await requireInternalSignature(c, raw);
    const batch = parseJsonText(c, raw, contract.body);
    refuseMisaddressedVoices(batch.updates);
    const outcomes = await Promise.all(batch.updates.map((update) => applyUpdate(c.env, update)));
    const applied = outcomes.filter((outcome) => outcome === 'applied').length;
    return c.json({ applied, stale: outcomes.length - applied } satisfies SyncAck);
  });
}
