import { createPrivateKey, sign as signBytes } from 'node:crypto';
import { canonicalJson } from '@vip/shared-schema';
import { CompactSign, compactVerify, importJWK, type JWK } from 'jose';
import type { SigningJwk } from '../auth/index.js';

export interface CheckpointStatement {
  tree_size: number;
  head_hash: string;
  signed_at: string;
}

export interface CheckpointSigner {
  keyId: string;
  /** Compact JWS over the statement's canonical JSON. */
  sign(statement: CheckpointStatement): Promise<string>;
  jwks(): { keys: JWK[] };
  /** The raw Ed25519 public key, for the transparency log's signed-note verifier key. */
  publicKey: Uint8Array;
  /** A plain Ed25519 signature over `message`: what a signed note's signature line carries. */
  signRaw(message: Uint8Array): Uint8Array;
}

const ALGORITHM = 'EdDSA';
/** Its own `typ`, so a checkpoint signature can never pass as an access token or the reverse. */
const CHECKPOINT_TYPE = 'vip-audit-checkpoint+jws';

export async function createCheckpointSigner(privateJwk: SigningJwk): Promise<CheckpointSigner> {
  const { d: _private, ...publicJwk } = privateJwk;
  const key = await importJWK(privateJwk, ALGORITHM);
  const rawKey = createPrivateKey({ key: { ...privateJwk }, format: 'jwk' });
  return {
    keyId: privateJwk.kid,
    sign: (statement) =>
      new CompactSign(new TextEncoder().encode(canonicalJson(statement)))
        .setProtectedHeader({ alg: ALGORITHM, kid: privateJwk.kid, typ: CHECKPOINT_TYPE })
        .sign(key),
    jwks: () => ({ keys: [{ ...publicJwk, alg: ALGORITHM, use: 'sig' }] }),
    publicKey: new Uint8Array(Buffer.from(privateJwk.x, 'base64url')),
    signRaw: (message) => new Uint8Array(signBytes(null, message, rawKey)),
  };
}

/** What a third party does with a checkpoint: check the signature with the published key and read the statement. */
export async function verifyCheckpointSignature(jws: string, publicJwk: JWK): Promise<CheckpointStatement> {
  const { payload, protectedHeader } = await compactVerify(jws, await importJWK(publicJwk, ALGORITHM), { algorithms: [ALGORITHM] });
  if (protectedHeader.typ !== CHECKPOINT_TYPE) throw new Error('not a checkpoint signature');
  return JSON.parse(new TextDecoder().decode(payload)) as CheckpointStatement;
}
