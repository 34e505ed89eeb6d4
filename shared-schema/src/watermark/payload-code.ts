/**
 * The watermark payload's channel coding: a 40-bit id, a CRC-24 over it (the integrity check), and a
 * rate-1/2 convolutional code of constraint length 7 (generators 171, 133 octal; free distance 10),
 * zero-terminated and decoded by a soft-decision Viterbi decoder. A read is accepted only when the
 * decoded bits pass the CRC: a damaged or random read is rejected, not turned into another id
 * (docs/WATERMARK.md, "False attributions").
 */

/** Bits of the id the service issues per synthesis (10 lowercase hex digits). */
export const WATERMARK_ID_BITS = 40;
/** Bits of the CRC appended to the id. */
export const WATERMARK_CHECK_BITS = 24;
const CONSTRAINT_LENGTH = 7;
const TAIL_BITS = CONSTRAINT_LENGTH - 1;
const STATES = 1 << TAIL_BITS;
const GENERATORS = [0o171, 0o133] as const;
/** Bits into the encoder: id, CRC, zero tail. */
const INPUT_BITS = WATERMARK_ID_BITS + WATERMARK_CHECK_BITS + TAIL_BITS;
/** Coded bits of one payload: what one watermark frame carries. */
export const WATERMARK_CODED_BITS = INPUT_BITS * GENERATORS.length;

export const WATERMARK_ID_PATTERN = /^[0-9a-f]{10}$/;

export function isWatermarkId(value: string): boolean {
  return WATERMARK_ID_PATTERN.test(value);
}

function idBits(id: string): Uint8Array {
  if (!isWatermarkId(id)) throw new RangeError('a watermark id is 10 lowercase hex digits (40 bits)');
  const bits = new Uint8Array(WATERMARK_ID_BITS);
  for (let digit = 0; digit < 10; digit++) {
    const nibble = Number.parseInt(id[digit]!, 16);
    for (let bit = 0; bit < 4; bit++) bits[digit * 4 + bit] = (nibble >> (3 - bit)) & 1;
  }
  return bits;
}

function bitsToId(bits: ArrayLike<number>): string {
  let id = '';
  for (let digit = 0; digit < 10; digit++) {
    let nibble = 0;
    for (let bit = 0; bit < 4; bit++) nibble = (nibble << 1) | bits[digit * 4 + bit]!;
    id += nibble.toString(16);
  }
  return id;
}

/** CRC-24/OpenPGP (polynomial 0x864CFB, initial value 0xB704CE) over a bit sequence, MSB first. */
export function crc24(bits: ArrayLike<number>, length: number): number {
  let crc = 0xb704ce;
  for (let i = 0; i < length; i++) {
    const top = ((crc >> 23) & 1) ^ bits[i]!;
    crc = (crc << 1) & 0xffffff;
    if (top) crc ^= 0x864cfb;
  }
  return crc;
}

function parity(value: number): number {
  let v = value;
  v ^= v >> 4;
  v ^= v >> 2;
  v ^= v >> 1;
  return v & 1;
}

/** Output pair of the encoder for each (state, input bit): state holds the previous 6 inputs, newest in bit 5. */
const OUTPUTS = (() => {
  const table = new Uint8Array(STATES * 2 * 2);
  for (let state = 0; state < STATES; state++) {
    for (let input = 0; input < 2; input++) {
      const register = (input << TAIL_BITS) | state;
      for (let g = 0; g < 2; g++) table[(state * 2 + input) * 2 + g] = parity(register & GENERATORS[g]!);
    }
  }
  return table;
})();

const nextState = (state: number, input: number) => ((input << (TAIL_BITS - 1)) | (state >> 1)) & (STATES - 1);

/** The coded bits (0/1, length WATERMARK_CODED_BITS) carrying `id`. */
export function encodeWatermarkPayload(id: string): Uint8Array {
  const input = new Uint8Array(INPUT_BITS);
  input.set(idBits(id));
  const crc = crc24(input, WATERMARK_ID_BITS);
  for (let bit = 0; bit < WATERMARK_CHECK_BITS; bit++) input[WATERMARK_ID_BITS + bit] = (crc >> (WATERMARK_CHECK_BITS - 1 - bit)) & 1;
  const coded = new Uint8Array(WATERMARK_CODED_BITS);
  let state = 0;
  for (let step = 0; step < INPUT_BITS; step++) {
    const bit = input[step]!;
    coded[2 * step] = OUTPUTS[(state * 2 + bit) * 2]!;
    coded[2 * step + 1] = OUTPUTS[(state * 2 + bit) * 2 + 1]!;
    state = nextState(state, bit);
  }
  return coded;
}

export interface DecodedPayload {
  id: string;
  /**
   * Agreement of the soft input with the decoded codeword, in [−1, 1]: Σ soft·(±1) / Σ |soft|. A
   * clean read is near 1; a read at the edge of the code's capacity is lower.
   */
  agreement: number;
}

/**
 * Soft-decision Viterbi decoding of `soft` (length WATERMARK_CODED_BITS; positive means bit 0,
 * negative bit 1, 0 an erasure, magnitude the confidence). Returns the id when the decoded bits pass
 * the CRC, else null.
 */
export function decodeWatermarkPayload(soft: ArrayLike<number>): DecodedPayload | null {
  if (soft.length !== WATERMARK_CODED_BITS) throw new RangeError(`expected ${WATERMARK_CODED_BITS} soft values`);
  let metric = new Float64Array(STATES).fill(Number.NEGATIVE_INFINITY);
  let next = new Float64Array(STATES);
  metric[0] = 0;
  const decisions = new Uint8Array(INPUT_BITS * STATES);
  for (let step = 0; step < INPUT_BITS; step++) {
    next.fill(Number.NEGATIVE_INFINITY);
    const a = soft[2 * step]!;
    const b = soft[2 * step + 1]!;
    const inputs = step >= INPUT_BITS - TAIL_BITS ? 1 : 2;
    for (let state = 0; state < STATES; state++) {
      const from = metric[state]!;
      if (from === Number.NEGATIVE_INFINITY) continue;
      for (let input = 0; input < inputs; input++) {
        const o = (state * 2 + input) * 2;
        const gain = (OUTPUTS[o] ? -a : a) + (OUTPUTS[o + 1] ? -b : b);
        const to = nextState(state, input);
        const candidate = from + gain;
        if (candidate > next[to]!) {
          next[to] = candidate;
          // the state's oldest bit (bit 0) is what the transition shifted out: enough to go back
          decisions[step * STATES + to] = state & 1;
        }
      }
    }
    [metric, next] = [next, metric];
  }
  const input = new Uint8Array(INPUT_BITS);
  let state = 0;
  for (let step = INPUT_BITS - 1; step >= 0; step--) {
    input[step] = (state >> (TAIL_BITS - 1)) & 1;
    state = ((state << 1) & (STATES - 1)) | decisions[step * STATES + state]!;
  }
  const crc = crc24(input, WATERMARK_ID_BITS);
  let read = 0;
  for (let bit = 0; bit < WATERMARK_CHECK_BITS; bit++) read = (read << 1) | input[WATERMARK_ID_BITS + bit]!;
  if (read !== crc) return null;
  const id = bitsToId(input);
  const coded = encodeWatermarkPayload(id);
  let agreeing = 0;
  let total = 0;
  for (let i = 0; i < coded.length; i++) {
    agreeing += coded[i] ? -soft[i]! : soft[i]!;
    total += Math.abs(soft[i]!);
  }
  return { id, agreement: total > 0 ? agreeing / total : 0 };
}
