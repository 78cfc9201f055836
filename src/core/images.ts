/**
 * ImageService: player and club images and charts as PNG, for the HTTP API and the Discord bot.
 *
 * It gathers what a picture shows (the profile from StatsService, recorded history, optional art),
 * turns that into a RenderJob, and has the render pool draw and encode it off the event loop.
 *
 * Pictures are cached, and their ETags made, by what the data already knows about itself: a
 * picture drawn from the profile alone is keyed by the job's head (kind, option, quality, and
 * whatever else a job carries outside its input), the profile's version (a digest the core's cache
 * gives each copy when it arrives), the art store's revision and the drawing code's revision. A
 * cached picture, or a 304 for If-None-Match, therefore costs a lookup: nothing is gathered,
 * hashed or drawn (hashing the ~64 KB input of a card on every hit cost ≈0.3 ms; the ETag over the
 * PNG bytes another ≈0.5 ms). Such a picture of a fresh copy comes with `again`, which the HTTP
 * fast path answers the next hits with, synchronously, while the copy stays fresh, the art and the
 * drawing code unchanged and the picture kept. Pictures drawn from recorded history, whose records
 * carry no version, are keyed by a hash of everything they show, computed after gathering and
 * before drawing.
 */
import { createHash } from 'node:crypto';
import { etagMatches } from '../lib/etag.ts';
import type { Logger } from '../log.ts';
import type { Club, Player } from '../upstream/schemas.ts';
import { artKey } from '../render/art.ts';
import { join } from 'node:path';
import type { ClubActivity } from './history-schemas.ts';
import { settings, type Config } from '../config.ts';
import { ArtStore } from '../render/assets.ts';
import { PictureFiles } from './picture-files.ts';
import { Lru } from '../lib/lru.ts';
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
import { renderRevision } from '../render/revision.ts';
import type { BrawlerRecord, ChartInput, ChartSeries, Point, RenderJob, SeasonBaseline } from '../render/types.ts';
import type { Fetched } from './types.ts';
import type { CoreMetrics } from './service.ts';
import { SOURCE, type Language } from '../i18n/index.ts';

/**
 * What the pictures need from recorded history. The HistoryService is adapted to this (see
 * `historyRecords`); every method answers "nothing recorded" with empty values.
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
  /** the club's activity table over the default period (club-activity.ts), null when nothing is recorded */
  clubActivity(tag: string): Promise<ClubActivity | null>;
}

/** Nothing recorded: pictures that need history say so; the rest render from the profile alone. */
export const NO_RECORDS: ImageRecords = {
  firstRecorded: async () => null,
  playerSeries: async () => [],
  clubSeries: async () => [],
  brawlerRecords: async () => [],
  seasonBaseline: async () => null,
  trophies: async () => [],
  clubActivity: async () => null,
};

export interface PngRenderer {
  render(job: RenderJob): Promise<Buffer>;
  /** gets ready to render (workers started, fonts loaded) before the first job needs it */
  warm?(): Promise<void>;
  /**
   * A picture was asked for, drawn or not (a cached one, a 304): a renderer that ends idle workers
   * keeps them while pictures are asked for, so the next drawing — a cached copy's data refreshed —
   * does not wait for a cold start. Called on every picture answer: constant time.
   */
  asked?(): void;
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
  /** bytes of PNGs kept in memory (default: RENDER_CACHE_MB's; 0: none kept) */
  cacheBytes?: number;
  /** the second tier: pictures kept as files (picture-files.ts); one that fails to open is left out, logged */
  files?: Promise<PictureFiles>;
  logger?: Logger;
  /** days a chart without from/to covers at most (default 365) */
  defaultChartDays?: number;
  /** resources the service owns and closes with itself (the factory's pool) */
  owned?: { close(): Promise<void> }[];
  /** counts each picture answered by where it came from (starr_picture_answers_total) */
  metrics?: CoreMetrics;
}

