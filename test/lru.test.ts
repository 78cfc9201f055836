/** The bounded map (src/lib/lru.ts): forgets the least recently used entries, by count or by weight. */
import { describe, expect, it } from 'vitest';
import { Lru } from '../src/lib/lru.ts';

describe('Lru', () => {
  it('keeps at most max entries, forgetting the oldest first', () => {
    const l = new Lru<number, string>(4);
    for (let i = 0; i < 6; i++) l.set(i, `v${i}`);
    expect(l.size).toBe(4);
    expect([0, 1, 2, 3, 4, 5].map((k) => l.get(k))).toEqual([undefined, undefined, 'v2', 'v3', 'v4', 'v5']);
  });

  it('keeps an entry that is read while others come and go', () => {
    const l = new Lru<string, number>(10);
    l.set('hot', 1);
    for (let i = 0; i < 1000; i++) {
      l.set(`k${i}`, i);
      expect(l.get('hot'), `after ${i}`).toBe(1);
    }
    expect(l.size).toBe(10);
    expect(l.get('k999')).toBe(999);
    expect(l.get('k980')).toBeUndefined();
  });

  it('forgets an entry not read for max insertions', () => {
    const l = new Lru<string, number>(10);
    l.set('once', 1);
    expect(l.get('once')).toBe(1);
    for (let i = 0; i < 10; i++) l.set(`k${i}`, i);
    expect(l.get('once')).toBeUndefined();
  });

  it('bounds the total weight, keeping the one read last', () => {
    const l = new Lru<string, Buffer>(100, { max: 30, weigh: (b) => b.length });
    l.set('a', Buffer.alloc(10));
    l.set('b', Buffer.alloc(10));
    l.set('c', Buffer.alloc(10));
    l.get('a');
    l.set('d', Buffer.alloc(10));
    expect([l.get('a') !== undefined, l.get('b') !== undefined, l.get('c') !== undefined, l.get('d') !== undefined]).toEqual([true, false, true, true]);
    expect(l.weightTotal).toBe(30);
    l.set('huge', Buffer.alloc(31));
    expect(l.get('huge')).toBeUndefined();
    expect(l.size).toBe(3);
  });
});
