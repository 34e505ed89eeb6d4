import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { type EncryptionKey, parseEncryptionKeys } from '../config.js';

/**
 * Webhook signing secrets at rest (docs/OPERATIONS.md, "Encryption keys for stored secrets").
 * They cannot be hashed (every delivery is signed with them), so they are stored as AES-256-GCM
 * ciphertexts: `v1.<kid>.<nonce>.<ciphertext+tag>`, base64url parts, bound to their row by using the
 * row's id as additional authenticated data. A database dump alone cannot forge a delivery.
 */

const FORMAT = 'v1';
const NONCE_BYTES = 12;
const TAG_BYTES = 16;

/** Why a stored value could not be decrypted; the message never carries the value. */
export class SecretDecryptionError extends Error {
  constructor(reason: string) {
    super(`the stored secret could not be decrypted: ${reason}`);
    this.name = 'SecretDecryptionError';
  }
}

export class SecretEncryption {
  private readonly byId: Map<string, Buffer>;
  private readonly current: EncryptionKey;

  /** The first key encrypts; every key decrypts. */
  constructor(keys: readonly EncryptionKey[]) {
    if (keys.length === 0) throw new Error('at least one encryption key is needed');
    this.current = keys[0]!;
    this.byId = new Map(keys.map((entry) => [entry.id, entry.key]));
  }

  /** A key that dies with the process: for servers whose stored secrets need not outlive it (tests). */
  static withRandomKey(): SecretEncryption {
    return new SecretEncryption([{ id: 'ephemeral', key: randomBytes(32) }]);
  }

  /** `boundTo` (the row's id) must be given again to decrypt: the value cannot move to another row. */
  encrypt(plaintext: string, boundTo: string): string {
    const nonce = randomBytes(NONCE_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.current.key, nonce).setAAD(Buffer.from(boundTo));
    const sealed = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final(), cipher.getAuthTag()]);
    return [FORMAT, this.current.id, nonce.toString('base64url'), sealed.toString('base64url')].join('.');
  }

  decrypt(stored: string, boundTo: string): string {
    const [format, keyId, nonce, sealed, ...rest] = stored.split('.');
    if (format !== FORMAT || !keyId || !nonce || !sealed || rest.length > 0) throw new SecretDecryptionError('not an encrypted value');
    const key = this.byId.get(keyId);
    if (!key) throw new SecretDecryptionError(`no key "${keyId}" is configured`);
    const bytes = Buffer.from(sealed, 'base64url');
    try {
      const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(nonce, 'base64url'))
        .setAAD(Buffer.from(boundTo))
        .setAuthTag(bytes.subarray(bytes.length - TAG_BYTES));
      return Buffer.concat([decipher.update(bytes.subarray(0, bytes.length - TAG_BYTES)), decipher.final()]).toString('utf8');
    } catch {
      throw new SecretDecryptionError(`authentication failed under key "${keyId}" (wrong key, or a value from another row)`);
    }
  }

  /**
   * The value as it should be stored now: encrypted under the current key. A value without the
   * versioned prefix is taken as a plaintext secret stored before encryption existed.
   */
  reencrypt(stored: string, boundTo: string): string {
    if (stored.startsWith(`${FORMAT}.${this.current.id}.`)) return stored;
    const plaintext = stored.startsWith(`${FORMAT}.`) ? this.decrypt(stored, boundTo) : stored;
    return this.encrypt(plaintext, boundTo);
  }
}

export const LOCAL_KEY_FILE = 'secrets-encryption.key';

/**
 * Without SECRETS_ENCRYPTION_KEYS the embedded service keeps its key in DATA_DIR (mode 0600, created
 * on first start, in the variable's format): a per-process key would make every stored secret
 * unreadable after a restart.
 */
export async function localEncryptionKeys(dataDir: string): Promise<EncryptionKey[]> {
  const path = join(dataDir, LOCAL_KEY_FILE);
  const existing = await readFile(path, 'utf8').catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return null;
    throw error;
  });
  if (existing !== null) return parseEncryptionKeys(existing.trim());
  const entry = `local-${randomBytes(4).toString('hex')}:${randomBytes(32).toString('base64url')}`;
  await mkdir(dataDir, { recursive: true, mode: 0o700 });
  // `wx`: never overwrite a key another process has just written.
  await writeFile(path, `${entry}\n`, { mode: 0o600, flag: 'wx' });
  return parseEncryptionKeys(entry);
}
