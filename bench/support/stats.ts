/** Figures the benchmarks print: nearest-rank percentiles of latencies, and a bounded job pool. */

/** The nearest-rank percentile of an ascending array. */
export function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

/** "p50 … p99 … max … (n=…)" of latencies in ms; seconds from 1 s up. */
export function describeLatencies(ms: number[]): string {
  const s = [...ms].sort((a, b) => a - b);
  const f = (x: number) => (x >= 1000 ? `${(x / 1000).toFixed(2)} s` : `${x.toFixed(1)} ms`);
  return `p50 ${f(percentile(s, 50))}  p99 ${f(percentile(s, 99))}  max ${f(s.at(-1)!)}  (n=${s.length})`;
}

/** Runs `jobs` with at most `n` at a time; results in the jobs' order. */
export async function pool<T>(jobs: (() => Promise<T>)[], n: number): Promise<T[]> {
  const out: T[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: n }, async () => {
      while (next < jobs.length) {
        const i = next++;
        out[i] = await jobs[i]!();
      }
    }),
  );
  return out;
}