/**
 * Where a picture answered came from: the memory tier (the HTTP fast path's answers included, and
 * a request that joined another's reading or drawing of the same picture), its file, a drawing, the
 * older picture answered while a new one is drawn, or nowhere (`etag`: the client's If-None-Match
 * matched the key, nothing looked up).
 */
export type PictureSource = 'memory' | 'file' | 'drawn' | 'earlier' | 'etag';

export interface ImageResult {
  /** the PNG; empty when `notModified` */
  png: Buffer;
  /** quoted strong ETag of the picture */
  etag: string;
  /** seconds the picture stays valid (the freshness left of the data it shows) */
  maxAge: number;
  /** true when served from the picture cache, in memory or from its files (or answered by `notModified`) */
  cached: boolean;
  /** the freshness of the data it shows: a picture of a stale copy is stale too */
  freshness: Pick<Fetched<unknown>, 'stale' | 'ageSeconds' | 'staleReason'>;
  /** the caller's If-None-Match matched: nothing was drawn, `png` is empty */
  notModified?: boolean;
  /**
   * A picture drawn from a fresh fetched copy alone (keyed by its version): how to give the same
   * answer again synchronously, while it would be the same (the HTTP fast path repeats it without
   * asking the service again). Absent for stale copies and pictures of recorded history.
   */
  again?: PictureAgain;
}

/**
 * The same picture again, without the service's asynchronous look-up: the fetched copy it was
 * drawn from (its cache key and fetch time, what `peekFresh` is asked with) and the picture itself.
 */
export interface PictureAgain {
  key: string;
  fetchedAt: number;
  /**
   * The PNG, when the service would answer with these very bytes and ETag for the same copy now:
   * the art store's revision and the drawing code's are those it was keyed with and the picture
   * cache still holds it. Else undefined. Changes nothing; a look-up of two numbers and a map: no
   * hash, no JSON.
   */
  png(): Buffer | undefined;
  /** The picture was answered again: moved to the most recently used end of the picture cache, as a hit is. */
  answered(): void;
}

/** How the caller reads: the client's If-None-Match, answered without drawing when it matches. */
export interface Conditional {
  ifNoneMatch?: string | undefined;
  /**
   * How long to wait for a drawing when the picture of the same thing drawn from an older copy is
   * still kept in memory: after that, that picture is answered, marked stale (reason `drawing`),
   * and the drawing goes on and lands in the cache for the next read. Unset: wait for the drawing
   * (the bot, whose reply shows the picture of the data it shows).
   */
  staleAfterMs?: number | undefined;
}

/** Why a picture is answered stale while its newer one is drawn (`Conditional.staleAfterMs`). */
export const DRAWING = 'drawing';

/** Everything of a job but its input; all of it is part of a picture's key. */
type JobHead = Omit<RenderJob, 'input'>;

const EMPTY = Buffer.alloc(0);

export interface ChartRange {
  /** epoch ms, inclusive */
  from?: number;
  /** epoch ms, inclusive */
  to?: number;
}

const DAY = 86_400_000;

/**
 * A picture read back from its file is kept in memory only when it was read back once already
 * lately: its key is among the last READ_ONCE_KEYS pictures read back once (a doorkeeper, as
 * TinyLFU's). The memory tier then keeps pictures asked for again and again, not whichever was read
 * last, and a picture asked for once is let go as soon as it is sent. Under bench:memory's mixed
 * load (Zipf over 500 players' cards and brawler grids of up to ~900 KB, a 4-MB tier) the memory
 * tier answered 10 % of the pictures with it and 6 % without, and the process's memory was the
 * same either way (README, *Which pictures read back stay in memory*).
 */
const READ_ONCE_KEYS = 64;

