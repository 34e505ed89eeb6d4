import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { LOCAL_KEY_FILE, localEncryptionKeys, SecretDecryptionError, SecretEncryption } from './secret-encryption.js';

const oldKey = { id: 'old', key: Buffer.alloc(32, 1) };
const newKey = { id: 'new', key: Buffer.alloc(32, 2) };
const secret = `whsec_${Buffer.alloc(24, 7).toString('base64')}`;
const webhookId = '0b7c1d52-8f3e-4c1a-9d55-2f1e6b7a9c10';

describe('SecretEncryption', () => {
  it('encrypts under the first key with a fresh nonce each time, and decrypts with the same row id', () => {
    const encryption = new SecretEncryption([oldKey]);
    const once = encryption.encrypt(secret, webhookId);
    const twice = encryption.encrypt(secret, webhookId);
    expect(once).toMatch(/^v1\.old\.[\w-]{16}\.[\w-]+$/);
    expect(once).not.toBe(twice);
    expect(encryption.decrypt(once, webhookId)).toBe(secret);
  });

  it('refuses a value bound to another row, tampered with, under an unknown key, or not encrypted at all', () => {
    const encryption = new SecretEncryption([oldKey]);
    const stored = encryption.encrypt(secret, webhookId);
    const [format, kid, nonce, sealed] = stored.split('.') as [string, string, string, string];
    const flipped = Buffer.from(sealed, 'base64url');
    flipped[0]! ^= 1;
    for (const [value, boundTo] of [
      [stored, crypto.randomUUID()],
      [[format, kid, nonce, flipped.toString('base64url')].join('.'), webhookId],
      [[format, 'gone', nonce, sealed].join('.'), webhookId],
      [[format, kid, nonce, 'AA'].join('.'), webhookId],
      [secret, webhookId],
    ] as const) {
      expect(() => encryption.decrypt(value, boundTo)).toThrow(SecretDecryptionError);
    }
    expect(() => encryption.decrypt(secret, webhookId)).toThrow(/^(?![\s\S]*whsec_)/);
  });

  it('re-encrypts plaintext and values under an older key, and leaves current values alone', () => {
    const before = new SecretEncryption([oldKey]);
    const after = new SecretEncryption([newKey, oldKey]);
    const underOld = before.encrypt(secret, webhookId);
    const moved = after.reencrypt(underOld, webhookId);
    expect(moved).toMatch(/^v1\.new\./);
    expect(after.decrypt(moved, webhookId)).toBe(secret);
    expect(after.reencrypt(moved, webhookId)).toBe(moved);
    expect(after.decrypt(after.reencrypt(secret, webhookId), webhookId)).toBe(secret);
  });
});

describe('localEncryptionKeys', () => {
  it('creates the key once, readable by its owner only, and reads the same key on the next start', async () => {
    const dataDir = join(mkdtempSync(join(tmpdir(), 'vip-keys-')), 'data');
    try {
      const first = await localEncryptionKeys(dataDir);
      expect(statSync(join(dataDir, LOCAL_KEY_FILE)).mode & 0o777).toBe(0o600);
      expect(await localEncryptionKeys(dataDir)).toEqual(first);
      const stored = new SecretEncryption(first).encrypt(secret, webhookId);
      expect(new SecretEncryption(await localEncryptionKeys(dataDir)).decrypt(stored, webhookId)).toBe(secret);
    } finally {
      rmSync(dirname(dataDir), { recursive: true, force: true });
    }
  });
});
