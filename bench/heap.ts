/**
 * What the main thread's heap holds in a service that has started and answered nothing: `starr
 * serve` as `npm start` runs it (support/service.ts), once it is quiet (the demo backfill and the
 * poller's first rounds done), a heap snapshot (node's --heapsnapshot-signal). One snapshot's live
 * heap does not depend on where the collector happened to be, so a change of a few MB shows run
 * after run where RSS readings scatter by ±40 MB (bench:memory).
 *
 * `--load N` takes it instead after N seconds of bench:memory's mixed load (support/mixed-load.ts;
 * `--clients`, `--tags` as there), started as soon as the service answers, as bench:memory does, and
 * still running when the snapshot is taken: what the caches hold once the load has filled them.
 *
 * Prints RSS and /metrics' heap figures before the snapshot; then from the snapshot: the live heap
 * (V8's objects; the bytes of ArrayBuffers live outside it and are left out of it), the modules
 * loaded per package (count and source bytes: V8 keeps every module's source), the largest
 * retainers (dominator tree: what would be freed with each), and the ArrayBuffers' bytes by the
 * object that keeps them (the pictures' cache, the serialized bodies).
 *
 *   npm run bench:heap [-- --port 19100 --env CACHE_MEMORY_MB=8 --top 25 --keep --load 60 --clients 16 --tags 500]
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { mixedLoad, type MixedLoad } from './support/mixed-load.ts';
import { ROOT, rssOf, settled, serviceEnv, startService, until } from './support/service.ts';

const { values } = parseArgs({
  options: {
    port: { type: 'string' },
    env: { type: 'string', multiple: true, default: [] },
    top: { type: 'string', default: '25' },
    /** keep the snapshot file (its path is printed) */
    keep: { type: 'boolean', default: false },
    /** seconds of bench:memory's mixed load before the snapshot (0: none, the service quiet) */
    load: { type: 'string', default: '0' },
    clients: { type: 'string', default: '16' },
    tags: { type: 'string', default: '500' },
  },
});
const top = Number(values.top);
const loadSeconds = Number(values.load);
if (!(loadSeconds >= 0)) throw new Error(`--load takes seconds (0 or more), not ${values.load}`);
const env = serviceEnv(values.env, values.port);
const dir = mkdtempSync(join(tmpdir(), 'starr-heap-'));
env.NODE_OPTIONS = `${env.NODE_OPTIONS ?? process.env.NODE_OPTIONS ?? ''} --heapsnapshot-signal=SIGUSR2 --diagnostic-dir=${dir}`.trim();

const load = () => loadavg().map((l) => l.toFixed(1)).join(' ');
// built first: a service that builds the bundle itself holds esbuild
execFileSync(process.execPath, [join(ROOT, 'bin/build.js')], { stdio: 'ignore' });
const service = await startService({ env });
let file: string;
let mixed: MixedLoad | undefined;
try {
  let when: string;
  if (loadSeconds > 0) {
    mixed = mixedLoad(service.base, { clients: Number(values.clients), tags: Number(values.tags) });
    await new Promise((r) => setTimeout(r, loadSeconds * 1000));
    when = `after ${loadSeconds} s of the mixed load (${values.clients} clients, ${values.tags} tags; ${mixed.done} requests, statuses ${[...mixed.statuses].map(([s, n]) => `${s || 'error'}: ${n}`).join(', ')}), the load still running`;
  } else when = `quiet after ${(await settled(service.pid)).toFixed(0)} s`;
  const metrics = await (await fetch(`${service.base}/metrics`)).text();
  const heap = (kind: string) => Number(new RegExp(`starr_process_memory_bytes\\{thread="main",kind="${kind}"\\} (\\d+)`).exec(metrics)?.[1] ?? NaN) / 1e6;
  // what the answers' layer counts against CACHE_MEMORY_MB (JSON bytes), to set against what StatsService retains below
  const answers = Number(/starr_cache_memory_bytes\{cache="answers"\} (\d+)/.exec(metrics)?.[1] ?? NaN) / 1e6;
  console.log(
    `${new Date().toISOString()}  ${when}; RSS ${rssOf(service.pid).toFixed(0)} MB; main heap used ${heap('heap_used').toFixed(0)} MB of ${heap('heap_total').toFixed(0)}; the answers' layer counts ${answers.toFixed(2)} MB of JSON${values.env.length ? `; ${values.env.join(' ')}` : ''}; load average ${load()}`,
  );
  process.kill(service.pid, 'SIGUSR2');
  // the snapshot is written on the main thread: once it answers again, the file is complete
  file = await until(
    'the heap snapshot',
    async () => {
      const f = readdirSync(dir).find((n) => n.endsWith('.heapsnapshot'));
      if (!f || statSync(join(dir, f)).size === 0) return undefined;
      return (await fetch(`${service.base}/healthz`)).ok ? join(dir, f) : undefined;
    },
    120_000,
  );
} finally {
  await mixed?.stop();
  await service.stop();
}