export class ImageService {
  private readonly records: ImageRecords;
  private readonly now: () => number;
  private readonly cache = new Map<string, Promise<Buffer>>();
  /** the pictures of `cache` drawn so far, by key (their sizes count against maxBytes) */
  private readonly drawn = new Map<string, Buffer>();
  private bytes = 0;
  /**
   * For each thing drawn (a copy's cache key and the job's head), its newest picture still kept in
   * `drawn` and the fetch time of the copy it shows: what is answered while a newer one is drawn.
   * Entries whose picture was let go are swept once they outnumber the pictures kept.
   */
  private readonly newest = new Map<string, { key: string; fetchedAt: number }>();
  /**
   * When each picture being drawn (or read back from its file) was started, in performance.now()
   * ms: a request's wait (`Conditional.staleAfterMs`) counts from there, so once a drawing has
   * outlasted it, every request after is answered the older picture at once, not after a wait of
   * its own.
   */
  private readonly since = new Map<string, number>();
  /** keys of pictures read back from their files once lately (READ_ONCE_KEYS) */
  private readonly readOnce = new Lru<string, true>(READ_ONCE_KEYS);
  private readonly maxBytes: number;
  private readonly files: Promise<PictureFiles | undefined>;
  /** `files` once open */
  private filesOpen: PictureFiles | undefined;
  /** renders actually performed (misses of both tiers), for tests and metrics */
  renders = 0;
  private readonly answers: Record<PictureSource, { inc(): void }>;

  constructor(private readonly deps: ImageServiceDeps) {
    this.records = deps.records ?? NO_RECORDS;
    this.now = deps.now ?? Date.now;
    this.maxBytes = deps.cacheBytes ?? Number(settings.RENDER_CACHE_MB.default) * 1024 * 1024;
    const counter = deps.metrics?.counter('starr_picture_answers_total', 'Pictures answered by where they came from: memory, file, drawn, earlier (the older one while a new one is drawn), etag (If-None-Match matched, nothing looked up)');
    const none = { inc: () => undefined };
    this.answers = { memory: none, file: none, drawn: none, earlier: none, etag: none };
    if (counter) for (const source of Object.keys(this.answers) as PictureSource[]) this.answers[source] = counter.series({ source });
    this.files = (deps.files ?? Promise.resolve(undefined)).then(
      (f) => (this.filesOpen = f),
      (e: unknown) => {
        deps.logger?.warn({ err: e }, 'picture files unavailable; pictures are kept in memory only');
        return undefined;
      },
    );
  }

  async playerImage(tag: string, option: number, quality: Quality = 'high', cond: Conditional = {}, lang: Language = SOURCE): Promise<ImageResult> {
    const spec = PLAYER_IMAGE_OPTIONS[option as keyof typeof PLAYER_IMAGE_OPTIONS];
    if (!spec) throw new RangeError(`unknown player image option ${option}`);
    const fetched = await this.deps.stats.player(tag);
    const needs: readonly string[] = spec.needs;
    const head: JobHead = { kind: 'playerImage', option, quality, lang };
    return this.picture(head, fetched, needs.length === 0, cond, () => this.playerJob(fetched.data, option, quality, needs, lang));
  }

  private async playerJob(player: Player, option: number, quality: Quality, needs: readonly string[], lang: Language): Promise<RenderJob> {
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
    return { kind: 'playerImage', option, quality, lang, input: { player, record, ...(art ? { art } : {}) } };
  }

  async clubImage(tag: string, option: number, quality: Quality = 'high', cond: Conditional = {}, lang: Language = SOURCE): Promise<ImageResult> {
    if (!CLUB_IMAGE_OPTIONS[option as keyof typeof CLUB_IMAGE_OPTIONS]) throw new RangeError(`unknown club image option ${option}`);
    const fetched = await this.deps.stats.club(tag);
    const needs: readonly string[] = CLUB_IMAGE_OPTIONS[option as keyof typeof CLUB_IMAGE_OPTIONS].needs;
    const head: JobHead = { kind: 'clubImage', option, quality, lang };
    // A picture of recorded history changes without the club changing: it is not keyed by the club's version.
    return this.picture(head, fetched, needs.length === 0, cond, async () => {
      const club = fetched.data;
      const art = await this.art([
        artKey('badge', club.badgeId),
        ...club.members.flatMap((m) => (m.icon ? [artKey('icon', m.icon.id)] : [])),
      ]);
      const activity = needs.includes('activity') ? await this.records.clubActivity(club.tag) : undefined;
      return { kind: 'clubImage', option, quality, lang, input: { club, ...(art ? { art } : {}), ...(activity !== undefined ? { activity } : {}) } };
    });
  }

