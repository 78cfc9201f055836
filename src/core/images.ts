/**
 * ImageService: player and club images and charts as PNG, for the HTTP API and the Discord bot.
 *
 * It gathers what a picture shows (the profile from StatsService, recorded history, optional art),
 * turns that into a RenderJob, and has the render pool draw and encode it off the event loop.
 * Pictures are cached by content: the cache key is a hash of everything the picture shows plus its
 * option and quality, so the same data never renders twice and new data never serves an old picture.
 */
import { createHash } from 'node:crypto';
import type { Logger } from '../log.ts';
import type { Club, Player } from '../upstream/schemas.ts';
import { artKey } from '../render/art.ts';
import { join } from 'node:path';
import type { Config } from '../config.ts';
import { ArtStore } from '../render/assets.ts';
import { RenderPool } from '../render/pool.ts';
import {
  CLUB_CHART_OPTIONS,
  CLUB_IMAGE_OPTIONS,
  PLAYER_CHART_OPTIONS,
  PLAYER_IMAGE_OPTIONS,
  type ClubChartMetric,
  type PlayerChartMetric,
} from '../render/catalogue.ts';
import type { Quality } from '../render/draw.ts';
import { seasonWindow } from '../render/measures.ts';
import type { BrawlerRecord, ChartInput, ChartSeries, Point, RenderJob, SeasonBaseline } from '../render/types.ts';
import type { Fetched } from './types.ts';

/**
 * What the pictures need from recorded history. The history workstream's HistoryService is adapted
 * to this (see `historyRecords`); every method answers "nothing recorded" with empty values.
 */
export interface ImageRecords {
  /** epoch ms of the first thing recorded about this player or club, null when nothing is */
  firstRecorded(kind: 'player' | 'club', tag: string): Promise<number | null>;
  /** a chart metric (catalogue.ts) in [fromMs, toMs], oldest first; several lines for 'records' */
  playerSeries(tag: string, metric: PlayerChartMetric, fromMs: number, toMs: number): Promise<ChartSeries[]>;
  clubSeries(tag: string, metric: ClubChartMetric, fromMs: number, toMs: number): Promise<ChartSeries[]>;
  /** each brawler's recorded results, oldest first (mastery and win rates) */
  brawlerRecords(tag: string): Promise<BrawlerRecord[]>;
  /** the first profile recorded in [startMs, endMs), reduced to what season progress needs */
  seasonBaseline(tag: string, startMs: number, endMs: number): Promise<SeasonBaseline | null>;
  /** the trophies line inside [startMs, endMs) */
  trophies(tag: string, startMs: number, endMs: number): Promise<Point[]>;
}

/** Nothing recorded: pictures that need history say so; the rest render from the profile alone. */
export const NO_RECORDS: ImageRecords = {
  firstRecorded: async () => null,
  playerSeries: async () => [],
  clubSeries: async () => [],
  brawlerRecords: async () => [],
  seasonBaseline: async () => null,
  trophies: async () => [],
};

export interface PngRenderer {
  render(job: RenderJob): Promise<Buffer>;
}

export interface ImageServiceDeps {
  stats: {
    player(tag: string): Promise<Fetched<Player>>;
    club(tag: string): Promise<Fetched<Club>>;
  };
  records?: ImageRecords;
  renderer: PngRenderer;
  art?: ArtStore;
  now?: () => number;
  /** bytes of PNGs kept in memory (default 64 MB) */
  cacheBytes?: number;
  logger?: Logger;
  /** days a chart without from/to covers at most (default 365) */
  defaultChartDays?: number;
  /** resources the service owns and closes with itself (the factory's pool) */
  owned?: { close(): Promise<void> }[];
}

export interface ImageResult {
  png: Buffer;
  /** quoted strong ETag of the bytes */
  etag: string;
  /** seconds the picture stays valid (the freshness left of the data it shows) */
  maxAge: number;
  /** true when served from the content cache */
  cached: boolean;
  /** the freshness of the data it shows: a picture of a stale copy is stale too */
  freshness: Pick<Fetched<unknown>, 'stale' | 'ageSeconds' | 'staleReason'>;
}

export interface ChartRange {
  /** epoch ms, inclusive */
  from?: number;
  /** epoch ms, inclusive */
  to?: number;
}

const DAY = 86_400_000;

