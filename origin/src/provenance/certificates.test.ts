import { pathOf } from '@vip/shared-schema';
import { registerSigningCertificateRoute, revokeSigningCertificateRoute } from '@vip/shared-schema/routes/origin/provenance';
import { testCertificateAuthority, testLeafCertificate } from '@vip/shared-schema/testing/provenance-ca';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loggedIn, platformWithApiKey, startTestOrigin, type TestOrigin } from '../testing/origin.js';
import { expectProblem } from '../testing/problem.js';
import { liveCertificates } from './store.js';

/**
 * What a platform may register as the certificate its Content Credentials are signed under
 * (docs/CONTRACT.md#content-credentials): a certificate valid now, with a key of today's strength,
 * that no other platform holds. No voiceprint engine: nothing here reads a file.
 */

let origin: TestOrigin;
beforeAll(async () => {
  origin = await startTestOrigin();
});
afterAll(() => origin?.close());

/** The administrator who creates the platforms, signed in on first use. */
let adminToken: Promise<string> | undefined;
let platformCount = 0;
/** A platform of its own for each case, and its key's header. */
const newPlatform = async (label: string) => {
  adminToken ??= loggedIn(origin, 'admin').then((admin) => admin.accessToken);
  const { api_key } = await platformWithApiKey(origin, await adminToken, `${label} ${++platformCount}`);
  return { 'x-api-key': api_key };
};

const register = (pem: string, headers: Record<string, string>) =>
  origin.app.inject({ method: 'POST', url: pathOf(registerSigningCertificateRoute), headers, payload: { certificate_pem: pem } });

const revoke = (certificateId: string, headers: Record<string, string>) =>
  origin.app.inject({ method: 'POST', url: pathOf(revokeSigningCertificateRoute, { certificate_id: certificateId }), headers });

/** A 422 on certificate_pem whose message says why. */
function expectRefusedCertificate(response: Awaited<ReturnType<typeof register>>, reason: RegExp) {
  const problem = expectProblem(response, 422, 'validation_failed');
  expect(problem.errors).toEqual([{ field: 'body.certificate_pem', message: expect.stringMatching(reason) }]);
}

/** Shorter than an access token lives, so the test's tokens outlast the clock moving on. */
const AHEAD_MS = 5 * 60_000;

