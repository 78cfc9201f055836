import { describe, expect, it } from 'vitest';
import { decimal } from '../src/lib/decimal.ts';

describe('decimal', () => {
  it('writes what String writes, at every boundary of its three-digit pieces', () => {
    const edges = [0, 1, 9, 10, 99, 100, 999, 1000, 1001, 9999, 10_000, 99_999, 100_000, 999_999, 1_000_000, 1_000_001, 1_001_000, 999_999_999, 1e9, 1e9 + 1, 1e12 - 1, 1e12, 1e12 + 7, 1e15 - 1];
    for (const n of edges) expect(decimal(n)).toBe(String(n));
  });

  it('writes what String writes for whole numbers of every length', () => {
    let seed = 12345;
    const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    for (let digits = 1; digits <= 15; digits++) {
      for (let i = 0; i < 2000; i++) {
        const n = Math.floor(next() * 10 ** digits);
        expect(decimal(n)).toBe(String(n));
      }
    }
  });

  it('hands anything else to String', () => {
    for (const n of [-1, -1000, 0.5, 1234.5, 1e15, 2 ** 53, 1e21, NaN, Infinity, -Infinity, -0]) expect(decimal(n)).toBe(String(n));
  });

  it('keeps the zeros inside a number and adds none in front', () => {
    expect(decimal(1_000_000_000)).toBe('1000000000');
    expect(decimal(1_002_003)).toBe('1002003');
    expect(decimal(999_999_998)).toBe('999999998');
  });
});