export class ImageService {
  private readonly records: ImageRecords;
  private readonly now: () => number;
  private readonly cache = new Map<string, Promise<Buffer>>();
  private readonly sizes = new Map<string, number>();
  private bytes = 0;
  private readonly maxBytes: number;
  /** renders actually performed (cache misses), for tests and metrics */
  renders = 0;

  constructor(private readonly deps: ImageServiceDeps) {
    this.records = deps.records ?? NO_RECORDS;
    this.now = deps.now ?? Date.now;
    this.maxBytes = deps.cacheBytes ?? 64 * 1024 * 1024;
  }

  async playerImage(tag: string, option: number, quality: Quality = 'high'): Promise<ImageResult> {
    const spec = PLAYER_IMAGE_OPTIONS[option as keyof typeof PLAYER_IMAGE_OPTIONS];
    if (!spec) throw new RangeError(`unknown player image option ${option}`);
    const fetched = await this.deps.stats.player(tag);
    const player = fetched.data;
    const needs: readonly string[] = spec.needs;
    const record: NonNullable<Extract<RenderJob, { kind: 'playerImage' }>['input']['record']> = {
      since: null,
    };
    if (needs.length > 0) record.since = await this.records.firstRecorded('player', player.tag);
    if (needs.includes('brawlerRecords')) record.brawlers = await this.records.brawlerRecords(player.tag);
    if (needs.includes('season')) {
      const { start, end } = seasonWindow(this.now());
      const [baseline, trophies] = await Promise.all([
        this.records.seasonBaseline(player.tag, start, end),
        this.records.trophies(player.tag, start, end),
      ]);
      record.season = { start, end, baseline, trophies };
    }
    const art = await this.art([
      ...(player.icon ? [artKey('icon', player.icon.id)] : []),
      ...player.brawlers.map((b) => artKey('brawler', b.id)),
    ]);
    const job: RenderJob = { kind: 'playerImage', option, quality, input: { player, record, ...(art ? { art } : {}) } };
    return this.picture(job, fetched);
  }

  async clubImage(tag: string, option: number, quality: Quality = 'high'): Promise<ImageResult> {
    if (!CLUB_IMAGE_OPTIONS[option as keyof typeof CLUB_IMAGE_OPTIONS]) throw new RangeError(`unknown club image option ${option}`);
    const fetched = await this.deps.stats.club(tag);
    const club = fetched.data;
    const art = await this.art([
      artKey('badge', club.badgeId),
      ...club.members.flatMap((m) => (m.icon ? [artKey('icon', m.icon.id)] : [])),
    ]);
    const job: RenderJob = { kind: 'clubImage', option, quality, input: { club, ...(art ? { art } : {}) } };
    return this.picture(job, fetched);
  }

  async playerChart(tag: string, option: number, range: ChartRange = {}, quality: Quality = 'high'): Promise<ImageResult> {
    const spec = PLAYER_CHART_OPTIONS[option as keyof typeof PLAYER_CHART_OPTIONS];
    if (!spec) throw new RangeError(`unknown player chart option ${option}`);
    const fetched = await this.deps.stats.player(tag);
    const p = fetched.data;
    const { from, to } = await this.window('player', p.tag, range);
    const series = await this.records.playerSeries(p.tag, spec.metric, from, to);
    const input: ChartInput = { name: p.name, tag: p.tag, ...(p.nameColor ? { nameColor: p.nameColor } : {}), from, to, series };
    return this.picture({ kind: 'playerChart', option, quality, input }, fetched);
  }

  async clubChart(tag: string, option: number, range: ChartRange = {}, quality: Quality = 'high'): Promise<ImageResult> {
    const spec = CLUB_CHART_OPTIONS[option as keyof typeof CLUB_CHART_OPTIONS];
    if (!spec) throw new RangeError(`unknown club chart option ${option}`);
    const fetched = await this.deps.stats.club(tag);
    const c = fetched.data;
    const { from, to } = await this.window('club', c.tag, range);
    const series = await this.records.clubSeries(c.tag, spec.metric, from, to);
    return this.picture({ kind: 'clubChart', option, quality, input: { name: c.name, tag: c.tag, from, to, series } }, fetched);
  }

  /** Closes what the service owns (its render pool). */
  async close(): Promise<void> {
    await Promise.all((this.deps.owned ?? []).map((o) => o.close()));
    this.cache.clear();
    this.sizes.clear();
    this.bytes = 0;
  }

  /** Bytes and entries in the content cache. */
  cacheStats(): { entries: number; bytes: number } {
    return { entries: this.cache.size, bytes: this.bytes };
  }

