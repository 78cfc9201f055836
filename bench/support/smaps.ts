/**
 * Where a process's resident memory is, read from /proc/<pid>/smaps (Linux): what RSS alone does not
 * say. Groups, in MB resident:
 * - `node`: the node binary's pages (code and read-only data, shared with other node processes);
 * - `addons`: native addons (`*.node`: Skia, libvips through sharp, sqlite3) and their libraries;
 * - `files`: every other mapped file (system libraries, fonts, SQLite files);
 * - `malloc main`: glibc's main arena (`[heap]`);
 * - `malloc arenas`: glibc's other arenas (64 MB-aligned anonymous reservations of 64 MB; with
 *   `npm start`'s MALLOC_ARENA_MAX=1 there is none, with MALLOC_ARENA_MAX=2 one);
 * - `other anon`: every other anonymous mapping: V8's heaps (main thread and workers), allocations
 *   at or above glibc's mmap threshold (buffers, canvases, array buffers), thread stacks.
 * With jemalloc preloaded (`--env LD_PRELOAD=…libjemalloc.so.2`) glibc's arenas stay empty: jemalloc
 * maps its own extents, which count as `other anon`; `allocator` says which one the process runs.
 */
import { readFileSync, readlinkSync } from 'node:fs';

const ARENA = 64 * 1024 * 1024;

export interface SmapsBreakdown {
  /** the malloc the process runs: jemalloc when its library is mapped, else glibc's */
  allocator: 'jemalloc' | 'glibc';
  node: number;
  addons: number;
  files: number;
  mallocMain: number;
  mallocArenas: number;
  otherAnon: number;
}

export function smapsOf(pid: number): SmapsBreakdown | undefined {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/smaps`, 'utf8');
  } catch {
    return undefined;
  }
  const exe = (() => {
    try {
      return readlinkSync(`/proc/${pid}/exe`);
    } catch {
      return '';
    }
  })();
  interface Region {
    start: number;
    end: number;
    perms: string;
    path: string;
    rss: number;
  }
  const regions: Region[] = [];
  let current: Region | undefined;
  for (const line of text.split('\n')) {
    const head = /^([0-9a-f]+)-([0-9a-f]+) (\S+) \S+ \S+ \S+\s*(.*)$/.exec(line);
    if (head) {
      current = { start: parseInt(head[1]!, 16), end: parseInt(head[2]!, 16), perms: head[3]!, path: head[4]!.trim(), rss: 0 };
      regions.push(current);
      continue;
    }
    const rss = /^Rss:\s+(\d+) kB/.exec(line);
    if (rss && current) current.rss = Number(rss[1]) * 1024;
  }
  const out: SmapsBreakdown = { allocator: regions.some((r) => /\/libjemalloc\.so/.test(r.path)) ? 'jemalloc' : 'glibc', node: 0, addons: 0, files: 0, mallocMain: 0, mallocArenas: 0, otherAnon: 0 };
  // glibc's non-main arenas: an anonymous reservation aligned on and sized 64 MB, its used part
  // read-write and the rest without access (two adjacent mappings)
  const arenaStarts = new Set<number>();
  for (let i = 0; i < regions.length; i++) {
    const r = regions[i]!;
    if (r.path !== '' || r.start % ARENA !== 0) continue;
    let end = r.end;
    for (let j = i + 1; j < regions.length && regions[j]!.path === '' && regions[j]!.start === end && end - r.start < ARENA; j++) end = regions[j]!.end;
    if (end - r.start === ARENA) arenaStarts.add(r.start);
  }
  const inArena = (r: Region) => [...arenaStarts].some((s) => r.start >= s && r.end <= s + ARENA);
  for (const r of regions) {
    if (r.path === '[heap]') out.mallocMain += r.rss;
    else if (r.path === '' || r.path.startsWith('[')) {
      if (inArena(r)) out.mallocArenas += r.rss;
      else out.otherAnon += r.rss;
    } else if (r.path === exe) out.node += r.rss;
    else if (/\.node$|\/node_modules\//.test(r.path)) out.addons += r.rss;
    else out.files += r.rss;
  }
  return out;
}

export function formatSmaps(b: SmapsBreakdown | undefined): string {
  if (!b) return 'smaps: not available';
  const mb = (n: number) => (n / 2 ** 20).toFixed(0);
  const malloc =
    b.allocator === 'jemalloc'
      ? 'malloc: jemalloc (its memory is in other anonymous)'
      : `malloc main arena ${mb(b.mallocMain)}, other arenas ${mb(b.mallocArenas)}`;
  return `smaps, MB: node binary ${mb(b.node)}, native addons ${mb(b.addons)}, other files ${mb(b.files)}; ${malloc}; other anonymous (V8 heaps, large buffers, stacks) ${mb(b.otherAnon)}`;
}
