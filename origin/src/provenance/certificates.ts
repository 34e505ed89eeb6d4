import { type KeyObject, X509Certificate } from 'node:crypto';
import { limits, ProblemError, type SigningCertificate } from '@vip/shared-schema';
import { certificateFingerprint } from '@vip/shared-schema/provenance/signer';
import type { Caller } from '../auth/index.js';
import type { Database } from '../db/client.js';
import type { SigningCertificateRow } from '../db/schema.js';
import { platformIdByName } from '../platforms/index.js';
import type { Runtime } from '../runtime.js';
import * as store from './store.js';

/** The extended key usage c2pa-rs accepts of a signer without further configuration (shared/TOOLCHAIN.md). */
const EMAIL_PROTECTION = '1.3.6.1.5.5.7.3.4';

/**
 * The keys a certificate may carry: RSA of at least 2048 bits, ECDSA on P-256, P-384 or P-521, and
 * Ed25519 — what C2PA signs with (ES256/384/512, PS256/384/512, Ed25519), at today's strength.
 */
const MIN_RSA_MODULUS_BITS = 2048;
/** P-256, P-384 and P-521, by the names OpenSSL (and so Node's KeyObject) gives them. */
const ACCEPTED_CURVES = new Set(['prime256v1', 'secp384r1', 'secp521r1']);

const PEM_BLOCK = /^-----BEGIN CERTIFICATE-----\r?\n[A-Za-z0-9+/=\r\n]+-----END CERTIFICATE-----\r?\n?$/;

const fieldProblem = (field: string, message: string) =>
  new ProblemError('validation_failed', 'The request body is invalid.', { errors: [{ field: `body.${field}`, message }] });

/**
 * The certificates platforms sign Content Credentials with (docs/CONTRACT.md#content-credentials).
 * A platform registers the CA that issues its signing certificates or the signing (leaf) certificate
 * itself. A platform key manages its own platform's; an administrator names any platform. Rotation is
 * registering the new certificate before signing with it and revoking the old one once no file
 * signed under it should verify any more.
 */
export class SigningCertificateService {
  constructor(private readonly deps: { db: Database; runtime: Runtime }) {}

  async register(caller: Caller, body: { platform_name?: string; certificate_pem: string }): Promise<SigningCertificate> {
    const { db, runtime } = this.deps;
    const platformName = this.platformOf(caller, body.platform_name);
    const platformId = await this.platformId(platformName);
    const certificate = parseCertificate(body.certificate_pem);
    const now = runtime.clock.now();
    const notBefore = new Date(certificate.validFrom);
    if (new Date(certificate.validTo) <= now) throw fieldProblem('certificate_pem', 'the certificate has expired');
    // c2pa-rs would refuse every file signed under it until then; register it once it is valid.
    if (notBefore > now) throw fieldProblem('certificate_pem', `the certificate is not valid before ${notBefore.toISOString()}`);
    const weakness = keyWeakness(certificate.publicKey);
    if (weakness) throw fieldProblem('certificate_pem', weakness);
    // A leaf is trusted by its fingerprint (shared-schema/src/provenance/signer.ts), and only if c2pa-rs accepts it as a signer.
    if (!certificate.ca && !certificate.keyUsage?.includes(EMAIL_PROTECTION)) {
      throw fieldProblem(
        'certificate_pem',
        'a signing (leaf) certificate needs extendedKeyUsage emailProtection, which C2PA verifiers accept',
      );
    }
    const fingerprint = fingerprintOf(certificate);
    const inserted = await db.transaction(async (tx) => {
      await store.lockRegistrations(tx);
      // One platform per certificate, revoked or not: a file signed under it then names one platform,
      // and a revocation by that platform cannot be outlived by another's registration.
      const others = await store.certificatesOfOtherPlatforms(tx, platformId);
      if (others.some((other) => other.fingerprint === fingerprint)) {
        throw new ProblemError(
          'conflict',
          'This certificate is registered to another platform: a CA or signing certificate belongs to one platform only. Register a CA of your own.',
        );
      }
      // Nor a certificate that issued, or was issued by, another platform's: its files would chain to both.
      if (others.some((other) => issuedOneAnother(certificate, new X509Certificate(other.pem)))) {
        throw new ProblemError(
          'conflict',
          "This certificate issued, or was issued by, a certificate registered to another platform: files signed under it would verify as that platform's too. Register a CA of your own.",
        );
      }
      if ((await store.countCertificatesOfPlatform(tx, platformId)) >= limits.signingCertificatesPerPlatform) {
        throw new ProblemError('conflict', `A platform holds at most ${limits.signingCertificatesPerPlatform} signing certificates.`);
      }
      return store.insertCertificate(tx, {
        id: runtime.newId(),
        platformId,
        pem: certificate.toString(),
        fingerprint,
        subject: certificate.subject,
        issuer: certificate.issuer,
        isCa: certificate.ca,
        notBefore,
        notAfter: new Date(certificate.validTo),
        createdAt: now,
      });
    });
    if (!inserted) throw new ProblemError('conflict', 'This certificate is already registered for the platform.');
    return answer(inserted, platformName);
  }