interface Snapshot {
  snapshot: { meta: { node_fields: string[]; node_types: [string[]]; edge_fields: string[]; edge_types: [string[]] } };
  nodes: number[];
  edges: number[];
  strings: string[];
}
const snap = JSON.parse(readFileSync(file, 'utf8')) as Snapshot;
if (values.keep) console.log(`snapshot: ${file}`);
else rmSync(dir, { recursive: true, force: true });
const meta = snap.snapshot.meta;
const NF = meta.node_fields.length;
const EF = meta.edge_fields.length;
const [T, NAME, SELF, EDGES] = ['type', 'name', 'self_size', 'edge_count'].map((f) => meta.node_fields.indexOf(f)) as [number, number, number, number];
const [ET, ENAME, ETO] = ['type', 'name_or_index', 'to_node'].map((f) => meta.edge_fields.indexOf(f)) as [number, number, number];
const { nodes, edges, strings } = snap;
const N = nodes.length / NF;
const type = (v: number) => meta.node_types[0][nodes[v * NF + T]!]!;
const name = (v: number) => strings[nodes[v * NF + NAME]!]!;
const self = (v: number) => nodes[v * NF + SELF]!;
const firstEdge = new Uint32Array(N + 1);
for (let v = 0, e = 0; v < N; v++) {
  firstEdge[v] = e;
  e += nodes[v * NF + EDGES]! * EF;
  firstEdge[v + 1] = e;
}
const edgeType = (e: number) => meta.edge_types[0][edges[e + ET]!]!;
const target = (e: number) => edges[e + ETO]! / NF;