describe('signing certificates: what is refused', { timeout: 60_000 }, () => {
  it('refuses a certificate that is not valid yet, naming the time it becomes valid', async () => {
    const platform = await newPlatform('Early');
    const notBefore = new Date(Math.floor((origin.runtime.clock.now().getTime() + AHEAD_MS) / 1000) * 1000);
    const ca = testCertificateAuthority('Early CA', 'Early', { notBefore });
    expectRefusedCertificate(await register(ca.pem, platform), new RegExp(`not valid before ${notBefore.toISOString()}`));
    const leaf = testLeafCertificate({ commonName: 'Early signer', issuer: testCertificateAuthority('Now CA'), notBefore });
    expectRefusedCertificate(await register(leaf.pem, platform), /not valid before/);
    // Once the time has come it registers.
    origin.runtime.advance(AHEAD_MS + 1000);
    expect((await register(ca.pem, platform)).statusCode).toBe(201);
  });

  it('refuses RSA under 2048 bits and curves under P-256, as CA or signing certificate, and takes the strong ones', async () => {
    const platform = await newPlatform('Keys');
    expectRefusedCertificate(
      await register(testCertificateAuthority('RSA-1024 CA', 'Keys', { rsaModulusBits: 1024 }).pem, platform),
      /RSA key has 1024 bits; at least 2048/,
    );
    expectRefusedCertificate(
      await register(testCertificateAuthority('P-192 CA', 'Keys', { namedCurve: 'prime192v1' }).pem, platform),
      /EC key is on prime192v1; P-256, P-384 or P-521/,
    );
    expectRefusedCertificate(
      await register(testCertificateAuthority('secp256k1 CA', 'Keys', { namedCurve: 'secp256k1' }).pem, platform),
      /EC key is on secp256k1/,
    );
    const weakLeaf = testLeafCertificate({
      commonName: 'RSA-1024 signer',
      issuer: testCertificateAuthority('Strong CA'),
      rsaModulusBits: 1024,
    });
    expectRefusedCertificate(await register(weakLeaf.pem, platform), /RSA key has 1024 bits/);

    for (const strong of [
      testCertificateAuthority('RSA-2048 CA', 'Keys', { rsaModulusBits: 2048 }),
      testCertificateAuthority('P-256 CA', 'Keys'),
      testCertificateAuthority('P-384 CA', 'Keys', { namedCurve: 'secp384r1' }),
      testCertificateAuthority('Ed25519 CA', 'Keys', { ed25519: true }),
    ]) {
      const registered = await register(strong.pem, platform);
      expect(registered.statusCode, `${strong.commonName}: ${registered.body}`).toBe(201);
    }
  });

  it('refuses a CA another platform holds, live or revoked, so the one platform that holds it can revoke it for good', async () => {
    const [first, second] = [await newPlatform('First'), await newPlatform('Second')];
    const ca = testCertificateAuthority('Shared CA', 'First');
    const registered = await register(ca.pem, first);
    expect(registered.statusCode).toBe(201);

    const refused = expectProblem(await register(ca.pem, second), 409, 'conflict');
    expect(refused.detail).toMatch(/registered to another platform/);
    // The same for a signing (leaf) certificate.
    const leaf = testLeafCertificate({ commonName: 'Shared signer', issuer: testCertificateAuthority('Leaf CA') });
    expect((await register(leaf.pem, first)).statusCode).toBe(201);
    expectProblem(await register(leaf.pem, second), 409, 'conflict');

    // Revoked by its platform, the CA is nobody's anchor, and stays refused to the other platform.
    expect((await revoke(registered.json().certificate_id, first)).statusCode).toBe(200);
    expect((await liveCertificates(origin.database.db)).map((anchor) => anchor.pem)).not.toContain(ca.pem);
    expect(JSON.stringify(expectProblem(await register(ca.pem, second), 409, 'conflict'))).toMatch(/another platform/);
    expectProblem(await register(ca.pem, first), 409, 'conflict');
    expect((await liveCertificates(origin.database.db)).map((anchor) => anchor.pem)).not.toContain(ca.pem);
  });

  it("refuses a certificate issued by another platform's CA, and a CA that issued another platform's certificate", async () => {
    const [holder, other] = [await newPlatform('Issuer'), await newPlatform('Borrower')];
    const ca = testCertificateAuthority('Holder CA', 'Issuer');
    expect((await register(ca.pem, holder)).statusCode).toBe(201);
    const leafOfHolder = testLeafCertificate({ commonName: 'Holder signer', organization: 'Issuer', issuer: ca });
    expect(expectProblem(await register(leafOfHolder.pem, other), 409, 'conflict').detail).toMatch(/issued, or was issued by/);
    // The platform that holds the CA may register the leaves it issues.
    expect((await register(leafOfHolder.pem, holder)).statusCode).toBe(201);

    const unregisteredCa = testCertificateAuthority('Leaf-only CA', 'Issuer');
    const leaf = testLeafCertificate({ commonName: 'Leaf-only signer', issuer: unregisteredCa });
    expect((await register(leaf.pem, holder)).statusCode).toBe(201);
    expectProblem(await register(unregisteredCa.pem, other), 409, 'conflict');
    // A CA of its own, unrelated to the holder's, registers.
    expect((await register(testCertificateAuthority('Own CA', 'Borrower').pem, other)).statusCode).toBe(201);
  });

  it('lets exactly one of two platforms registering one CA at the same moment have it', async () => {
    const platforms = [await newPlatform('Racing'), await newPlatform('Racing')];
    const ca = testCertificateAuthority('Raced CA', 'Racing');
    const answers = await Promise.all(platforms.map((platform) => register(ca.pem, platform)));
    expect(answers.map((answer) => answer.statusCode).sort()).toEqual([201, 409]);
    expect((await liveCertificates(origin.database.db)).filter((anchor) => anchor.pem === ca.pem)).toHaveLength(1);
  });
});
