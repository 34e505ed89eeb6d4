import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { embedAuthorization } from '../client/provenance.js';
import { limits } from '../limits.js';
import { ProblemError } from '../problem.js';
import {
  manyAssertions,
  PADDING_ASSERTION,
  riffChunks,
  riffOf,
  signedWithAssertions,
  storeOfWav,
  withDecoyStore,
  withFreeBoxes,
  withLargeSizeStoreHeader,
} from '../testing/hostile-files.js';
import { CREDENTIAL_FORMATS, platformSigner } from '../testing/provenance-files.js';
import { testApprovalReceipt } from '../testing/provenance-receipt.js';
import { credentialContainerOf, scanContainer } from './container-scan.js';
import { readCredentials } from './credentials.js';

const fixture = (name: string) => new Uint8Array(readFileSync(new URL(`../../../fixtures/audio/${name}`, import.meta.url)));
const { signer } = platformSigner('Scan Test');

/** The problem `scan` throws (a ProblemError), or a failure naming what it returned instead. */
function problemOf(scan: () => unknown): ProblemError {
  let outcome: unknown;
  try {
    outcome = scan();
  } catch (error) {
    if (error instanceof ProblemError) return error;
    throw error;
  }
  throw new Error(`expected a refusal, got ${JSON.stringify(outcome)?.slice(0, 200)}`);
}

describe('the structural scan before c2pa-rs (container-scan.ts)', { timeout: 60_000 }, () => {
  it.each(CREDENTIAL_FORMATS)('finds the one manifest store of a signed $name file and counts its assertions', async ({ file, mime }) => {
    const { receipt, entry } = await testApprovalReceipt();
    const signed = await embedAuthorization(fixture(file), mime, { check_id: entry.check_id, receipt }, signer);
    const scan = scanContainer(signed, credentialContainerOf(mime)!);
    expect(new TextDecoder().decode(scan.store!.subarray(4, 8))).toBe('jumb');
    // The created action, the authorization and the hash binding c2pa-rs adds.
    expect(scan.assertionCount).toBe(3);
    expect(scanContainer(fixture(file), credentialContainerOf(mime)!)).toEqual({ store: null, assertionCount: 0 });
  });

  it('refuses an M4A of 100,000 and of 1,000,000 free boxes at once, having walked no further than the limit', () => {
    for (const count of [100_000, 1_000_000]) {
      const started = performance.now();
      const problem = problemOf(() => scanContainer(withFreeBoxes(fixture('a.m4a'), count), 'm4a'));
      expect(problem.code).toBe('payload_too_large');
      expect(problem.message).toContain(`more than ${limits.containerMaxBoxes} boxes`);
      // Generous (the 100,000 boxes took c2pa-rs 58 s); the walk stops at the limit.
      expect(performance.now() - started).toBeLessThan(1_000);
    }
    // Within the limit the same boxes are only counted.
    expect(scanContainer(withFreeBoxes(fixture('a.m4a'), limits.containerMaxBoxes - 100), 'm4a').store).toBeNull();
  });

  it('refuses boxes nested deeper than the limit, and sizes past the end of the file', () => {
    const nested = (depth: number): Uint8Array => {
      let box = new Uint8Array([0, 0, 0, 8, ...new TextEncoder().encode('free')]);
      for (let level = 0; level < depth; level++) {
        const outer = new Uint8Array(box.length + 8);
        new DataView(outer.buffer).setUint32(0, outer.length);
        outer.set(new TextEncoder().encode('moov'), 4);
        outer.set(box, 8);
        box = outer;
      }
      return Buffer.concat([fixture('a.m4a'), box]);
    };
    expect(problemOf(() => scanContainer(nested(limits.containerMaxDepth + 1), 'm4a')).code).toBe('payload_too_large');
    const cut = fixture('a.m4a').slice(0, -10);
    expect(problemOf(() => scanContainer(cut, 'm4a')).code).toBe('corrupt_audio');
  });

  it('measures the store c2pa-rs parses: a 64-bit box header does not hide its size', async () => {
    const huge = await signedWithAssertions(fixture('a.pcm16.wav'), 'audio/wav', [PADDING_ASSERTION], signer);
    const hidden = withLargeSizeStoreHeader(huge);
    expect(new DataView(storeOfWav(hidden).buffer, storeOfWav(hidden).byteOffset).getUint32(0)).toBe(1);
    const problem = problemOf(() => scanContainer(hidden, 'wav'));
    expect([problem.code, problem.message]).toEqual([
      'payload_too_large',
      `The file's manifest store is larger than ${limits.manifestStoreMaxBytes} bytes.`,
    ]);
  });

  it('measures the store c2pa-rs parses: a small decoy store in an earlier chunk is not what is measured', async () => {
    const huge = await signedWithAssertions(fixture('a.pcm16.wav'), 'audio/wav', [PADDING_ASSERTION], signer);
    const decoy = storeOfWav(await signedWithAssertions(fixture('a.pcm16.wav'), 'audio/wav', [], signer));
    expect(decoy.length).toBeLessThan(limits.manifestStoreMaxBytes);
    expect(problemOf(() => scanContainer(withDecoyStore(huge, decoy), 'wav')).code).toBe('payload_too_large');
    // A decoy beside a store within the limit makes the file ambiguous.
    const small = await signedWithAssertions(fixture('a.pcm16.wav'), 'audio/wav', [], signer);
    expect(problemOf(() => scanContainer(withDecoyStore(small, decoy), 'wav')).message).toMatch(/outside the one/);
    // So does a second C2PA chunk.
    const twice = riffOf([...riffChunks(small), { id: 'C2PA', data: decoy }]);
    expect(problemOf(() => scanContainer(twice, 'wav')).message).toMatch(/2 manifest stores/);
  });

  it('counts the assertions of a flood from the JUMBF boxes, and readCredentials refuses it before c2pa-rs parses it', async () => {
    const flood = await signedWithAssertions(fixture('a.pcm16.wav'), 'audio/wav', manyAssertions(900), signer);
    const problem = problemOf(() => scanContainer(flood, 'wav'));
    expect(problem.code).toBe('malformed_manifest');
    // The 900, the created action and the hash binding.
    expect(problem.message).toContain('902 assertions');
    await expect(readCredentials(flood, 'audio/wav')).rejects.toMatchObject({ code: 'malformed_manifest' });
  });

  it('walks a WAV written to a pipe (sizes unknown), and an MP3 without a tag', () => {
    const wav = fixture('a.pcm16.wav').slice();
    new DataView(wav.buffer).setUint32(4, 0xffffffff, true);
    expect(scanContainer(wav, 'wav').store).toBeNull();
    expect(scanContainer(new Uint8Array([0xff, 0xfb, 0x90, 0x64, 0, 0, 0, 0]), 'mp3').store).toBeNull();
  });
});