// the live heap, and what of it is module sources (a script's `source` string) and compiled code
let live = 0;
const byType = new Map<string, number>();
for (let v = 0; v < N; v++) {
  if (type(v) === 'native') continue;
  live += self(v);
  byType.set(type(v), (byType.get(type(v)) ?? 0) + self(v));
}
const packages = new Map<string, { count: number; bytes: number }>();
let sources = 0;
for (let v = 0; v < N; v++) {
  if (type(v) !== 'code' || !/^(file:|\/)/.test(name(v))) continue;
  let bytes = 0;
  for (let e = firstEdge[v]!; e < firstEdge[v + 1]!; e += EF) if (strings[edges[e + ENAME]!] === 'source') bytes = self(target(e));
  sources += bytes;
  const path = name(v).replace(/^file:\/\//, '');
  const i = path.lastIndexOf('node_modules/');
  const parts = i >= 0 ? path.slice(i + 13).split('/') : [];
  const key = i >= 0 ? (parts[0]!.startsWith('@') ? `${parts[0]}/${parts[1]}` : parts[0]!) : path.includes('/.build/') ? "the service's bundle" : 'other';
  const p = packages.get(key) ?? { count: 0, bytes: 0 };
  p.count++;
  p.bytes += bytes;
  packages.set(key, p);
}
const mb = (b: number) => (b / 1e6).toFixed(2);
console.log(
  `live heap ${mb(live)} MB: strings ${mb((byType.get('string') ?? 0) + (byType.get('concatenated string') ?? 0) + (byType.get('sliced string') ?? 0))} (of which module sources ${mb(sources)}), objects ${mb(byType.get('object') ?? 0)}, arrays ${mb(byType.get('array') ?? 0)}, code ${mb(byType.get('code') ?? 0)}, closures ${mb(byType.get('closure') ?? 0)}, shapes and other ${mb(live - [...byType].filter(([t]) => /string|object|array|code|closure/.test(t)).reduce((s, [, b]) => s + b, 0))}`,
);
console.log(`modules loaded, by package (modules, source MB):`);
console.log(
  [...packages]
    .sort((a, b) => b[1].bytes - a[1].bytes)
    .slice(0, top)
    .map(([k, p]) => `  ${k} ${p.count}, ${mb(p.bytes)}`)
    .join('\n'),
);

// dominators (Cooper, Harvey, Kennedy) over the strong edges: retained size of each node
const weak = (e: number) => edgeType(e) === 'weak';
const order = new Int32Array(N).fill(-1);
const post = new Int32Array(N);
let count = 0;
{
  const stackV = new Int32Array(N);
  const stackE = new Uint32Array(N);
  const seen = new Uint8Array(N);
  let sp = 1;
  stackV[0] = 0;
  stackE[0] = firstEdge[0]!;
  seen[0] = 1;
  while (sp > 0) {
    const v = stackV[sp - 1]!;
    const e = stackE[sp - 1]!;
    if (e < firstEdge[v + 1]!) {
      stackE[sp - 1] = e + EF;
      if (weak(e)) continue;
      const w = target(e);
      if (!seen[w]) {
        seen[w] = 1;
        stackV[sp] = w;
        stackE[sp] = firstEdge[w]!;
        sp++;
      }
    } else {
      order[v] = count;
      post[count++] = v;
      sp--;
    }
  }
}
const predStart = new Uint32Array(N + 1);
for (let v = 0; v < N; v++) if (order[v]! >= 0) for (let e = firstEdge[v]!; e < firstEdge[v + 1]!; e += EF) if (!weak(e)) predStart[target(e) + 1]!++;
for (let v = 0; v < N; v++) predStart[v + 1]! += predStart[v]!;
const preds = new Uint32Array(predStart[N]!);
const fill = predStart.slice(0, N);
for (let v = 0; v < N; v++) if (order[v]! >= 0) for (let e = firstEdge[v]!; e < firstEdge[v + 1]!; e += EF) if (!weak(e)) preds[fill[target(e)]!++] = v;
const idom = new Int32Array(N).fill(-1);
idom[0] = 0;
for (let changed = true; changed; ) {
  changed = false;
  for (let k = count - 2; k >= 0; k--) {
    const b = post[k]!;
    let d = -1;
    for (let p = predStart[b]!; p < predStart[b + 1]!; p++) {
      let q = preds[p]!;
      if (idom[q] === -1) continue;
      if (d === -1) {
        d = q;
        continue;
      }
      while (q !== d) {
        while (order[q]! < order[d]!) q = idom[q]!;
        while (order[d]! < order[q]!) d = idom[d]!;
      }
    }
    if (idom[b] !== d) {
      idom[b] = d;
      changed = true;
    }
  }
}
const retained = new Float64Array(N);
for (let k = 0; k < count; k++) {
  const v = post[k]!;
  if (type(v) !== 'native') retained[v]! += self(v);
  if (v !== 0) retained[idom[v]!]! += retained[v]!;
}
/** the name of the edge by which `parent` holds `child` */
function via(parent: number, child: number): string {
  for (let e = firstEdge[parent]!; e < firstEdge[parent + 1]!; e += EF) {
    if (target(e) !== child) continue;
    const t = edgeType(e);
    return t === 'element' || t === 'hidden' ? `[${edges[e + ENAME]}]` : String(strings[edges[e + ENAME]!]);
  }
  return '?';
}
/** a node, and for a scope (a module's or a closure's variables) its largest variables */
function label(v: number): string {
  const text = `${type(v)} ${name(v).slice(0, 60).replace(/\s+/g, ' ')}`;
  if (name(v) !== 'system / Context') return text;
  const vars: [string, number][] = [];
  for (let e = firstEdge[v]!; e < firstEdge[v + 1]!; e += EF) if (edgeType(e) === 'context' && idom[target(e)] === v) vars.push([strings[edges[e + ENAME]!]!, retained[target(e)]!]);
  return `${text} (${vars.sort((a, b) => b[1] - a[1]).slice(0, 3).map(([n, b]) => `${n} ${mb(b)}`).join(', ')})`;
}
// the largest retainers that are not mostly one retainer listed above them
const big: number[] = [];
for (let v = 1; v < N; v++) if (order[v]! >= 0 && retained[v]! > 250_000 && type(v) !== 'synthetic') big.push(v);
const bigSet = new Set(big);
const listed = big.filter((v) => {
  for (let d = idom[v]!; d !== 0; d = idom[d]!) if (bigSet.has(d) && retained[d]! < 1.5 * retained[v]!) return false;
  return true;
});
console.log('largest retainers (MB retained: what, held by):');
for (const v of listed.sort((a, b) => retained[b]! - retained[a]!).slice(0, top)) {
  const d = idom[v]!;
  console.log(`  ${mb(retained[v]!)}  ${label(v)}  <- ${type(d) === 'synthetic' ? 'a root' : `${via(d, v)} of ${label(d)}`}`);
}

// The bytes of ArrayBuffers (Buffers, pictures) live outside V8's heap but count in RSS: by the
// first object above each, in the dominator tree, that is not a buffer, an array or a plain object
// (a cache, a service: what keeps them).
const plain = /^(ArrayBuffer|SharedArrayBuffer|Buffer|FastBuffer|Uint8Array|Object|Map|Set|system \/ .*|\(.*\))$/;
const holders = new Map<string, { count: number; bytes: number }>();
let bufferBytes = 0;
for (let v = 0; v < N; v++) {
  if (type(v) !== 'native' || name(v) !== 'system / JSArrayBufferData' || order[v]! < 0) continue;
  bufferBytes += self(v);
  let h = idom[v]!;
  while (h !== 0 && (type(h) !== 'object' || plain.test(name(h)))) h = idom[h]!;
  const key = h === 0 ? 'the roots' : `${label(h)} <- ${type(idom[h]!) === 'synthetic' ? 'a root' : `${via(idom[h]!, h)} of ${label(idom[h]!)}`}`;
  const g = holders.get(key) ?? { count: 0, bytes: 0 };
  g.count++;
  g.bytes += self(v);
  holders.set(key, g);
}
console.log(`ArrayBuffers' bytes (outside the heap) ${mb(bufferBytes)} MB, by holder (MB, buffers):`);
for (const [k, g] of [...holders].sort((a, b) => b[1].bytes - a[1].bytes).slice(0, Math.min(top, 10))) console.log(`  ${mb(g.bytes)} ${g.count}  ${k}`);
