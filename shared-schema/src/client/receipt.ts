import type { AuditEntry } from '../audit.js';
import type { AuditReceipt } from '../routes/origin/audit.js';
import {
  type Checkpoint,
  openNote,
  parseCheckpointText,
  parseNoteVerifierKey,
  parseTlogProof,
  rfc6962LeafHash,
  rootFromInclusionProof,
  TlogFormatError,
} from '../tlog.js';

/**
 * Offline verification of an audit receipt: nothing but the receipt and the log's verifier key
 * (`GET /tlog/vkey`, kept from a source you trust) is needed. It proves that the service's key
 * signed a checkpoint of a log whose tree holds exactly these leaf bytes at this index.
 */

export interface VerifiedReceipt {
  checkId: string;
  index: number;
  /** The entry the receipt is for: the leaf, parsed. */
  entry: Omit<AuditEntry, 'entry_hash'>;
  /** The signed checkpoint the entry is proven against. */
  checkpoint: Checkpoint;
}

/**
 * Throws a TlogFormatError naming what failed: a bad signature, a checkpoint of another log, a path
 * that does not lead to the signed root, or a leaf that is not the entry the receipt names.
 */
export async function verifyReceipt(
  receipt: AuditReceipt,
  verifierKey: string,
  options: { origin?: string } = {},
): Promise<VerifiedReceipt> {
  const verifier = await parseNoteVerifierKey(verifierKey);
  const proof = parseTlogProof(receipt.proof);
  if (proof.index !== receipt.index) throw new TlogFormatError(`the proof is for index ${proof.index}, the receipt says ${receipt.index}`);
  const checkpoint = parseCheckpointText(await openNote(proof.checkpoint, verifier));
  const origin = options.origin ?? verifier.name;
  if (checkpoint.origin !== origin) throw new TlogFormatError(`the checkpoint is of log ${checkpoint.origin}, not ${origin}`);
  const root = await rootFromInclusionProof(proof.index, checkpoint.size, await rfc6962LeafHash(receipt.leaf), proof.path);
  if (!root.every((byte, at) => byte === checkpoint.rootHash[at]))
    throw new TlogFormatError('the inclusion proof does not lead to the signed root');
  const entry = parseLeaf(receipt.leaf);
  if (entry.check_id !== receipt.check_id.toLowerCase() || entry.seq !== receipt.index + 1) {
    throw new TlogFormatError('the leaf is not the entry the receipt names (check_id or position differ)');
  }
  return { checkId: entry.check_id, index: receipt.index, entry, checkpoint };
}

/** The leaf is the entry's canonical JSON; the proof vouches for its bytes, so they are read as they are. */
function parseLeaf(leaf: string): Omit<AuditEntry, 'entry_hash'> {
  try {
    return JSON.parse(leaf) as Omit<AuditEntry, 'entry_hash'>;
  } catch {
    throw new TlogFormatError('the leaf is not JSON');
  }
}
