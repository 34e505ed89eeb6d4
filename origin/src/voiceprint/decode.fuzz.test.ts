import { ProblemError } from '@vip/shared-schema/problem';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { FORMAT_FIXTURES } from '../testing/audio-fixtures.js';
import { readAudioFixture } from '../testing/fixtures.js';
import { mulberry32 } from '../testing/random.js';
import { decodeAudio } from './decode.js';

// Deterministic (mulberry32) so a failure can be replayed: the case index and seed identify the input.
const SEED = 20261122;
const CASES_PER_KIND = 500;
/** CPU time, not wall time: a loaded CI box must not fail it, a decoder spinning on one file must. */
const PER_FILE_CPU_MS = 2000;
const limits = { maxBytes: 20 * 1024 * 1024, maxSeconds: 300, minSeconds: 0.5 };

describe('decodeAudio under fuzzing', () => {
  const seeds = FORMAT_FIXTURES.map(readAudioFixture);

  beforeAll(() => {
    // The decoders report what they reject on the console; thousands of lines would bury the result.
    for (const method of ['log', 'warn', 'error'] as const) vi.spyOn(console, method).mockImplementation(() => {});
  });
  afterAll(() => vi.restoreAllMocks());

  it('answers random, truncated and corrupted files with ProblemErrors only, in bounded time and memory', async () => {
    const random = mulberry32(SEED);
    const randomBytes = (length: number) => Uint8Array.from({ length }, () => Math.floor(random() * 256));
    const pick = <T>(items: T[]): T => items[Math.floor(random() * items.length)]!;
    const kinds: Array<[string, () => Uint8Array]> = [
      ['random bytes', () => randomBytes(Math.floor(random() * 4096))],
      // A real header followed by noise drives each decoder past its format check.
      [
        'real header, random body',
        () => {
          const seed = pick(seeds);
          const cut = Math.min(seed.length, 16 + Math.floor(random() * 256));
          const bytes = new Uint8Array(cut + Math.floor(random() * 8192));
          bytes.set(seed.subarray(0, cut));
          bytes.set(randomBytes(bytes.length - cut), cut);
          return bytes;
        },
      ],
      [
        'truncated',
        () => {
          const seed = pick(seeds);
          return seed.slice(0, Math.floor(random() * seed.length));
        },
      ],
      [
        'bytes flipped',
        () => {
          const bytes = pick(seeds).slice();
          const flips = 1 + Math.floor(random() * 32);
          for (let i = 0; i < flips; i++) bytes[4 + Math.floor(random() * (bytes.length - 4))] = Math.floor(random() * 256);
          return bytes;
        },
      ],
    ];

    const outcomes = new Map<string, number>();
    let slowest = 0;
    const started = performance.now();
    const heapBefore = process.memoryUsage().rss;
    for (const [kind, make] of kinds) {
      for (let i = 0; i < CASES_PER_KIND; i++) {
        const bytes = make();
        const cpuBefore = process.cpuUsage();
        let outcome: string;
        try {
          await decodeAudio(bytes, limits);
          outcome = 'decoded';
        } catch (error) {
          if (!(error instanceof ProblemError)) throw new Error(`${kind} case ${i} (seed ${SEED}) threw ${String(error)}`);
          outcome = error.code;
        }
        const cpu = process.cpuUsage(cpuBefore);
        const cpuMs = (cpu.user + cpu.system) / 1000;
        slowest = Math.max(slowest, cpuMs);
        expect(cpuMs, `${kind} case ${i} took ${cpuMs} ms of CPU`).toBeLessThan(PER_FILE_CPU_MS);
        outcomes.set(outcome, (outcomes.get(outcome) ?? 0) + 1);
      }
    }
    const rssGrowthMb = (process.memoryUsage().rss - heapBefore) / 2 ** 20;
    console.info(
      `fuzz: ${kinds.length * CASES_PER_KIND} files in ${((performance.now() - started) / 1000).toFixed(1)} s, slowest ${slowest.toFixed(0)} ms CPU,`,
      `rss +${rssGrowthMb.toFixed(0)} MB,`,
      Object.fromEntries(outcomes),
    );
    expect(rssGrowthMb).toBeLessThan(300);
    expect(outcomes.get('unsupported_format')).toBeGreaterThan(0);
    expect(outcomes.get('corrupt_audio')).toBeGreaterThan(0);
  }, 300_000);
});
