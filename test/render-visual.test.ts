/**
 * Visual regression: every reference picture (test/fixtures/render/reference, a fixed simulated
 * world at a fixed instant) is rendered again and compared pixel by pixel. A changed look fails
 * here until the references are regenerated with `npm run test:update-images` and looked at.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pixelmatch from 'pixelmatch';
import { PNG } from 'pngjs';
import { describe, expect, it } from 'vitest';
import { gunzipSync } from 'node:zlib';
import { renderPng } from '../src/render/index.ts';
import type { ReferenceCase } from './fixtures/render/cases.ts';

const dir = join(fileURLToPath(new URL('.', import.meta.url)), 'fixtures', 'render', 'reference');
/** What each reference picture shows, recorded from the simulated world when the references were made. */
const cases = JSON.parse(gunzipSync(readFileSync(join(dir, 'jobs.json.gz'))).toString('utf8')) as ReferenceCase[];

/** Anti-aliasing may differ by a shade between CPUs; a changed picture differs in far more pixels. */
const MAX_DIFF_RATIO = 0.002;

describe('pictures match their references', () => {
  it('has a reference for every case, covering every option of every endpoint', () => {
    expect(cases.length).toBeGreaterThanOrEqual(29);
    const missing = cases.filter((c) => !existsSync(join(dir, `${c.name}.png`))).map((c) => c.name);
    expect(missing).toEqual([]);
  });

  for (const c of cases) {
    it(c.name, async () => {
      const ref = PNG.sync.read(readFileSync(join(dir, `${c.name}.png`)));
      const now = PNG.sync.read(await renderPng(c.job));
      expect([now.width, now.height]).toEqual([ref.width, ref.height]);
      const diff = pixelmatch(ref.data, now.data, undefined, ref.width, ref.height, { threshold: 0.1 });
      expect(diff / (ref.width * ref.height)).toBeLessThanOrEqual(MAX_DIFF_RATIO);
    });
  }

  it('notices a changed picture', async () => {
    const c = cases.find((x) => x.name === 'player-image-1-low')!;
    const ref = PNG.sync.read(readFileSync(join(dir, `${c.name}.png`)));
    const changed = structuredClone(c.job) as typeof c.job & { kind: 'playerImage' };
    changed.input.player.trophies += 1111;
    const now = PNG.sync.read(await renderPng(changed));
    const diff = pixelmatch(ref.data, now.data, undefined, ref.width, ref.height, { threshold: 0.1 });
    expect(diff / (ref.width * ref.height)).toBeGreaterThan(MAX_DIFF_RATIO);
  });
});