  async playerChart(tag: string, option: number, range: ChartRange = {}, quality: Quality = 'high', cond: Conditional = {}, lang: Language = SOURCE): Promise<ImageResult> {
    const spec = PLAYER_CHART_OPTIONS[option as keyof typeof PLAYER_CHART_OPTIONS];
    if (!spec) throw new RangeError(`unknown player chart option ${option}`);
    const fetched = await this.deps.stats.player(tag);
    const p = fetched.data;
    const { from, to, series } = await this.chartWindow('player', p.tag, range, fetched, (f, t) => this.records.playerSeries(p.tag, spec.metric, f, t));
    const input: ChartInput = { name: p.name, tag: p.tag, ...(p.nameColor ? { nameColor: p.nameColor } : {}), from, to, series };
    const head: JobHead = { kind: 'playerChart', option, quality, lang };
    return this.picture(head, fetched, false, cond, async () => ({ ...head, input }) as RenderJob, JSON.stringify(range));
  }

  async clubChart(tag: string, option: number, range: ChartRange = {}, quality: Quality = 'high', cond: Conditional = {}, lang: Language = SOURCE): Promise<ImageResult> {
    const spec = CLUB_CHART_OPTIONS[option as keyof typeof CLUB_CHART_OPTIONS];
    if (!spec) throw new RangeError(`unknown club chart option ${option}`);
    const fetched = await this.deps.stats.club(tag);
    const c = fetched.data;
    const { from, to, series } = await this.chartWindow('club', c.tag, range, fetched, (f, t) => this.records.clubSeries(c.tag, spec.metric, f, t));
    const head: JobHead = { kind: 'clubChart', option, quality, lang };
    return this.picture(head, fetched, false, cond, async () => ({ ...head, input: { name: c.name, tag: c.tag, from, to, series } }) as RenderJob, JSON.stringify(range));
  }

  /**
   * Starts the renderer now instead of on the first picture: the app calls it at start-up, in the
   * background, so the first member's picture does not wait for workers and fonts (1–2 s on a busy
   * 2-core machine). Never rejects: a renderer that cannot start fails the pictures, not start-up.
   */
  async warm(): Promise<void> {
    try {
      await this.deps.renderer.warm?.();
    } catch (e) {
      this.deps.logger?.warn({ err: e }, 'the renderer did not start ahead of time');
    }
  }

  /** Closes what the service owns (its render pool). */
  async close(): Promise<void> {
    await Promise.all((this.deps.owned ?? []).map((o) => o.close()));
    this.cache.clear();
    this.drawn.clear();
    this.newest.clear();
    this.since.clear();
    this.readOnce.clear();
    this.bytes = 0;
  }

  /** Bytes and entries in the memory tier. */
  cacheStats(): { entries: number; bytes: number } {
    return { entries: this.cache.size, bytes: this.bytes };
  }

  /** Bytes and files in the files tier (none when it is off, not open yet or could not be opened). */
  fileStats(): { files: number; bytes: number } {
    return this.filesOpen?.stats() ?? { files: 0, bytes: 0 };
  }

