/**
 * The main thread's garbage collections as `node --trace-gc-nvp` prints them (one line of name=value
 * pairs per collection), for bench:http's `--gc`: how often each server collects per answer, how
 * long a collection pauses it, and how many bytes each answer allocates, leaves alive at a minor
 * collection (survived) and moves to the old generation (promoted).
 */
import { createReadStream, statSync } from 'node:fs';
import { createInterface } from 'node:readline';

export interface Collection {
  /** V8's kind: s (scavenge, a minor collection), mc (mark-compact, a major one), ms, mmc… */
  kind: string;
  pauseMs: number;
  /** bytes allocated since the collection before */
  allocated: number;
  /** bytes of the young generation still alive and kept in it */
  survived: number;
  /** bytes moved to the old generation */
  promoted: number;
  /** the scavenge's phases in ms (roots, parallel: the remembered set and the copying), 0 when not printed */
  roots: number;
  parallel: number;
}

/** One collection of a --trace-gc-nvp line, or undefined for any other line. */
export function parseCollection(line: string): Collection | undefined {
  const at = line.indexOf(' gc=');
  if (at < 0 || !line.includes('pause=')) return undefined;
  const f = new Map<string, string>();
  for (const pair of line.slice(line.indexOf('pause=')).split(' ')) {
    const eq = pair.indexOf('=');
    if (eq > 0) f.set(pair.slice(0, eq), pair.slice(eq + 1));
  }
  const n = (k: string) => Number(f.get(k) ?? 0) || 0;
  return {
    kind: f.get('gc') ?? '?',
    pauseMs: n('pause'),
    allocated: n('allocated'),
    survived: n('new_space_survived'),
    promoted: n('promoted'),
    roots: n('scavenge.roots'),
    parallel: n('scavenge.parallel'),
  };
}

/** The collections in bytes [start, end) of a log file (other lines skipped). */
export async function collectionsIn(file: string, start: number, end = statSync(file).size): Promise<Collection[]> {
  const out: Collection[] = [];
  if (end <= start) return out;
  for await (const line of createInterface({ input: createReadStream(file, { start, end: end - 1 }), crlfDelay: Infinity })) {
    if (!line.includes(' gc=')) continue;
    const c = parseCollection(line);
    if (c) out.push(c);
  }
  return out;
}

/**
 * "GC: 8.0 scavenges per 1,000 answers, 1.12 ms each (roots 0.05, parallel 0.80), 1.21 µs per
 * answer; per answer 10,888 B allocated, 55 survived, 38 promoted; 1 major (20.6 ms)".
 */
export function describeCollections(cs: Collection[], answers: number): string {
  const n = Math.max(1, answers);
  const minor = cs.filter((c) => c.kind === 's' || c.kind === 'mmc');
  const major = cs.filter((c) => !minor.includes(c));
  const sum = (xs: Collection[], k: keyof Omit<Collection, 'kind'>) => xs.reduce((a, c) => a + c[k], 0);
  const each = (k: 'pauseMs' | 'roots' | 'parallel') => (minor.length ? sum(minor, k) / minor.length : 0).toFixed(2);
  // as the scavenges count them: a mark-compact's line may print a nonsense `allocated` (2^47 and more)
  const per = (k: 'allocated' | 'survived' | 'promoted') => Math.round(sum(minor, k) / n).toLocaleString('en-US');
  return (
    `GC: ${((minor.length * 1000) / n).toFixed(1)} scavenges per 1,000 answers, ${each('pauseMs')} ms each (roots ${each('roots')}, parallel ${each('parallel')}), ` +
    `${((sum(minor, 'pauseMs') * 1000) / n).toFixed(2)} µs per answer; per answer ${per('allocated')} B allocated, ${per('survived')} survived, ${per('promoted')} promoted` +
    `; ${major.length} major${major.length ? ` (${major.map((c) => c.pauseMs.toFixed(1)).join(', ')} ms)` : ''}`
  );
}
