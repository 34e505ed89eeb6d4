import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { crc24, decodeWatermarkPayload, encodeWatermarkPayload, isWatermarkId, WATERMARK_CODED_BITS } from './payload-code.js';

const ids = fc.stringMatching(/^[0-9a-f]{10}$/);
/** Soft values of a clean read: +1 for bit 0, −1 for bit 1. */
const clean = (id: string) => Float64Array.from(encodeWatermarkPayload(id), (bit) => (bit ? -1 : 1));

describe('watermark payload coding', () => {
  it('carries 40 bits of id and a 24-bit CRC in 140 coded bits (rate 1/2, 6 tail bits)', () => {
    expect(WATERMARK_CODED_BITS).toBe(140);
    expect(encodeWatermarkPayload('0123456789')).toHaveLength(140);
  });

  it('refuses an id that is not 10 lowercase hex digits', () => {
    for (const bad of ['', '012345678', '0123456789a', '012345678G', 'ABCDEF0123']) {
      expect(isWatermarkId(bad)).toBe(false);
      expect(() => encodeWatermarkPayload(bad)).toThrow(RangeError);
    }
  });

  it('reads back every id from a clean codeword, with agreement 1', () => {
    fc.assert(
      fc.property(ids, (id) => {
        expect(decodeWatermarkPayload(clean(id))).toEqual({ id, agreement: 1 });
      }),
    );
  });

  it('corrects t flipped and e erased coded bits whenever 2t + e < 10 (the free distance)', () => {
    fc.assert(
      fc.property(
        ids,
        fc.integer({ min: 0, max: 4 }).chain((flips) =>
          fc.tuple(
            fc.constant(flips),
            fc.uniqueArray(fc.integer({ min: 0, max: WATERMARK_CODED_BITS - 1 }), {
              minLength: flips + (9 - 2 * flips),
              maxLength: flips + (9 - 2 * flips),
            }),
          ),
        ),
        (id, [flips, positions]) => {
          const soft = clean(id);
          positions.forEach((position, i) => {
            soft[position] = i < flips ? -soft[position]! : 0;
          });
          expect(decodeWatermarkPayload(soft)?.id).toBe(id);
        },
      ),
    );
  });

  it('beyond its capacity a read is rejected or right, never another id', () => {
    fc.assert(
      fc.property(ids, fc.double({ min: 0.15, max: 0.5, noNaN: true }), fc.integer(), (id, flipRate, seed) => {
        let state = seed >>> 0 || 1;
        const next = () => {
          state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
          return state / 2 ** 32;
        };
        const soft = clean(id).map((value) => (next() < flipRate ? -value : value) * (0.2 + next()));
        const decoded = decodeWatermarkPayload(soft);
        if (decoded) expect(decoded.id).toBe(id);
      }),
      { numRuns: 300 },
    );
  });

  it('finds no id in random soft values', () => {
    fc.assert(
      fc.property(
        fc.array(fc.double({ min: -1, max: 1, noNaN: true }), { minLength: WATERMARK_CODED_BITS, maxLength: WATERMARK_CODED_BITS }),
        (soft) => {
          expect(decodeWatermarkPayload(soft)).toBeNull();
        },
      ),
      { numRuns: 300 },
    );
  });

  it('rejects a codeword whose id bits were changed after coding (the CRC)', () => {
    fc.assert(
      fc.property(ids, fc.integer({ min: 0, max: 39 }), (id, bit) => {
        const bits = Uint8Array.from({ length: 40 }, (_, i) => (Number.parseInt(id[i >> 2]!, 16) >> (3 - (i & 3))) & 1);
        const before = crc24(bits, 40);
        bits[bit] = bits[bit]! ^ 1;
        expect(crc24(bits, 40)).not.toBe(before);
      }),
    );
  });
});
