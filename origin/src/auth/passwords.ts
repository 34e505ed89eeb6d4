import { randomBytes, scrypt, timingSafeEqual } from 'node:crypto';

export interface PasswordHasher {
  hash(password: string): Promise<string>;
  verify(password: string, encoded: string): Promise<boolean>;
  /** A hash of no one's password, verified when the account does not exist so both paths cost the same. */
  dummyHash(): Promise<string>;
}

export interface ScryptCost {
  /** log2 of N. */
  logN: number;
  r: number;
  p: number;
}

/** N = 2^15, r = 8 (32 MiB, ~0.1 s here): strong enough, and a login burst cannot exhaust memory. */
const DEFAULT_SCRYPT_COST: ScryptCost = { logN: 15, r: 8, p: 1 };

const KEY_LENGTH = 32;
const ENCODED = /^scrypt\$ln=(\d{1,2}),r=(\d{1,2}),p=(\d{1,2})\$([A-Za-z0-9_-]+)\$([A-Za-z0-9_-]+)$/;

/** Encoded as `scrypt$ln=15,r=8,p=1$<salt>$<hash>`, so stored hashes keep working after a cost change. */
export function scryptHasher(cost: ScryptCost = DEFAULT_SCRYPT_COST): PasswordHasher {
  let dummy: Promise<string> | undefined;
  const hasher: PasswordHasher = {
    async hash(password) {
      const salt = randomBytes(16);
      const derived = await derive(password, salt, cost);
      return `scrypt$ln=${cost.logN},r=${cost.r},p=${cost.p}$${salt.toString('base64url')}$${derived.toString('base64url')}`;
    },
    async verify(password, encoded) {
      const match = ENCODED.exec(encoded);
      if (!match) return false;
      const [, logN, r, p, salt, expected] = match as unknown as [string, string, string, string, string, string];
      const expectedBytes = Buffer.from(expected, 'base64url');
      const derived = await derive(password, Buffer.from(salt, 'base64url'), { logN: Number(logN), r: Number(r), p: Number(p) });
      return derived.length === expectedBytes.length && timingSafeEqual(derived, expectedBytes);
    },
    dummyHash() {
      dummy ??= hasher.hash(randomBytes(24).toString('base64url'));
      return dummy;
    },
  };
  return hasher;
}

function derive(password: string, salt: Buffer, cost: ScryptCost): Promise<Buffer> {
  const N = 2 ** cost.logN;
  return new Promise((resolve, reject) => {
    scrypt(password.normalize('NFC'), salt, KEY_LENGTH, { N, r: cost.r, p: cost.p, maxmem: 256 * N * cost.r * cost.p }, (error, key) =>
      error ? reject(error) : resolve(key),
    );
  });
}