  /**
   * The chart window and its series: given bounds as they are; a missing `from` is the first
   * recording (at most defaultChartDays before `to`, and at least a day before it).
   *
   * A missing `to` is the newest moment the chart knows of, not the clock: the later of the
   * profile's fetch time and the last recorded point, with everything recorded up to now read. So
   * the same data draws the same chart and repeated requests are served from the picture cache
   * (with the clock as `to`, the key changed every millisecond and no chart was ever served
   * twice), while anything recorded since, by this process or another, changes the series and so
   * the key: a cached chart never misses newer data.
   */
  private async chartWindow(
    kind: 'player' | 'club',
    tag: string,
    range: ChartRange,
    fetched: Fetched<unknown>,
    read: (fromMs: number, toMs: number) => Promise<ChartSeries[]>,
  ): Promise<{ from: number; to: number; series: ChartSeries[] }> {
    const now = this.now();
    const first = range.from === undefined ? await this.records.firstRecorded(kind, tag) : null;
    const fromFor = (to: number) => {
      if (range.from !== undefined) return range.from;
      const earliest = to - (this.deps.defaultChartDays ?? 365) * DAY;
      // a window of at least a day, so a brand-new player still gets a sensible axis
      return Math.min(to - DAY, Math.max(earliest, first ?? to - DAY));
    };
    if (range.to !== undefined) return { from: fromFor(range.to), to: range.to, series: await read(fromFor(range.to), range.to) };
    let from = fromFor(now);
    let series = await read(from, now);
    const last = Math.max(-Infinity, ...series.map((s) => s.points.at(-1)?.t ?? -Infinity));
    const to = Math.min(now, Math.max(fetched.fetchedAt, last));
    const settled = fromFor(to);
    // the window moved back with its end (the day's minimum or the year's cap): read the start too
    if (settled < from) series = await read(settled, now);
    from = settled;
    return { from, to, series };
  }

  private async art(keys: string[]): Promise<Record<string, Uint8Array> | undefined> {
    if (!this.deps.art?.enabled) return undefined;
    const art = await this.deps.art.get(keys);
    return Object.keys(art).length > 0 ? art : undefined;
  }

  /**
   * A picture by its key: `versioned` pictures (drawn from the fetched copy alone) are keyed before
   * anything is gathered; the others after `build` gathered their input, by a hash of it.
   * `variant`: what else makes it another picture of the same copy and head (a chart's range as
   * asked), so that the picture of an older copy answered while a new one is drawn is of the same thing.
   */
  private async picture(
    head: JobHead,
    fetched: Fetched<unknown>,
    versioned: boolean,
    cond: Conditional,
    build: () => Promise<RenderJob>,
    variant = '',
  ): Promise<ImageResult> {
    this.deps.renderer.asked?.();
    const maxAge = fetched.stale ? 0 : Math.max(0, Math.ceil((fetched.expiresAt - this.now()) / 1000));
    const freshness = {
      stale: fetched.stale,
      ageSeconds: fetched.ageSeconds,
      ...(fetched.staleReason ? { staleReason: fetched.staleReason } : {}),
    };
    let job: RenderJob | undefined;
    let key: string;
    let again: PictureAgain | undefined;
    if (versioned && fetched.version !== undefined) {
      const artRevision = this.artRevision();
      const codeRevision = renderRevision();
      key = versionKey(head, fetched.version, artRevision);
      if (!fetched.stale && fetched.key !== undefined) again = this.again(key, fetched.key, fetched.fetchedAt, artRevision, codeRevision);
    } else {
      job = await build();
      key = jobKey(job);
    }
    const etag = etagOf(key);
    const result = (png: Buffer, cached: boolean, notModified?: true): ImageResult => {
      const r: ImageResult = { png, etag, maxAge, cached, freshness };
      if (notModified) r.notModified = true;
      if (again) r.again = again;
      return r;
    };
    if (etagMatches(cond.ifNoneMatch, etag)) {
      this.answers.etag.inc();
      return result(EMPTY, true, true);
    }
    const hit = this.cache.get(key);
    if (hit) {
      // most recently used last
      this.touch(key);
      const done = this.drawn.get(key);
      if (done) {
        this.answers.memory.inc();
        return result(done, true);
      }
    }
    // the same thing drawn from whichever copy: the copy's cache key, the job's head and the variant
    // (made only when the picture is not drawn yet: a hit stringifies nothing)
    const same = fetched.key === undefined ? undefined : `${fetched.key}\0${JSON.stringify(head)}\0${variant}`;
    if (hit) {
      // still being drawn for another request
      const png = await this.orEarlier(hit, same, key, cond, false);
      if (!Buffer.isBuffer(png)) return png;
      this.answers.memory.inc();
      return result(png, true);
    }
    // not in memory: the files (kept in memory too when read back lately already), else drawn (and kept)
    let kept = false;
    const p = (async () => {
      const files = await this.files;
      const stored = await files?.get(key);
      if (stored) {
        kept = true;
        return stored;
      }
      this.renders++;
      const png = await this.deps.renderer.render(job ?? (await build()));
      void files?.put(key, png);
      return png;
    })();
    if (this.maxBytes > 0) this.cache.set(key, p);
    this.since.set(key, performance.now());
    const landed = p.then(
      (png) => {
        this.since.delete(key);
        if (kept && !this.admit(key)) {
          this.cache.delete(key);
          return png;
        }
        this.account(key, png);
        if (same !== undefined) this.remember(same, key, fetched.fetchedAt);
        return png;
      },
      (e: unknown) => {
        this.since.delete(key);
        this.cache.delete(key);
        throw e;
      },
    );
    const png = await this.orEarlier(landed, same, key, cond, true);
    if (!Buffer.isBuffer(png)) return png;
    this.answers[kept ? 'file' : 'drawn'].inc();
    return result(png, kept);
  }

