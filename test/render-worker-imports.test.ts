/**
 * What the render worker loads: every module it imports (src/render/worker-main.ts and what it
 * reaches, dynamic imports included) as esbuild resolves them. zod and the API's schemas stay in
 * the main thread: the worker draws with the API's time and colour helpers (upstream/api-format.ts),
 * and zod's modules cost each worker's heap a few MB (bench:heap's module table, docs/benchmarks.md
 * *Memory*).
 */
import { build } from 'esbuild';
import { describe, expect, it } from 'vitest';

describe('the render worker', () => {
  it('does not load zod or the API schemas', async () => {
    const { metafile } = await build({
      entryPoints: ['src/render/worker-main.ts'],
      bundle: true,
      write: false,
      metafile: true,
      platform: 'node',
      format: 'esm',
      packages: 'external',
      logLevel: 'silent',
    });
    const inputs = Object.keys(metafile.inputs);
    expect(inputs).toContain('src/render/worker-main.ts');
    expect(inputs).toContain('src/upstream/api-format.ts');
    expect(inputs).not.toContain('src/upstream/schemas.ts');
    const zodImporters = Object.entries(metafile.inputs)
      .filter(([, i]) => i.imports.some((m) => m.path === 'zod' || m.path.startsWith('zod/')))
      .map(([f]) => f);
    expect(zodImporters).toEqual([]);
  });
});
