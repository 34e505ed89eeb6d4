import { createHash, createPrivateKey, generateKeyPairSync, type KeyObject, randomBytes, sign } from 'node:crypto';

/**
 * A certificate authority made inside a test: a self-signed CA and leaves it issues, as C2PA wants
 * a signer's certificate (CA:FALSE, keyUsage digitalSignature, extendedKeyUsage emailProtection).
 * Node's crypto parses X.509 but cannot write it, so the few DER structures are built here.
 */

const der = (tag: number, ...parts: Uint8Array[]): Uint8Array => {
  const body = Buffer.concat(parts);
  const length =
    body.length < 0x80
      ? [body.length]
      : body.length < 0x100
        ? [0x81, body.length]
        : body.length < 0x10000
          ? [0x82, body.length >> 8, body.length & 0xff]
          : [0x83, body.length >> 16, (body.length >> 8) & 0xff, body.length & 0xff];
  return Buffer.concat([Uint8Array.of(tag, ...length), body]);
};
const sequence = (...parts: Uint8Array[]) => der(0x30, ...parts);
const set = (...parts: Uint8Array[]) => der(0x31, ...parts);
const octets = (bytes: Uint8Array) => der(0x04, bytes);
const bits = (bytes: Uint8Array) => der(0x03, Uint8Array.of(0), bytes);
const utf8 = (text: string) => der(0x0c, Buffer.from(text));
const boolean = (value: boolean) => der(0x01, Uint8Array.of(value ? 0xff : 0));
const explicit = (tagNumber: number, inner: Uint8Array) => der(0xa0 | tagNumber, inner);
/** RFC 5280 4.1.2.5: UTCTime for dates through 2049. */
const utcTime = (date: Date) => der(0x17, Buffer.from(`${date.toISOString().slice(2, 19).replaceAll(/[-:T]/g, '')}Z`));
/**
 * DER wants the shortest form: leading zero bytes dropped, then one zero byte back where the high bit
 * would read as a sign. A random serial starting 00 0x–7x was otherwise refused by OpenSSL ("illegal
 * padding"), once in about 512 certificates.
 */
function positiveInteger(bytes: Uint8Array): Uint8Array {
  let start = 0;
  while (start < bytes.length - 1 && bytes[start] === 0) start++;
  const minimal = bytes.subarray(start);
  return der(0x02, minimal[0]! & 0x80 ? Buffer.concat([Uint8Array.of(0), minimal]) : minimal);
}

function oid(dotted: string): Uint8Array {
  const [first, second, ...rest] = dotted.split('.').map(Number) as [number, number, ...number[]];
  const body: number[] = [first * 40 + second];
  for (const arc of rest) {
    const groups = [arc & 0x7f];
    for (let value = arc >>> 7; value > 0; value >>>= 7) groups.unshift((value & 0x7f) | 0x80);
    body.push(...groups);
  }
  return der(0x06, Uint8Array.from(body));
}

const ECDSA_WITH_SHA256 = sequence(oid('1.2.840.10045.4.3.2'));
const ED25519 = sequence(oid('1.3.101.112'));
/** sha256WithRSAEncryption, whose parameters are NULL (RFC 4055). */
const RSA_WITH_SHA256 = sequence(oid('1.2.840.113549.1.1.11'), der(0x05));
const name = (commonName: string, organization: string) =>
  sequence(set(sequence(oid('2.5.4.10'), utf8(organization))), set(sequence(oid('2.5.4.3'), utf8(commonName))));
const extension = (id: string, critical: boolean, value: Uint8Array) =>
  sequence(oid(id), ...(critical ? [boolean(true)] : []), octets(value));

export interface TestCertificate {
  /** DER of the certificate. */
  der: Uint8Array;
  pem: string;
  privateKey: KeyObject;
  /** The subject key identifier, which the certificates it issues name as their authority key. */
  keyId: Uint8Array;
}

/** Where the content of the DER element at `offset` starts and ends. */
function contentOf(bytes: Uint8Array, offset: number): { start: number; end: number } {
  const first = bytes[offset + 1]!;
  if (!(first & 0x80)) return { start: offset + 2, end: offset + 2 + first };
  const start = offset + 2 + (first & 0x7f);
  let length = 0;
  for (let index = offset + 2; index < start; index++) length = length * 256 + bytes[index]!;
  return { start, end: start + length };
}

/** RFC 5280 4.2.1.2, method 1: SHA-1 of the subjectPublicKey bits (the SPKI's BIT STRING, after its unused-bits byte). */
function subjectKeyId(spki: Uint8Array): Uint8Array {
  const outer = contentOf(spki, 0);
  const algorithm = contentOf(spki, outer.start);
  const key = contentOf(spki, algorithm.end);
  return createHash('sha1')
    .update(spki.subarray(key.start + 1, key.end))
    .digest();
}

