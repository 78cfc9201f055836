/**
 * Renderers and the ImageService over a fixed simulated world: every option of every picture at
 * every quality is a decodable PNG of the documented size; the content cache renders once; the
 * worker pool encodes off the main thread and refuses work beyond its queue.
 */
import { wordsFor } from '../src/render/words.ts';
import { existsSync, readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { readlink } from 'node:fs/promises';
import { PNG } from 'pngjs';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { afterAll, describe, expect, it } from 'vitest';
import { ImageService, jobKey, NO_RECORDS } from '../src/core/images.ts';
import {
  CHART_SIZE,
  CLUB_CHART_OPTIONS,
  CLUB_IMAGE_OPTIONS,
  optionsOf,
  PLAYER_CHART_OPTIONS,
  PLAYER_IMAGE_OPTIONS,
} from '../src/render/catalogue.ts';
import { recordedPoints, shortageText } from '../src/render/chart.ts';
import { pixelSize, QUALITY_SCALE, releasePixels, type Quality } from '../src/render/draw.ts';
import { prepareJob, renderCanvas, renderPng } from '../src/render/index.ts';
import { encodePng } from '../src/render/png.ts';
import { RenderBusyError, RenderPool } from '../src/render/pool.ts';
import type { RenderJob } from '../src/render/types.ts';
import { ManualSchedule } from './support/manual-schedule.ts';
import { fixtureSubjects, fixtureWorld, jobCollector, T0, worldRecords, worldStats } from './fixtures/render/cases.ts';

/** A full collection of this thread's heap, now (what the render worker does for its young generation). */
function collectGarbage(): void {
  setFlagsFromString('--expose-gc');
  (runInNewContext('gc') as () => void)();
}

const world = fixtureWorld();
const subjects = fixtureSubjects(world);
const records = worldRecords(world, T0);
const QUALITIES = Object.keys(QUALITY_SCALE) as Quality[];

function decode(png: Buffer): PNG {
  return PNG.sync.read(png);
}

/** Renders in this thread, like a worker does. */
const inline = { render: async (job: RenderJob) => renderPng(job) };

describe('every option at every quality is a PNG of the documented size', () => {
  const service = new ImageService({ stats: worldStats(world, () => T0), records, renderer: inline, now: () => T0 });

  for (const q of QUALITIES) {
    it(`player images at quality ${q}`, async () => {
      for (const o of optionsOf(PLAYER_IMAGE_OPTIONS)) {
        const png = decode((await service.playerImage(subjects.player, o, q)).png);
        const size = pixelSize(PLAYER_IMAGE_OPTIONS[o as keyof typeof PLAYER_IMAGE_OPTIONS].size.width, PLAYER_IMAGE_OPTIONS[o as keyof typeof PLAYER_IMAGE_OPTIONS].size.height, q);
        expect({ option: o, width: png.width, height: png.height }).toEqual({ option: o, ...size });
      }
    });

    it(`club images at quality ${q}`, async () => {
      for (const o of optionsOf(CLUB_IMAGE_OPTIONS)) {
        const png = decode((await service.clubImage(subjects.club, o, q)).png);
        const spec = CLUB_IMAGE_OPTIONS[o as keyof typeof CLUB_IMAGE_OPTIONS].size;
        expect({ option: o, width: png.width, height: png.height }).toEqual({ option: o, ...pixelSize(spec.width, spec.height, q) });
      }
    });
  }

  it('player and club charts, 1200×675', async () => {
    for (const o of optionsOf(PLAYER_CHART_OPTIONS)) {
      const png = decode((await service.playerChart(subjects.player, o)).png);
      expect([o, png.width, png.height]).toEqual([o, CHART_SIZE.width, CHART_SIZE.height]);
    }
    for (const o of optionsOf(CLUB_CHART_OPTIONS)) {
      const png = decode((await service.clubChart(subjects.club, o)).png);
      expect([o, png.width, png.height]).toEqual([o, CHART_SIZE.width, CHART_SIZE.height]);
    }
  });

  it('pictures that need history still render (and say so) when nothing is recorded', async () => {
    const bare = new ImageService({ stats: worldStats(world, () => T0), records: NO_RECORDS, renderer: inline, now: () => T0 });
    for (const o of [6, 10, 13, 14]) {
      const png = decode((await bare.playerImage(subjects.newcomer, o, 'low')).png);
      expect(png.width).toBe(pixelSize(PLAYER_IMAGE_OPTIONS[o as 6].size.width, PLAYER_IMAGE_OPTIONS[o as 6].size.height, 'low').width);
    }
    for (const o of optionsOf(PLAYER_CHART_OPTIONS)) expect(decode((await bare.playerChart(subjects.newcomer, o)).png).height).toBe(675);
  });
});

describe('a chart without enough history', () => {
  const day = (d: number, v: number) => ({ t: Date.UTC(2026, 8, d), v });
  it('counts days with battles on bar charts, points on line charts', () => {
    const activity = PLAYER_CHART_OPTIONS[2];
    const quiet = [{ label: 'battles' as const, points: Array.from({ length: 30 }, (_, i) => day(i + 1, 0)) }];
    expect(recordedPoints(activity, quiet)).toBe(0);
    expect(shortageText(activity, quiet)).toMatch(/^Starr Stats has recorded no battles in this period\./);
    const one = [{ label: 'battles' as const, points: quiet[0]!.points.map((p, i) => (i === 4 ? { ...p, v: 3 } : p)) }];
    expect(recordedPoints(activity, one)).toBe(1);
    expect(shortageText(activity, one)).toBeNull();
    const trophies = PLAYER_CHART_OPTIONS[1];
    expect(shortageText(trophies, [])).toMatch(/recorded nothing for this chart/);
    expect(shortageText(trophies, [], wordsFor("ru"))).toMatch(/^Starr Stats ничего не записал/);
    expect(shortageText(trophies, [{ label: 'trophies' as const, points: [day(1, 0)] }])).toBe(
      'Only 1 recorded point in this period; a chart needs at least 2. Check back after the next recordings.',
    );
    expect(shortageText(trophies, [{ label: 'trophies' as const, points: [day(1, 0), day(2, 0)] }])).toBeNull();
  });
});

describe('ImageService', () => {
  it('builds chart windows from the recorded history, at most 365 days, and from/to when given', async () => {
    const { service, jobs } = jobCollector(world, T0);
    await service.playerChart(subjects.player, 1);
    const first = await records.firstRecorded('player', subjects.player);
    expect(jobs[0]).toMatchObject({ kind: 'playerChart', input: { from: first, to: T0 } });
    const from = Date.UTC(2026, 4, 1);
    const to = Date.UTC(2026, 4, 10) + 86_400_000 - 1;
    await service.playerChart(subjects.player, 1, { from, to });
    const job = jobs[1] as Extract<RenderJob, { kind: 'playerChart' }>;
    expect([job.input.from, job.input.to]).toEqual([from, to]);
    expect(job.input.series[0]!.points.every((p) => p.t >= from && p.t <= to)).toBe(true);
    expect(job.input.series[0]!.points.length).toBeGreaterThan(20);
  });

  it('caches pictures by content: the same data, option and quality render once', async () => {
    let renders = 0;
    const counting = { render: async (job: RenderJob) => (renders++, renderPng(job)) };
    let now = T0;
    const service = new ImageService({ stats: worldStats(world, () => now), records: NO_RECORDS, renderer: counting, now: () => now });
    const a = await service.playerImage(subjects.player, 1, 'low');
    const b = await service.playerImage(subjects.player, 1, 'low');
    expect(renders).toBe(1);
    expect(b.cached).toBe(true);
    expect(b.png.equals(a.png)).toBe(true);
    expect(b.etag).toBe(a.etag);
    await Promise.all([service.playerImage(subjects.player, 1, 'medium'), service.playerImage(subjects.player, 1, 'medium')]);
    expect(renders).toBe(2);
    // a day later the player has moved on: new data, new picture
    now = T0 + 86_400_000;
    const c = await service.playerImage(subjects.player, 1, 'low');
    expect(renders).toBe(3);
    expect(c.etag).not.toBe(a.etag);
  });

  it('keys pictures by everything they show', () => {
    const base: RenderJob = { kind: 'clubChart', option: 1, quality: 'high', input: { name: 'A', tag: '#2', from: 0, to: 1, series: [] } };
    const moved: RenderJob = { ...base, input: { ...base.input, series: [{ label: 'trophies', points: [{ t: 0, v: 1 }] }] } };
    expect(jobKey(base)).toBe(jobKey(structuredClone(base)));
    expect(jobKey(moved)).not.toBe(jobKey(base));
    expect(jobKey({ ...base, quality: 'low' })).not.toBe(jobKey(base));
    expect(jobKey({ ...base, option: 2 })).not.toBe(jobKey(base));
  });

  it('answers an unknown tag with the core\'s not-found error', async () => {
    const service = new ImageService({ stats: worldStats(world, () => T0), renderer: inline, now: () => T0 });
    await expect(service.playerImage('#2222222222', 1)).rejects.toMatchObject({ kind: 'not_found' });
    await expect(service.clubChart('#2222222222', 1)).rejects.toMatchObject({ kind: 'not_found' });
  });
});

describe('render pool', () => {
  const pools: RenderPool[] = [];
  afterAll(async () => {
    await Promise.all(pools.map((p) => p.close()));
  });

  it('renders and encodes on a worker thread: the same pixels as rendering here', async () => {
    const pool = new RenderPool({ size: 1 });
    pools.push(pool);
    const { service, jobs } = jobCollector(world, T0);
    await service.clubImage(subjects.club, 2, 'low');
    const job = jobs[0]!;
    const fromWorker = decode(await pool.render(job));
    const here = decode(await renderPng(job));
    expect([fromWorker.width, fromWorker.height]).toEqual([here.width, here.height]);
    expect(fromWorker.data.equals(here.data)).toBe(true);
  });

  it('hands pictures over in shared memory (uncounted by V8) while those it handed over and still alive stay under its bound, then in counted buffers, and in shared memory again once they are collected: the same bytes', async () => {
    // the 108-brawler grid, ~1.2 MB: the worker's own buffers of the moment (a few MB, counted too) are small beside the bound
    const { service, jobs } = jobCollector(world, T0);
    await service.playerImage(subjects.player, 3, 'high');
    const job = jobs.at(-1)!;
    const reference = await renderPng(job);
    const bound = 16 * 1024 * 1024;
    const pool = new RenderPool({ size: 1, maxSharedBytes: bound });
    pools.push(pool);
    /** what the worker counted before the picture it handed over last */
    const handedOver = () => pool.memory()[0]!.handedOver;
    const isShared = (png: Buffer) => png.buffer instanceof SharedArrayBuffer;

    // held here: each picture comes shared while what the worker counts is under the bound
    const held: Buffer[] = [];
    while (held.length < 40) {
      const png = await pool.render(job);
      expect(isShared(png)).toBe(handedOver() < bound);
      held.push(png);
      if (!isShared(png)) break;
    }
    const counted = held.at(-1)!;
    expect(isShared(counted)).toBe(false);
    expect(counted.buffer).toBeInstanceOf(ArrayBuffer);
    expect(held.filter(isShared).length).toBeGreaterThanOrEqual(4);
    // the worker counted what this thread held
    expect(handedOver()).toBeGreaterThanOrEqual(bound);
    for (const png of held) expect(Buffer.compare(png, reference)).toBe(0);

    // let go and collected: counted again after the next picture, so the one after comes shared
    held.length = 0;
    collectGarbage();
    await pool.render(job);
    const again = await pool.render(job);
    expect(handedOver()).toBeLessThan(bound);
    expect(isShared(again)).toBe(true);
    expect(Buffer.compare(again, reference)).toBe(0);
    expect(decode(again).data.equals(decode(reference).data)).toBe(true);

    // no room: every picture comes counted
    const counting = new RenderPool({ size: 1, maxSharedBytes: 0 });
    pools.push(counting);
    for (let i = 0; i < 2; i++) expect(isShared(await counting.render(job))).toBe(false);
  }, 60_000);

  it('starts its workers ahead of the first picture when the ImageService is warmed, and a failing start never rejects', async () => {
    const pool = new RenderPool({ size: 1 });
    pools.push(pool);
    const service = new ImageService({ stats: worldStats(world, () => T0), records, renderer: pool, now: () => T0 });
    expect(pool.stats().workers).toBe(0);
    await service.warm();
    expect(pool.stats()).toMatchObject({ workers: 1, busy: 0, rendered: 0 });

    const warnings: unknown[] = [];
    const broken = new ImageService({
      stats: worldStats(world, () => T0),
      renderer: { render: () => Promise.reject(new Error('no renderer')), warm: () => Promise.reject(new Error('fonts missing')) },
      logger: { warn: (o: unknown) => warnings.push(o) } as never,
    });
    await expect(broken.warm()).resolves.toBeUndefined();
    expect(warnings).toHaveLength(1);
  });

  it('ends a worker left idle and starts one again for the next picture: the same bytes', async () => {
    const clock = new ManualSchedule();
    const pool = new RenderPool({ size: 1, idleMs: 60_000, schedule: clock.schedule });
    pools.push(pool);
    const job: RenderJob = { kind: 'clubChart', option: 2, quality: 'low', input: { name: 'Idle', tag: '#2', from: 0, to: 1, series: [] } };
    const first = await pool.render(job);
    // idle after its picture: one deadline; a picture in between cancels it and the next idle spell starts another
    expect(clock.pending).toEqual([60_000]);
    const second = await pool.render(job);
    expect(clock.pending).toEqual([60_000]);
    expect(clock.fire()).toBe(1);
    expect(pool.stats()).toMatchObject({ workers: 0, ended: 1, rendered: 2 });
    expect(pool.memory()).toEqual([]);
    const third = await pool.render(job);
    expect(pool.stats()).toMatchObject({ workers: 1, ended: 1, rendered: 3 });
    for (const png of [second, third]) expect(Buffer.compare(first, png)).toBe(0);
  });

  it('keeps an idle worker while pictures are asked for without a drawing, and ends it idleMs after the last of them', async () => {
    const clock = new ManualSchedule();
    let now = 0;
    const pool = new RenderPool({ size: 1, idleMs: 60_000, schedule: clock.schedule, now: () => now });
    pools.push(pool);
    const job: RenderJob = { kind: 'clubChart', option: 2, quality: 'low', input: { name: 'Asked', tag: '#3', from: 0, to: 1, series: [] } };
    await pool.render(job);
    expect(clock.pending).toEqual([60_000]);
    // answered from a cache 30 s and 45 s after the drawing: at its deadline the worker has 45 s left
    now = 30_000;
    pool.asked();
    now = 45_000;
    pool.asked();
    now = 60_000;
    expect(clock.fire()).toBe(1);
    expect(pool.stats()).toMatchObject({ workers: 1, ended: 0 });
    expect(clock.pending).toEqual([45_000]);
    // nothing asked since: ended at that deadline
    now = 105_000;
    expect(clock.fire()).toBe(1);
    expect(pool.stats()).toMatchObject({ workers: 0, ended: 1 });
    expect(clock.pending).toEqual([]);
  });

  /** Niceness of each thread of this process (Linux: field 19 of /proc/self/task/<tid>/stat). */
  const niceness = () =>
    new Map(
      readdirSync('/proc/self/task').flatMap((tid) => {
        try {
          const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
          return [[tid, Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16])] as const];
        } catch {
          return []; // a thread that ended meanwhile
        }
      }),
    );

  it.skipIf(!existsSync('/proc/thread-self'))('renders on threads below the calling thread’s priority (Linux), and at its priority when asked', async () => {
    const self = readlinkSync('/proc/thread-self').split('/').pop()!;
    const job: RenderJob = { kind: 'clubChart', option: 2, quality: 'low', input: { name: 'Nice', tag: '#2', from: 0, to: 1, series: [] } };
    const before = niceness();
    const pool = new RenderPool({ size: 1 });
    pools.push(pool);
    const niced = decode(await pool.render(job));
    const started = [...niceness()].filter(([tid]) => !before.has(tid));
    expect(started.filter(([, nice]) => nice === 10).length).toBeGreaterThanOrEqual(1);
    expect(niceness().get(self)).toBe(before.get(self));

    const between = niceness();
    const level = new RenderPool({ size: 1, nice: 0 });
    pools.push(level);
    expect(decode(await level.render(job)).data.equals(niced.data)).toBe(true);
    const startedLevel = [...niceness()].filter(([tid]) => !between.has(tid));
    expect(startedLevel.length).toBeGreaterThan(0);
    expect(startedLevel.every(([, nice]) => nice === before.get(self))).toBe(true);
  });

  it.skipIf(!existsSync('/proc/thread-self'))('after a picture, lowers the process’s other threads (libvips’s, V8’s helpers) below the calling thread, but not libuv’s pool (Linux)', async () => {
    const self = readlinkSync('/proc/thread-self').split('/').pop()!;
    // libuv's pool: a readlink of /proc/thread-self runs on one of its threads. One round of calls
    // does not always reach all four on a busy machine (a thread that wakes first may take them
    // all), so rounds go on until four have answered.
    const pool = new Set<string>();
    for (let round = 0; round < 50 && pool.size < 4; round++) {
      for (const l of await Promise.all(Array.from({ length: 64 }, () => readlink('/proc/thread-self')))) pool.add(l.split('/').pop()!);
    }
    const renderer = new RenderPool({ size: 1 });
    pools.push(renderer);
    const { service, jobs } = jobCollector(world, T0);
    // a club card is truecolour: sharp encodes it on libvips's threads, started from libuv's pool
    await service.clubImage(subjects.club, 2, 'low');
    const before = niceness();
    await renderer.render(jobs[0]!);
    const names = new Map(
      readdirSync('/proc/self/task').map((tid) => {
        try {
          return [tid, readFileSync(`/proc/self/task/${tid}/comm`, 'utf8').trim()] as const;
        } catch {
          return [tid, ''] as const;
        }
      }),
    );
    expect([...names.values()].some((n) => n.startsWith('libvips'))).toBe(true);
    const nice = niceness();
    expect(nice.get(self)).toBe(before.get(self));
    expect(pool.size).toBeGreaterThanOrEqual(4);
    expect([...pool].map((tid) => nice.get(tid))).toEqual([...pool].map((tid) => before.get(tid)));
    const others = [...nice].filter(([tid]) => tid !== self && !pool.has(tid) && names.has(tid));
    // V8's four helpers, libvips's workers and the render worker at least
    expect(others.length).toBeGreaterThanOrEqual(6);
    expect(others.filter(([, n]) => n < 10).map(([tid]) => `${tid} ${names.get(tid)}`)).toEqual([]);
  });

  it('keeps a bounded queue: a burst beyond it is refused at once, the rest completes', async () => {
    const pool = new RenderPool({ size: 1, maxQueue: 3 });
    pools.push(pool);
    await pool.warm();
    const job: RenderJob = {
      kind: 'playerChart',
      option: 1,
      quality: 'low',
      input: { name: 'Burst', tag: '#2', from: T0 - 86_400_000, to: T0, series: [] },
    };
    const results = await Promise.allSettled(Array.from({ length: 12 }, () => pool.render(job)));
    const ok = results.filter((r) => r.status === 'fulfilled');
    const busy = results.filter((r) => r.status === 'rejected' && r.reason instanceof RenderBusyError);
    // one rendering at once plus three waiting
    expect(ok.length).toBe(4);
    expect(busy.length).toBe(8);
    expect(pool.stats()).toMatchObject({ busy: 0, queued: 0 });
    for (const r of ok) expect(decode((r as PromiseFulfilledResult<Buffer>).value).width).toBe(600);
  });

  it('keeps sprites of what repeats (portraits, icons), not one per player or club drawn', async () => {
    const pool = new RenderPool({ size: 1 });
    pools.push(pool);
    const { service, jobs } = jobCollector(world, T0);
    await service.playerImage(subjects.player, 1, 'low');
    const card = jobs[0] as Extract<RenderJob, { kind: 'playerImage' }>;
    await pool.render(card);
    const sprites = pool.memory()[0]!.sprites;
    expect(sprites).toBeGreaterThan(0);
    // the same card for other players: another icon, initial, club and badge each time
    for (const [i, name] of ['Alpha', 'Bravo', 'Charlie'].entries()) {
      const player = { ...card.input.player, name, icon: { id: 28_000_100 + i }, club: { tag: `#2Q${i}`, name: `${name} club` } };
      const png = decode(await pool.render({ ...card, input: { ...card.input, player } }));
      expect(png.width).toBe(600);
    }
    expect(pool.memory()[0]!.sprites).toBe(sprites);
  });

  it('fails a job that throws without losing the worker', async () => {
    const pool = new RenderPool({ size: 1 });
    pools.push(pool);
    await expect(pool.render({ kind: 'playerImage', option: 2, quality: 'low', input: { player: {} as never } })).rejects.toThrow(
      /no option 2/,
    );
    const png = await pool.render({ kind: 'clubChart', option: 2, quality: 'low', input: { name: 'x', tag: '#2', from: 0, to: 1, series: [] } });
    expect(decode(png).height).toBe(338);
  });
});

