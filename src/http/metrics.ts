/**
 * A small Prometheus registry (text exposition format 0.0.4): counters, histograms and gauges
 * read at scrape time. The HTTP server counts requests and latency; the service core gets the
 * same registry (or anything with `counter()`) to count cache hits and upstream calls, so one
 * /metrics shows both.
 */

export type Labels = Record<string, string>;

const escapeLabel = (v: string) => v.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/"/g, '\\"');

function labelText(labels: Labels): string {
  const entries = Object.entries(labels);
  if (entries.length === 0) return '';
  return `{${entries.map(([k, v]) => `${k}="${escapeLabel(v)}"`).join(',')}}`;
}

/** Series key: callers pass a metric's labels in one order, so no sorting is needed (hot path). */
function keyOf(labels: Labels): string {
  let k = '';
  for (const name in labels) k += `${name}\u0001${labels[name]}\u0002`;
  return k;
}

const num = (n: number) => (Number.isFinite(n) ? String(n) : n > 0 ? '+Inf' : n < 0 ? '-Inf' : 'NaN');

interface Metric {
  readonly name: string;
  render(): string;
}

/** One labelled series of a counter, bound once by whoever counts it often (no label key per count). */
export class CounterSeries {
  value = 0;
  constructor(readonly labels: Labels) {}
  inc(by = 1): void {
    this.value += by;
  }
}

export class Counter implements Metric {
  private readonly values = new Map<string, CounterSeries>();
  constructor(
    readonly name: string,
    readonly help: string,
  ) {}

  /** The series of these labels, to count on without looking it up again. */
  series(labels: Labels = {}): CounterSeries {
    const k = keyOf(labels);
    let v = this.values.get(k);
    if (!v) this.values.set(k, (v = new CounterSeries(labels)));
    return v;
  }

  inc(labels: Labels = {}, by = 1): void {
    this.series(labels).inc(by);
  }

  get(labels: Labels = {}): number {
    return this.values.get(keyOf(labels))?.value ?? 0;
  }

  render(): string {
    const lines = [`# HELP ${this.name} ${this.help}`, `# TYPE ${this.name} counter`];
    for (const { labels, value } of this.values.values()) lines.push(`${this.name}${labelText(labels)} ${num(value)}`);
    return lines.join('\n');
  }
}

/** One labelled series of a histogram, bound once by whoever observes it often. */
export class HistogramSeries {
  /**
   * Observations per bucket: in the first bucket that holds them only (`render` adds them up into
   * Prometheus's cumulative buckets), one increment per observation instead of one per bucket at or
   * above it (13 for a cached answer's latency: ~300 instructions of it in callgrind).
   */
  readonly counts: number[];
  sum = 0;
  count = 0;
  constructor(
    readonly labels: Labels,
    private readonly buckets: readonly number[],
  ) {
    this.counts = buckets.map(() => 0);
  }
  observe(value: number): void {
    const b = this.buckets;
    let i = 0;
    while (i < b.length && !(value <= b[i]!)) i++;
    if (i < b.length) this.counts[i]!++;
    this.sum += value;
    this.count++;
  }
}

export class Histogram implements Metric {
  private readonly all = new Map<string, HistogramSeries>();
  constructor(
    readonly name: string,
    readonly help: string,
    readonly buckets: readonly number[],
  ) {}

  /** The series of these labels, to observe without looking it up again. */
  series(labels: Labels): HistogramSeries {
    const k = keyOf(labels);
    let s = this.all.get(k);
    if (!s) this.all.set(k, (s = new HistogramSeries(labels, this.buckets)));
    return s;
  }

  observe(labels: Labels, value: number): void {
    this.series(labels).observe(value);
  }

  render(): string {
    const lines = [`# HELP ${this.name} ${this.help}`, `# TYPE ${this.name} histogram`];
    for (const s of this.all.values()) {
      let below = 0;
      this.buckets.forEach((le, i) => lines.push(`${this.name}_bucket${labelText({ ...s.labels, le: num(le) })} ${(below += s.counts[i]!)}`));
      lines.push(`${this.name}_bucket${labelText({ ...s.labels, le: '+Inf' })} ${s.count}`);
      lines.push(`${this.name}_sum${labelText(s.labels)} ${num(s.sum)}`);
      lines.push(`${this.name}_count${labelText(s.labels)} ${s.count}`);
    }
    return lines.join('\n');
  }
}

/** A value read when /metrics is scraped (uptime, memory, sizes owned by someone else). */
export class Gauge implements Metric {
  constructor(
    readonly name: string,
    readonly help: string,
    private readonly read: () => number | [Labels, number][],
  ) {}

  render(): string {
    const lines = [`# HELP ${this.name} ${this.help}`, `# TYPE ${this.name} gauge`];
    let v: number | [Labels, number][];
    try {
      v = this.read();
    } catch {
      return lines.join('\n');
    }
    if (typeof v === 'number') lines.push(`${this.name} ${num(v)}`);
    else for (const [labels, value] of v) lines.push(`${this.name}${labelText(labels)} ${num(value)}`);
    return lines.join('\n');
  }
}

export class MetricsRegistry {
  private readonly metrics = new Map<string, Metric>();

  private add<M extends Metric>(m: M): M {
    const existing = this.metrics.get(m.name);
    if (existing) {
      if (existing.constructor !== m.constructor) throw new Error(`metric ${m.name} registered twice with different types`);
      return existing as M;
    }
    this.metrics.set(m.name, m);
    return m;
  }

  /** The counter of that name (created on first use, shared afterwards). */
  counter(name: string, help: string): Counter {
    return this.add(new Counter(name, help));
  }

  histogram(name: string, help: string, buckets: readonly number[]): Histogram {
    return this.add(new Histogram(name, help, buckets));
  }

  gauge(name: string, help: string, read: () => number | [Labels, number][]): Gauge {
    return this.add(new Gauge(name, help, read));
  }

  render(): string {
    return `${[...this.metrics.values()].map((m) => m.render()).join('\n')}\n`;
  }
}

export const PROMETHEUS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

/** `/players/%23ABC/battlelog?limit=5` → `/players/{tag}/battlelog`: bounded label values. */
export function endpointLabel(path: string): string {
  return (path.split('?')[0] ?? '')
    .replace(/\/(%23|#)[^/]*/gi, '/{tag}')
    .replace(/\/-?\d+(?=\/|$)/g, '/{id}')
    .replace(/\/rankings\/[^/]+/, '/rankings/{countryCode}');
}

/**
 * The upstream client's `onAttempt` hook for this registry: every HTTP attempt to the game API
 * counted by endpoint and outcome (ok, not_found, maintenance, throttled, timeout, ...) and timed.
 */
export function upstreamAttemptRecorder(registry: MetricsRegistry) {
  const attempts = registry.counter('starr_upstream_requests_total', 'HTTP attempts to the game API by endpoint and outcome');
  const seconds = registry.histogram('starr_upstream_request_duration_seconds', 'Latency of HTTP attempts to the game API', [
    0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10,
  ]);
  return (info: { path: string; outcome: string; ms: number }): void => {
    const endpoint = endpointLabel(info.path);
    attempts.inc({ endpoint, outcome: info.outcome });
    seconds.observe({ endpoint }, info.ms / 1000);
  };
}