  async list(caller: Caller, platformName: string | undefined): Promise<{ certificates: SigningCertificate[] }> {
    const name = this.platformOf(caller, platformName);
    const rows = await store.certificatesOfPlatform(this.deps.db, await this.platformId(name));
    return { certificates: rows.map((row) => answer(row, name)) };
  }

  async revoke(caller: Caller, certificateId: string): Promise<SigningCertificate> {
    const { db, runtime } = this.deps;
    const found = await store.certificateWithPlatform(db, certificateId);
    // Another platform's certificate answers exactly like a missing one.
    if (!found || (caller.kind === 'platform' && caller.platformName !== found.platformName)) {
      throw new ProblemError('not_found', 'No such signing certificate.');
    }
    this.requireAdminOrPlatform(caller);
    await store.revokeCertificate(db, certificateId, runtime.clock.now());
    const after = await store.certificateWithPlatform(db, certificateId);
    return answer(after!.certificate, found.platformName);
  }

  private requireAdminOrPlatform(caller: Caller): void {
    if (caller.kind === 'user' && caller.role !== 'admin') {
      throw new ProblemError('forbidden', "Signing certificates are managed by the platform's key or an administrator.");
    }
  }

  private platformOf(caller: Caller, given: string | undefined): string {
    this.requireAdminOrPlatform(caller);
    if (caller.kind === 'platform') {
      if (given !== undefined && given !== caller.platformName)
        throw new ProblemError('platform_mismatch', 'platform_name does not match the API key.');
      return caller.platformName;
    }
    if (given === undefined) throw fieldProblem('platform_name', 'an administrator names the platform');
    return given;
  }

  private async platformId(name: string): Promise<string> {
    const id = await platformIdByName(this.deps.db, name);
    if (!id) throw new ProblemError('not_found', 'No such platform.');
    return id;
  }
}

function parseCertificate(pem: string): X509Certificate {
  if (!PEM_BLOCK.test(pem.trim().concat('\n')))
    throw fieldProblem('certificate_pem', 'one PEM certificate (BEGIN CERTIFICATE … END CERTIFICATE)');
  try {
    return new X509Certificate(pem);
  } catch {
    throw fieldProblem('certificate_pem', 'not an X.509 certificate');
  }
}

/** Whether one of the two certificates signed the other (one level: registration sees no intermediates). */
function issuedOneAnother(a: X509Certificate, b: X509Certificate): boolean {
  return (a.checkIssued(b) && a.verify(b.publicKey)) || (b.checkIssued(a) && b.verify(a.publicKey));
}

/** Why the certificate's key is too weak (or of a kind C2PA does not sign with), or null when it is accepted. */
function keyWeakness(key: KeyObject): string | null {
  const details = key.asymmetricKeyDetails ?? {};
  switch (key.asymmetricKeyType) {
    case 'rsa':
    case 'rsa-pss':
      return (details.modulusLength ?? 0) >= MIN_RSA_MODULUS_BITS
        ? null
        : `the certificate's RSA key has ${details.modulusLength} bits; at least ${MIN_RSA_MODULUS_BITS} are required`;
    case 'ec':
      return details.namedCurve && ACCEPTED_CURVES.has(details.namedCurve)
        ? null
        : `the certificate's EC key is on ${details.namedCurve ?? 'an unnamed curve'}; P-256, P-384 or P-521 is required`;
    case 'ed25519':
      return null;
    default:
      return `the certificate's ${key.asymmetricKeyType ?? 'unknown'} key is not one C2PA signs with: use RSA (2048 bits or more), ECDSA P-256, P-384 or P-521, or Ed25519`;
  }
}

const fingerprintOf = (certificate: X509Certificate) => certificateFingerprint(new Uint8Array(certificate.raw));

function answer(row: SigningCertificateRow, platformName: string): SigningCertificate {
  return {
    certificate_id: row.id,
    platform_name: platformName,
    subject: row.subject,
    issuer: row.issuer,
    is_ca: row.isCa,
    fingerprint_sha256: row.fingerprint,
    not_before: row.notBefore.toISOString(),
    not_after: row.notAfter.toISOString(),
    created_at: row.createdAt.toISOString(),
    revoked_at: row.revokedAt?.toISOString() ?? null,
  };
}