describe('PNG size', () => {
  const service = new ImageService({ stats: worldStats(world, () => T0), records, renderer: inline, now: () => T0 });
  const skiaBytes = (job: RenderJob) => renderCanvas(job).encodeSync('png').length;
  const jobs = jobCollector(world, T0);

  it('every chart at 1200×675 weighs at most 100 KB, and less than Skia’s own PNG of it', async () => {
    for (const o of optionsOf(PLAYER_CHART_OPTIONS)) {
      const r = await service.playerChart(subjects.player, o);
      expect(r.png.length, `player chart ${o}`).toBeLessThanOrEqual(100 * 1024);
    }
    for (const o of optionsOf(CLUB_CHART_OPTIONS)) {
      expect((await service.clubChart(subjects.club, o)).png.length, `club chart ${o}`).toBeLessThanOrEqual(100 * 1024);
    }
    await jobs.service.playerChart(subjects.player, 1);
    const job = jobs.jobs.at(-1)!;
    expect((await renderPng(job)).length).toBeLessThan(skiaBytes(job));
  });

  it('cards and grids are no larger than Skia’s own PNG of the same canvas', async () => {
    for (const [o, make] of [
      [1, () => jobs.service.playerImage(subjects.player, 1, 'high')],
      [8, () => jobs.service.playerImage(subjects.player, 8, 'high')],
      [2, () => jobs.service.clubImage(subjects.club, 2, 'high')],
    ] as const) {
      await make();
      const job = jobs.jobs.at(-1)!;
      await prepareJob(job);
      expect({ o, ours: (await renderPng(job)).length <= skiaBytes(job) }).toEqual({ o, ours: true });
    }
  });

  it('cards and grids are lossless: the decoded PNG holds exactly the canvas’s pixels', async () => {
    await jobs.service.playerImage(subjects.player, 14, 'high');
    const job = jobs.jobs.at(-1)!;
    await prepareJob(job);
    const canvas = renderCanvas(job);
    const rgba = Buffer.from(canvas.data());
    const png = decode(await encodePng(rgba, canvas.width, canvas.height, 'truecolour'));
    expect([png.width, png.height]).toEqual([canvas.width, canvas.height]);
    // the canvas is opaque; the PNG is RGB, decoded back to RGBA with alpha 255
    expect(png.data.equals(rgba)).toBe(true);
  });

  it('lets a canvas’s pixels go once copied out: the copy, and the PNG made from it, keep them', async () => {
    await jobs.service.playerImage(subjects.player, 1, 'high');
    const job = jobs.jobs.at(-1)!;
    await prepareJob(job);
    const canvas = renderCanvas(job);
    const { width, height } = canvas;
    const before = Buffer.from(canvas.data());
    const rgba = canvas.data();
    releasePixels(canvas);
    expect([canvas.width, canvas.height]).toEqual([1, 1]);
    expect(Buffer.from(rgba.buffer, rgba.byteOffset, rgba.byteLength).equals(before)).toBe(true);
    // renderPng releases its canvas before encoding: the same picture
    const png = decode(await renderPng(job));
    expect([png.width, png.height]).toEqual([width, height]);
    expect(png.data.equals(before)).toBe(true);
  });
});
