/**
 * bin/shapes.js.
 *
 * holdTickShape: with one tick object held, process.nextTick's object literal keeps monomorphic
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
 *
 * settleHttpShapes: a server whose first responses are each collected (a full collection after
 * each, as start-up's collections can fall) makes its seventh and later responses dictionaries
 * (`%HasFastProperties` false) and keeps its requests' properties outside the objects unless they
 * were settled first; settled, a sent response and its request keep every property in the object
 * (`%DebugPrint`). The scenario runs a real node:http server and fetch in a child node with
 * --expose-gc and --allow-natives-syntax.
 */
import { spawnSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';

const SHAPES = pathToFileURL(fileURLToPath(new URL('../bin/shapes.js', import.meta.url))).href;

/** Runs a module script in a child node with --expose-gc and --allow-natives-syntax (and more flags); its output. */
function scenario(script: string, flags: string[] = []): string {
  // into a file: V8 prints through C's stdout, whose last buffer a pipe did not always get at exit
  const dir = mkdtempSync(join(tmpdir(), 'shapes-'));
  const fd = openSync(join(dir, 'out'), 'w');
  try {
    const child = spawnSync(process.execPath, ['--expose-gc', '--allow-natives-syntax', ...flags, '--input-type=module', '-e', script], { stdio: ['ignore', fd, fd] });
    const out = readFileSync(join(dir, 'out'), 'utf8');
    if (child.status !== 0) throw new Error(`the scenario failed (${child.status}): ${out}`);
    return out;
  } finally {
    closeSync(fd);
    rmSync(dir, { recursive: true, force: true });
  }
}

/** `f`'s result, worked out at the first call (a scenario two tests read spawns its child node once). */
function lazily<T>(f: () => T): () => T {
  let result: { value: T } | undefined;
  return () => (result ??= { value: f() }).value;
}

/** The states of nextTick's DefineKeyedOwnPropertyInLiteral slots after bursts of ticks, each followed by three full collections. */
function literalStates(hold: boolean): { states: string[]; held: string[] } {
  const script = `
    import { heldTick, holdTickShape } from ${JSON.stringify(SHAPES)};
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
  const out = scenario(script, ['--no-concurrent-recompilation']);
  const states = [...out.matchAll(/slot #\d+ DefineKeyedOwnPropertyInLiteral (\w+)/g)].map((m) => m[1]!);
  const held = JSON.parse(/^held (.*)$/m.exec(out)?.[1] ?? 'null') as string[];
  return { states, held };
}

describe('the tick object held by bin/shapes.js', () => {
  const holding = lazily(() => literalStates(true));

  it('is one of process.nextTick’s tick objects', () => {
    const { held } = holding();
    // Node 24 adds its async context frame (Symbol(kAsyncContextFrame)) to the two ids
    expect(held).toEqual(expect.arrayContaining(['Symbol(async_id_symbol)', 'Symbol(trigger_async_id_symbol)']));
  });

  it('keeps nextTick’s literal monomorphic through the collections of an idle process', () => {
    const { states } = holding();
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

/** Where an object printed by `%DebugPrint` keeps its properties: `FixedArray` (an empty one: all in the object), `PropertyArray` or `NameDictionary`. */
function propertiesOf(printed: string | undefined): string {
  return /^ - properties: 0x[0-9a-f]+ <(\w+)/m.exec(printed ?? '')?.[1] ?? 'none printed';
}

/**
 * `%HasFastProperties` of each of a server's first ten responses, with a full collection after each
 * answer, and where the tenth response and request keep their properties once the answer is sent
 * (`%DebugPrint`'s `properties:` line).
 */
function httpObjects(settle: boolean): { fast: boolean[]; made: number[]; response: string; request: string } {
  const script = `
    import { createServer } from 'node:http';
    import { settleHttpShapes } from ${JSON.stringify(SHAPES)};
    const made = ${settle} ? [settleHttpShapes(), settleHttpShapes()] : [];
    const fast = [];
    const server = createServer((req, res) => {
      fast.push(%HasFastProperties(res));
      res.writeHead(200, ['content-type', 'text/plain', 'content-length', '2']);
      res.end('ok');
      if (fast.length === 10) res.on('finish', () => setImmediate(() => { %DebugPrint(res); %DebugPrint(req); }));
    });
    await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = 'http://127.0.0.1:' + server.address().port + '/';
    for (let i = 0; i < 10; i++) {
      await (await fetch(url, { headers: { connection: 'close' } })).text();
      await new Promise((resolve) => setTimeout(resolve, 5));
      globalThis.gc();
    }
    server.close();
    console.log('result ' + JSON.stringify({ fast, made }));
  `;
  const out = scenario(script);
  // the two prints in the order made (both through C's stdout): the response's, then the request's
  const prints = out.split(/^DebugPrint: /m).slice(1);
  expect(prints).toHaveLength(2);
  return {
    ...(JSON.parse(/^result (.*)$/m.exec(out)?.[1] ?? 'null') as { fast: boolean[]; made: number[] }),
    response: propertiesOf(prints[0]),
    request: propertiesOf(prints[1]),
  };
}

describe('node:http objects settled by bin/shapes.js', () => {
  const settled = lazily(() => httpObjects(true));

  it('keep fast properties in every response when collections fall between the first ones', () => {
    const { fast, made } = settled();
    // eight of each, once: the second call does nothing
    expect(made).toEqual([16, 0]);
    expect(fast).toEqual(Array(10).fill(true));
  });

  it('keep every property of a sent response and of its request in the object itself', () => {
    const { response, request } = settled();
    expect(response).toBe('FixedArray');
    expect(request).toBe('FixedArray');
  });

  it('without it, the seventh and later responses are dictionaries, and requests keep their properties outside (what the settling is for)', () => {
    const { fast, response, request } = httpObjects(false);
    expect(fast).toHaveLength(10);
    expect(fast.slice(0, 6)).toEqual(Array(6).fill(true));
    expect(fast.slice(6)).toEqual(Array(4).fill(false));
    expect(response).toBe('NameDictionary');
    // Node 20: all 27 in a PropertyArray; Node 24: a dictionary
    expect(['PropertyArray', 'NameDictionary']).toContain(request);
  });
});
