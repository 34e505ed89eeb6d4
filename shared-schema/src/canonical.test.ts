import { describe, expect, it } from 'vitest';
import { canonicalJson, sha256Hex, timingSafeEqual } from './canonical.js';

describe('canonicalJson', () => {
  it('sorts keys at every depth and drops whitespace', () => {
    expect(canonicalJson({ b: 1, a: { d: [3, { z: null, y: true }], c: 'x' } })).toBe('{"a":{"c":"x","d":[3,{"y":true,"z":null}]},"b":1}');
  });

  it('orders keys by UTF-16 code units as RFC 8785 does', () => {
    expect(canonicalJson({ '\u00e9': 1, z: 2, Z: 3, '1': 4 })).toBe('{"1":4,"Z":3,"z":2,"\u00e9":1}');
  });

  it('writes numbers the way ECMAScript does', () => {
    expect(canonicalJson([1e21, 0.1, -0, 1.5e-7, 100])).toBe('[1e+21,0.1,0,1.5e-7,100]');
  });

  it('refuses values JSON cannot carry faithfully', () => {
    expect(() => canonicalJson(Number.NaN)).toThrow(TypeError);
    expect(() => canonicalJson({ a: () => 1 })).toThrow(TypeError);
  });
});

describe('sha256Hex', () => {
  it('matches the published digest of "abc"', async () => {
    expect(await sha256Hex('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  });
});

describe('timingSafeEqual', () => {
  it('tells equal from different strings, including different lengths', () => {
    expect(timingSafeEqual('vip_abc', 'vip_abc')).toBe(true);
    expect(timingSafeEqual('vip_abc', 'vip_abd')).toBe(false);
    expect(timingSafeEqual('vip_abc', 'vip_ab')).toBe(false);
  });
});