  /**
   * The chart window: given bounds as they are; a missing `to` is now, a missing `from` is the first
   * recording (at most defaultChartDays before `to`).
   */
  private async window(kind: 'player' | 'club', tag: string, range: ChartRange): Promise<{ from: number; to: number }> {
    const to = range.to ?? this.now();
    if (range.from !== undefined) return { from: range.from, to };
    const earliest = to - (this.deps.defaultChartDays ?? 365) * DAY;
    const first = await this.records.firstRecorded(kind, tag);
    // a window of at least a day, so a brand-new player still gets a sensible axis
    const from = Math.min(to - DAY, Math.max(earliest, first ?? to - DAY));
    return { from, to };
  }

  private async art(keys: string[]): Promise<Record<string, Uint8Array> | undefined> {
    if (!this.deps.art?.enabled) return undefined;
    const art = await this.deps.art.get(keys);
    return Object.keys(art).length > 0 ? art : undefined;
  }

  private async picture(job: RenderJob, fetched: Fetched<unknown>): Promise<ImageResult> {
    const key = jobKey(job);
    const maxAge = fetched.stale ? 0 : Math.max(0, Math.ceil((fetched.expiresAt - this.now()) / 1000));
    const freshness = {
      stale: fetched.stale,
      ageSeconds: fetched.ageSeconds,
      ...(fetched.staleReason ? { staleReason: fetched.staleReason } : {}),
    };
    const hit = this.cache.get(key);
    if (hit) {
      // most recently used last
      this.cache.delete(key);
      this.cache.set(key, hit);
      const png = await hit;
      return { png, etag: etagOf(key), maxAge, cached: true, freshness };
    }
    this.renders++;
    const p = this.deps.renderer.render(job);
    this.cache.set(key, p);
    try {
      const png = await p;
      this.account(key, png.length);
      return { png, etag: etagOf(key), maxAge, cached: false, freshness };
    } catch (e) {
      this.cache.delete(key);
      throw e;
    }
  }

  private account(key: string, size: number): void {
    if (!this.cache.has(key)) return;
    this.sizes.set(key, size);
    this.bytes += size;
    for (const k of this.cache.keys()) {
      if (this.bytes <= this.maxBytes || k === key) break;
      const s = this.sizes.get(k);
      if (s === undefined) continue; // still rendering
      this.cache.delete(k);
      this.sizes.delete(k);
      this.bytes -= s;
    }
  }
}

/**
 * The content hash of a picture: everything it shows (art bytes included by their own hash so a
 * 2 MB grid of art is hashed, not stringified).
 */
export function jobKey(job: RenderJob): string {
  const h = createHash('sha256');
  const { input, ...head } = job;
  const { art, ...rest } = input as { art?: Record<string, Uint8Array> };
  h.update(JSON.stringify(head));
  h.update('\0');
  h.update(JSON.stringify(rest));
  for (const k of Object.keys(art ?? {}).sort()) {
    h.update(`\0${k}\0`);
    h.update(art![k]!);
  }
  return h.digest('base64url');
}

const etagOf = (key: string) => `"${key.slice(0, 27)}"`;

/**
 * The ImageService as the app composes it: a render pool of worker threads (started on first use;
 * call `pool.warm()` to start it eagerly) and the art store when ASSET_CDN_URL is set.
 */
export function createImageService(opts: {
  config: Pick<Config, 'ASSET_CDN_URL' | 'DATA_DIR'>;
  stats: ImageServiceDeps['stats'];
  records?: ImageRecords;
  logger?: Logger;
  now?: () => number;
  /** worker threads (default: one core left to the event loop) */
  workers?: number;
}): { images: ImageService; pool: RenderPool } {
  const pool = new RenderPool({ ...(opts.workers ? { size: opts.workers } : {}), ...(opts.logger ? { logger: opts.logger } : {}) });
  const art = new ArtStore({
    ...(opts.config.ASSET_CDN_URL ? { baseUrl: opts.config.ASSET_CDN_URL } : {}),
    dir: join(opts.config.DATA_DIR, 'art'),
    ...(opts.logger ? { logger: opts.logger } : {}),
  });
  const images = new ImageService({
    stats: opts.stats,
    ...(opts.records ? { records: opts.records } : {}),
    renderer: pool,
    art,
    ...(opts.now ? { now: opts.now } : {}),
    ...(opts.logger ? { logger: opts.logger } : {}),
    owned: [pool],
  });
  return { images, pool };
}
