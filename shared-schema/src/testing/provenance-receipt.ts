import { generateKeyPairSync, randomUUID, sign } from 'node:crypto';
import type { AuditEntry } from '../audit.js';
import { canonicalJson } from '../canonical.js';
import type { AuditReceipt } from '../routes/origin/audit.js';
import { checkpointText, formatTlogProof, noteKeyId, noteSignatureLine, noteVerifierKey, rfc6962LeafHash } from '../tlog.js';

/**
 * A one-entry transparency log made in a test, with a real Ed25519 checkpoint signature: a receipt
 * for an approved gate decision, as `GET …/receipt` would answer it, and the log's verifier key.
 * Cross-plane tests use the service's own log instead.
 */
export async function testApprovalReceipt(fields: Partial<AuditEntry> = {}, origin = 'vip.test/audit') {
  const entry: Omit<AuditEntry, 'entry_hash'> = {
    check_id: randomUUID(),
    kind: 'gate.decision',
    decided_at: '2026-11-26T05:00:00.000Z',
    voice_id: randomUUID(),
    platform_name: 'Acme TTS',
    intended_use: 'audiobook',
    decision: 'allow',
    action: 'authorized',
    reason: null,
    license_status: 'licensed',
    consent_status: 'active',
    caller_type: 'api_key',
    caller_id: 'key-1',
    token_jti: randomUUID(),
    seq: 1,
    recorded_at: '2026-11-26T05:00:00.100Z',
    prev_hash: '0'.repeat(64),
    ...fields,
  };
  const leaf = canonicalJson(entry);
  const pair = generateKeyPairSync('ed25519');
  const publicKey = new Uint8Array(Buffer.from(pair.publicKey.export({ format: 'jwk' }).x ?? '', 'base64url'));
  const keyId = await noteKeyId(origin, publicKey);
  /** A checkpoint of this log signed with its key: the one the receipt carries, or any other view a test needs. */
  const signCheckpoint = (size: number, rootHash: Uint8Array) => {
    const text = checkpointText({ origin, size, rootHash });
    return `${text}\n${noteSignatureLine(origin, keyId, new Uint8Array(sign(null, new TextEncoder().encode(text), pair.privateKey)))}`;
  };
  const checkpoint = signCheckpoint(1, await rfc6962LeafHash(leaf));
  const receipt: AuditReceipt = { check_id: entry.check_id, index: 0, leaf, proof: formatTlogProof({ index: 0, path: [], checkpoint }) };
  return { entry, receipt, checkpoint, signCheckpoint, verifierKey: await noteVerifierKey(origin, publicKey) };
}