export interface TestCertificateOptions {
  commonName: string;
  organization?: string;
  /** The issuing CA; none makes a self-signed CA. */
  issuer?: TestCertificate & { commonName: string; organization: string };
  /** Ed25519 instead of ECDSA P-256. */
  ed25519?: boolean;
  /** An RSA key of this many bits instead of ECDSA P-256 (a weak one, for tests of refusals). */
  rsaModulusBits?: number;
  /** An ECDSA key on this curve (OpenSSL's name, e.g. `secp384r1`, `prime192v1`) instead of P-256. */
  namedCurve?: string;
  notBefore?: Date;
  notAfter?: Date;
  /** A leaf's extended key usages; emailProtection, which c2pa-rs accepts, when absent. */
  extendedKeyUsage?: readonly string[];
  /** The serial number's bytes; 16 random ones when absent. */
  serial?: Uint8Array;
}

export const toPem = (certificate: Uint8Array) =>
  `-----BEGIN CERTIFICATE-----\n${Buffer.from(certificate)
    .toString('base64')
    .replaceAll(/(.{64})/g, '$1\n')
    .replace(/\n?$/, '\n')}-----END CERTIFICATE-----\n`;

function issue(options: TestCertificateOptions & { ca: boolean }): TestCertificate & { commonName: string; organization: string } {
  const organization = options.organization ?? 'VIP test';
  const keys = options.ed25519
    ? generateKeyPairSync('ed25519')
    : options.rsaModulusBits
      ? generateKeyPairSync('rsa', { modulusLength: options.rsaModulusBits })
      : generateKeyPairSync('ec', { namedCurve: options.namedCurve ?? 'P-256' });
  const signerKey = options.issuer?.privateKey ?? keys.privateKey;
  const signatureAlgorithm =
    signerKey.asymmetricKeyType === 'ed25519' ? ED25519 : signerKey.asymmetricKeyType === 'rsa' ? RSA_WITH_SHA256 : ECDSA_WITH_SHA256;
  const issuerName = options.issuer ? name(options.issuer.commonName, options.issuer.organization) : name(options.commonName, organization);
  const notBefore = options.notBefore ?? new Date(Date.now() - 3_600_000);
  const notAfter = options.notAfter ?? new Date(Date.now() + 365 * 86_400_000);
  const spki = keys.publicKey.export({ type: 'spki', format: 'der' });
  const keyId = subjectKeyId(spki);
  // C2PA's certificate profile wants both key identifiers on every certificate that is not a root.
  const keyIdentifiers = [
    extension('2.5.29.14', false, octets(keyId)),
    extension('2.5.29.35', false, sequence(der(0x80, options.issuer?.keyId ?? keyId))),
  ];
  const extensions = options.ca
    ? [extension('2.5.29.19', true, sequence(boolean(true))), extension('2.5.29.15', true, bits(Uint8Array.of(0x06)))]
    : [
        extension('2.5.29.19', true, sequence()),
        extension('2.5.29.15', true, bits(Uint8Array.of(0x80))),
        extension('2.5.29.37', false, sequence(...(options.extendedKeyUsage ?? ['1.3.6.1.5.5.7.3.4']).map(oid))),
      ];
  const tbs = sequence(
    explicit(0, der(0x02, Uint8Array.of(2))),
    positiveInteger(options.serial ?? randomBytes(16)),
    signatureAlgorithm,
    issuerName,
    sequence(utcTime(notBefore), utcTime(notAfter)),
    name(options.commonName, organization),
    spki,
    explicit(3, sequence(...extensions, ...keyIdentifiers)),
  );
  const signature = sign(signerKey.asymmetricKeyType === 'ed25519' ? null : 'sha256', tbs, signerKey);
  const certificate = sequence(tbs, signatureAlgorithm, bits(signature));
  return {
    der: certificate,
    pem: toPem(certificate),
    privateKey: createPrivateKey(keys.privateKey.export({ type: 'pkcs8', format: 'pem' })),
    keyId,
    commonName: options.commonName,
    organization,
  };
}

/** `options`: the CA's key and validity, when not the defaults (P-256, from an hour ago for a year). */
export const testCertificateAuthority = (
  commonName: string,
  organization?: string,
  options: Pick<TestCertificateOptions, 'ed25519' | 'rsaModulusBits' | 'namedCurve' | 'notBefore' | 'notAfter'> = {},
) => issue({ ...options, commonName, organization, ca: true });
export const testLeafCertificate = (options: TestCertificateOptions & { issuer: NonNullable<TestCertificateOptions['issuer']> }) =>
  issue({ ...options, ca: false });
