/** Prometheus histograms (src/http/metrics.ts): cumulative buckets, +Inf, sum and count as exposed. */
import { describe, expect, it } from 'vitest';
import { MetricsRegistry } from '../src/http/metrics.ts';

describe('a histogram', () => {
  it('exposes cumulative buckets, +Inf, sum and count of what was observed, per series', () => {
    const m = new MetricsRegistry();
    const h = m.histogram('t_seconds', 'test', [0.001, 0.01, 0.1]);
    const a = h.series({ route: '/a' });
    for (const v of [0.0005, 0.001, 0.005, 0.05, 0.05, 2, NaN]) a.observe(v);
    h.observe({ route: '/b' }, 0.02);
    const text = m.render();
    const lines = (route: string) => text.split('\n').filter((l) => l.startsWith('t_seconds') && l.includes(`route="${route}"`));
    expect(lines('/a')).toEqual([
      't_seconds_bucket{route="/a",le="0.001"} 2',
      't_seconds_bucket{route="/a",le="0.01"} 3',
      't_seconds_bucket{route="/a",le="0.1"} 5',
      't_seconds_bucket{route="/a",le="+Inf"} 7',
      expect.stringMatching(/^t_seconds_sum\{route="\/a"\} /),
      't_seconds_count{route="/a"} 7',
    ]);
    expect(lines('/b')).toEqual([
      't_seconds_bucket{route="/b",le="0.001"} 0',
      't_seconds_bucket{route="/b",le="0.01"} 0',
      't_seconds_bucket{route="/b",le="0.1"} 1',
      't_seconds_bucket{route="/b",le="+Inf"} 1',
      't_seconds_sum{route="/b"} 0.02',
      't_seconds_count{route="/b"} 1',
    ]);
  });
});
