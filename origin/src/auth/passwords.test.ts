import { describe, expect, it } from 'vitest';
import { scryptHasher } from './passwords.js';

const hasher = scryptHasher({ logN: 10, r: 8, p: 1 });

describe('scrypt password hashes', () => {
  it('verify the right password and refuse any other', async () => {
    const encoded = await hasher.hash('correct horse battery staple');
    expect(await hasher.verify('correct horse battery staple', encoded)).toBe(true);
    expect(await hasher.verify('correct horse battery stapler', encoded)).toBe(false);
  });

  it('salt every hash and carry their cost, so a later cost change keeps old hashes valid', async () => {
    const [a, b] = [await hasher.hash('same password here'), await hasher.hash('same password here')];
    expect(a).not.toBe(b);
    expect(a).toMatch(/^scrypt\$ln=10,r=8,p=1\$[A-Za-z0-9_-]+\$[A-Za-z0-9_-]+$/);
    expect(await scryptHasher({ logN: 11, r: 8, p: 1 }).verify('same password here', a)).toBe(true);
  });

  it('treat composed and decomposed Unicode as the same password', async () => {
    const encoded = await hasher.hash('caf\u00e9 au lait, please');
    expect(await hasher.verify('cafe\u0301 au lait, please', encoded)).toBe(true);
  });

  it('refuse a malformed stored hash instead of throwing', async () => {
    expect(await hasher.verify('anything', 'plain-text')).toBe(false);
  });

  it('keep one dummy hash per hasher for unknown accounts', async () => {
    expect(await hasher.dummyHash()).toBe(await hasher.dummyHash());
  });
});
