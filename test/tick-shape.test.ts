/**
 * bin/tick-shape.js: with one tick object held, process.nextTick's object literal keeps monomorphic
 * inline caches through the full collections of an idle service; without it, V8 (Node 20) loses the
 * tick object's shape and the literal's caches end megamorphic (each property a runtime call).
 *
 * The scenario runs in a child node with --expose-gc (full collections on demand, as V8's memory
 * reducer runs them when a service goes idle), --allow-natives-syntax (%DebugPrint shows the
 * feedback of nextTick's literal slots) and --no-concurrent-recompilation: V8 optimises nextTick on
 * the main thread, at the same point of every run, instead of on a helper thread whose compile ends
 * whenever the machine lets it. With the helper thread the outcome without the holder depended on
 * that moment (the literal's feedback stayed monomorphic in 10 of 25 runs of the scenario on the
 * 2-core machine, 2026-11-29, and failed one CI run); on the main thread it was megamorphic in 20 of
 * 20 (Node 20, both cores busy) and 10 of 10 (Node 24) without the holder, monomorphic in every run
 * with it. No timing is measured.
 */
import { spawnSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';

const TICK_SHAPE = pathToFileURL(fileURLToPath(new URL('../bin/tick-shape.js', import.meta.url))).href;

/** The states of nextTick's DefineKeyedOwnPropertyInLiteral slots after bursts of ticks, each followed by three full collections. */
function literalStates(hold: boolean): { states: string[]; held: string[] } {
  const script = `
    import { heldTick, holdTickShape } from ${JSON.stringify(TICK_SHAPE)};
    if (${hold}) holdTickShape();
    const noop = () => {};
    for (let round = 0; round < 6; round++) {
      for (let i = 0; i < 20000; i++) process.nextTick(noop);
      await new Promise((resolve) => setTimeout(resolve, 5));
      for (let g = 0; g < 3; g++) globalThis.gc();
    }
    console.log('held ' + JSON.stringify(heldTick() ? Object.getOwnPropertySymbols(heldTick()).map(String) : []));
    %DebugPrint(process.nextTick);
  `;
  // into a file: V8 prints through C's stdout, whose last buffer a pipe did not always get at exit
  const dir = mkdtempSync(join(tmpdir(), 'tick-shape-'));
  const fd = openSync(join(dir, 'out'), 'w');
  let out: string;
  try {
    const child = spawnSync(process.execPath, ['--expose-gc', '--allow-natives-syntax', '--no-concurrent-recompilation', '--input-type=module', '-e', script], { stdio: ['ignore', fd, fd] });
    out = readFileSync(join(dir, 'out'), 'utf8');
    if (child.status !== 0) throw new Error(`the scenario failed (${child.status}): ${out}`);
  } finally {
    closeSync(fd);
    rmSync(dir, { recursive: true, force: true });
  }
  const states = [...out.matchAll(/slot #\d+ DefineKeyedOwnPropertyInLiteral (\w+)/g)].map((m) => m[1]!);
  const held = JSON.parse(/^held (.*)$/m.exec(out)?.[1] ?? 'null') as string[];
  return { states, held };
}

describe('the tick object held by bin/tick-shape.js', () => {
  it('is one of process.nextTick’s tick objects', () => {
    const { held } = literalStates(true);
    // Node 24 adds its async context frame (Symbol(kAsyncContextFrame)) to the two ids
    expect(held).toEqual(expect.arrayContaining(['Symbol(async_id_symbol)', 'Symbol(trigger_async_id_symbol)']));
  });

  it('keeps nextTick’s literal monomorphic through the collections of an idle process', () => {
    const { states } = literalStates(true);
    // the literal's properties: two symbols, callback, args (Node 24: and the async context frame)
    expect(states.length).toBeGreaterThanOrEqual(4);
    expect(new Set(states)).toEqual(new Set(['MONOMORPHIC']));
  });

  it('without it, the same collections leave the literal megamorphic (what the holder is for)', () => {
    const { states, held } = literalStates(false);
    expect(held).toEqual([]);
    expect(states.length).toBeGreaterThanOrEqual(4);
    expect(states).toContain('MEGAMORPHIC');
  });
});