  /**
   * The picture being drawn (`pending`), or, when it takes longer than `cond.staleAfterMs` (counted
   * from the drawing's start) and the same thing's picture of an older copy is kept, that one
   * answered stale (reason `drawing`, its own ETag and Age, no max-age); the drawing goes on and
   * lands in the cache.
   */
  private async orEarlier(pending: Promise<Buffer>, same: string | undefined, key: string, cond: Conditional, own: boolean): Promise<Buffer | ImageResult> {
    const wait = cond.staleAfterMs;
    if (wait === undefined || same === undefined) return pending;
    const earlier = this.newest.get(same);
    const png = earlier && earlier.key !== key ? this.drawn.get(earlier.key) : undefined;
    if (!earlier || !png) return pending;
    const since = this.since.get(key);
    const left = since === undefined ? wait : since + wait - performance.now();
    if (left > 0) {
      let timer: NodeJS.Timeout | undefined;
      const won = await Promise.race([pending, new Promise<undefined>((res) => (timer = setTimeout(() => res(undefined), left)))]).finally(() =>
        clearTimeout(timer),
      );
      if (won) return won;
    }
    // answered without it: the drawing this request started is logged here if it fails (the next read draws again)
    if (own) pending.catch((e: unknown) => this.deps.logger?.warn({ err: e }, 'a picture drawn while an older one was answered failed'));
    this.touch(earlier.key);
    this.answers.earlier.inc();
    const etag = etagOf(earlier.key);
    const notModified = etagMatches(cond.ifNoneMatch, etag);
    const r: ImageResult = {
      png: notModified ? EMPTY : png,
      etag,
      maxAge: 0,
      cached: true,
      freshness: { stale: true, ageSeconds: Math.max(0, Math.floor((this.now() - earlier.fetchedAt) / 1000)), staleReason: DRAWING },
    };
    if (notModified) r.notModified = true;
    return r;
  }

  /** `key` is the newest picture of `same` kept (unless a picture of a newer copy already is). */
  private remember(same: string, key: string, fetchedAt: number): void {
    if (!this.drawn.has(key)) return;
    const was = this.newest.get(same);
    if (was && was.fetchedAt > fetchedAt && this.drawn.has(was.key)) return;
    this.newest.set(same, { key, fetchedAt });
    if (this.newest.size > 2 * this.drawn.size + 16) {
      for (const [k, v] of this.newest) if (!this.drawn.has(v.key)) this.newest.delete(k);
    }
  }

  /**
   * The picture kept under `key` again, while the art's and the drawing code's revisions are those it
   * was keyed with. Made here rather than in `picture`: closures made there would hold that call's
   * whole scope (`build`, and through it the fetched copy's data) for as long as the fast path
   * remembers the URL's memo — up to 10,000 URLs, past the answers' layer's bound (`npm run
   * bench:heap -- --load 120`: 7.2 MB of profiles and battle logs held that way).
   */
  private again(key: string, copyKey: string, fetchedAt: number, artRevision: number, codeRevision: string): PictureAgain {
    return {
      key: copyKey,
      fetchedAt,
      png: () => (this.artRevision() === artRevision && renderRevision() === codeRevision ? this.drawn.get(key) : undefined),
      answered: () => {
        this.answers.memory.inc();
        this.deps.renderer.asked?.();
        this.touch(key);
      },
    };
  }

  /** The art store's revision as picture keys take it (0 without art). */
  private artRevision(): number {
    return this.deps.art?.enabled ? this.deps.art.revision : 0;
  }

  /** Whether a picture just read back from its file is kept in memory: the second read of it lately. */
  private admit(key: string): boolean {
    if (this.readOnce.delete(key)) return true;
    this.readOnce.set(key, true);
    return false;
  }

  /** Moves a picture still kept to the most recently used end (as `picture`'s hit does). */
  private touch(key: string): void {
    const p = this.cache.get(key);
    if (p === undefined) return;
    this.cache.delete(key);
    this.cache.set(key, p);
  }

  private account(key: string, png: Buffer): void {
    if (!this.cache.has(key)) return;
    this.drawn.set(key, png);
    this.bytes += png.length;
    for (const k of this.cache.keys()) {
      if (this.bytes <= this.maxBytes || k === key) break;
      const d = this.drawn.get(k);
      if (d === undefined) continue; // still rendering
      this.cache.delete(k);
      this.drawn.delete(k);
      this.bytes -= d.length;
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

/**
 * The key of a picture drawn from one fetched copy: its head, the copy's version, the art store's
 * revision and the drawing code's (so a deploy that changes a picture changes its ETag), hashed
 * to a fixed length. A few hundred bytes of hashing, whatever the picture's input.
 */
export function versionKey(head: JobHead, version: string, artRevision: number): string {
  return createHash('sha256').update(`${JSON.stringify(head)}\0${version}\0${artRevision}\0${renderRevision()}`).digest('base64url');
}

const etagOf = (key: string) => `"${key.slice(0, 27)}"`;

/**
 * The ImageService as the app composes it: a render pool of worker threads (started on first use;
 * call `pool.warm()` to start it eagerly) and the art store when ASSET_CDN_URL is set.
 */
export function createImageService(opts: {
  config: Pick<Config, 'ASSET_CDN_URL' | 'DATA_DIR' | 'RENDER_CACHE_MB' | 'RENDER_DISK_CACHE_MB'>;
  stats: ImageServiceDeps['stats'];
  records?: ImageRecords;
  logger?: Logger;
  now?: () => number;
  /** worker threads (default: one core left to the event loop) */
  workers?: number;
  metrics?: CoreMetrics;
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
    cacheBytes: opts.config.RENDER_CACHE_MB * 1024 * 1024,
    ...(opts.config.RENDER_DISK_CACHE_MB > 0
      ? { files: PictureFiles.open(join(opts.config.DATA_DIR, 'pictures'), opts.config.RENDER_DISK_CACHE_MB * 1024 * 1024, opts.logger) }
      : {}),
    ...(opts.now ? { now: opts.now } : {}),
    ...(opts.logger ? { logger: opts.logger } : {}),
    ...(opts.metrics ? { metrics: opts.metrics } : {}),
    owned: [pool],
  });
  return { images, pool };
}
