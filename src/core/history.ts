/**
 * HistoryService: what Starr Stats recorded, as the front doors ask for it (search, snapshots,
 * change logs, trophy push, club history, best builds, events with predictions, maps and their
 * statistics, chart series), plus the recording side: it observes the StatsService (every fresh
 * upstream answer is recorded, every look-up renews tracking) and writes observations in group
 * commits (one transaction per batch of whatever arrived meanwhile).
 */
import type { Config } from '../config.ts';
import type { Logger } from '../log.ts';
import { HistoryStore, sec, type ClubEventPosition, type ClubEventRow, type Observation, type PlayerBattleRow } from '../store/history-store.ts';
import type { Snapshot } from '../store/history-snapshots.ts';
import type { MatchClass } from '../store/search-fold.ts';
import type { SearchRow } from '../store/history-search.ts';
import { items, type Json } from '../store/snapshot.ts';
import { NotFoundError } from '../upstream/errors.ts';
import type * as S from '../upstream/schemas.ts';
import { isValidTag, parseTag } from '../upstream/tags.ts';
import { Lru } from '../lib/lru.ts';
import {
  bestBuildOf,
  clubSnapshotView,
  DAY_S,
  itemNames,
  mapStats,
  MIN_SAMPLE,
  playerLogEvents,
  playerSnapshotView,
  predictUpcoming,
  pushOf,
} from './history-derive.ts';
import { ACTIVITY_DAYS, clubActivityOf, playerGainOf, type ActivityThresholds, type PlayerGain } from './club-activity.ts';
import type {
  ActivitySort,
  BestBuild,
  ClubActivity,
  ClubHistory,
  ClubLog,
  ClubLogEvent,
  ClubSearchPage,
  Events,
  EventItem,
  MapDetail,
  MapList,
  PlayerHistory,
  PlayerLog,
  PlayerPush,
  PlayerSearchItem,
  PlayerSearchPage,
} from './history-schemas.ts';
import type { CoreObserver, FetchedKind } from './service.ts';
import type { Fetched, ReadOptions } from './types.ts';

export type EntityKind = 'player' | 'club';

export type { ClubEventPosition } from '../store/history-store.ts';

/** Order of changes: poll time, then kind, then subject (the club events' primary key order). */
export function positionOrder(a: ClubEventPosition, b: ClubEventPosition): number {
  return a.t - b.t || (a.kind < b.kind ? -1 : a.kind > b.kind ? 1 : 0) || (a.subject < b.subject ? -1 : a.subject > b.subject ? 1 : 0);
}

/** One recorded change of a club, as a feed posts it. */
export interface ClubChange {
  /** unix seconds of the poll that saw it */
  t: number;
  /** 'push': a member's trophies reached `pushTrophies` above where they stood at the day's start (UTC) */
  kind: ClubEventRow['kind'] | 'push';
  /** member tag (join, leave, role, push) or settings field */
  subject: string;
  /** the member's name ('' for settings, or when unknown) */
  name: string;
  old: Json | null;
  new: Json | null;
  /** leave: trophies in the last state recorded before they left */
  trophies?: number;
  /** leave: their recorded join (recorded: true), or when recording of the club began (they were already in it) */
  inClubSince?: { t: number; recorded: boolean };
}

/** The reads of the StatsService history needs (tag look-ups, rotation, catalogue). */
export interface HistoryStats {
  player(tag: string): Promise<Fetched<S.Player>>;
  club(tag: string): Promise<Fetched<S.Club>>;
  eventRotation(): Promise<Fetched<S.EventRotation>>;
  brawlers(o?: ReadOptions): Promise<Fetched<S.BrawlerList>>;
}

export type HistoryConfig = Pick<Config, 'TRACK_DAYS' | 'POLL_PLAYER_MINUTES' | 'POLL_CLUB_MINUTES' | 'HISTORY_DAYS'>;

export interface HistoryServiceOptions {
  store: HistoryStore;
  stats: HistoryStats;
  config: HistoryConfig;
  /** epoch ms; tests pass the simulated world's virtual clock */
  now?: () => number;
  logger?: Logger;
  /** seconds answers stay fresh in HTTP caches (default 60) */
  ttlSeconds?: number;
}

export type PlayerMetric =
  | 'trophies'
  | 'highestTrophies'
  | 'expLevel'
  | 'totalPrestigeLevel'
  | '3vs3Victories'
  | 'soloVictories'
  | 'duoVictories'
  | 'victories'
  | 'fame'
  | 'bestBrawlerHighest'
  | 'brawlers'
  | 'battlesPerDay'
  | 'winsPerDay';
export type ClubMetric = 'trophies' | 'memberCount' | 'memberWins' | 'requiredTrophies';

export interface Point {
  /** epoch ms */
  t: number;
  v: number;
}

type Hit = SearchRow & { match: PlayerSearchItem['match'] };

const MATCH_NAMES: Record<MatchClass, PlayerSearchItem['match']> = { 0: 'exact', 1: 'prefix', 2: 'word', 3: 'substring' };
/** Look-ups renew tracking at most this often per entity (each renewal is a write). */
const RENEW_EVERY_MS = 3_600_000;
/** How many top players' builds a best build looks at. */
export const BEST_BUILD_SAMPLE = 100;
/** Rotation history used for predictions. */
const ROTATION_LOOKBACK_S = 60 * DAY_S;
const BATCH = 500;
/**
 * A brawler named for the first time by a battle or profile but missing from the recorded catalogue
 * refreshes the catalogue at most this often. First sightings are rare (a release day brings one or
 * two brawlers), but a store upgraded from before names were recorded meets every brawler at once.
 */
export const CATALOGUE_REFRESH_GAP_MS = 10 * 60_000;
/** The catalogue refresh is background work: it waits behind users in the upstream budget. */
const CATALOGUE_REFRESH: ReadOptions = { fresh: true, priority: 'poll', viewed: false };
/** Meta key of the poller's job times. */
const JOB_TIMES = 'poller.jobs';

const num = (v: Json | undefined): number => (typeof v === 'number' ? v : 0);

export class HistoryService {
  private readonly store: HistoryStore;
  private readonly stats: HistoryStats;
  private readonly config: HistoryConfig;
  private readonly now: () => number;
  private readonly logger?: Logger;
  private readonly ttlMs: number;
  private pending: Observation[] = [];
  private writing: Promise<void> | null = null;
  private readonly side = new Set<Promise<unknown>>();
  /**
   * When each player and club was last renewed, by tag: a cached answer's look-up reads it with the
   * tag string the core keeps per cache key, not a `${kind}:${tag}` made per answer (`renewedRecently`).
   */
  private readonly renewed: Record<EntityKind, Lru<string, number>> = { player: new Lru(50_000), club: new Lru(10_000) };
  private lastCatalogueRefresh = -Infinity;

  constructor(opts: HistoryServiceOptions) {
    this.store = opts.store;
    this.stats = opts.stats;
    this.config = opts.config;
    this.now = opts.now ?? Date.now;
    this.logger = opts.logger;
    this.ttlMs = 1000 * (opts.ttlSeconds ?? 60);
  }

  // ------------------------------------------------------------------ recording

  /** The hook the StatsService calls: records fresh data, tracks look-ups. */
  readonly observer: CoreObserver = {
    viewed: (kind, tag) => {
      // a look-up renewed within the hour costs a map read, not a promise (every cached HTTP hit)
      if (!this.renewedRecently(kind, tag)) this.background(this.renew(kind, tag));
    },
    fetched: (kind, key, data, atMs) => {
      const o = toObservation(kind, key, data, atMs);
      if (o) this.enqueue(o);
    },
  };

  /** Queues an observation; it is written with whatever else arrives before the current write ends. */
  enqueue(o: Observation): void {
    this.pending.push(o);
    if (!this.writing) this.writing = this.drain();
  }

  private async drain(): Promise<void> {
    while (this.pending.length > 0) {
      const batch = this.pending.splice(0, BATCH);
      try {
        const report = await this.store.record(batch);
        if (report.newBrawlers.length > 0) this.background(this.refreshCatalogueFor(report.newBrawlers));
      } catch (e) {
        this.logger?.error({ err: e, observations: batch.length }, 'could not record observations');
      }
    }
    this.writing = null;
  }

  private background(p: Promise<unknown>): void {
    const tracked = p.catch((e: unknown) => this.logger?.error({ err: e }, 'history background write failed'));
    this.side.add(tracked);
    void tracked.finally(() => this.side.delete(tracked));
  }

  /** Resolves once everything queued so far is committed. */
  async flush(): Promise<void> {
    while (this.writing || this.side.size > 0) {
      if (this.writing) await this.writing;
      await Promise.all([...this.side]);
    }
  }

  private renewedRecently(kind: EntityKind, tag: string): boolean {
    const last = this.renewed[kind].get(tag);
    return last !== undefined && this.now() - last < RENEW_EVERY_MS;
  }

  /** Renews tracking after a look-up (TRACK_DAYS from now). */
  async renew(kind: EntityKind, tag: string): Promise<void> {
    if (this.renewedRecently(kind, tag)) return;
    const now = this.now();
    this.renewed[kind].set(tag, now);
    await this.store.track(kind, tag, now + this.config.TRACK_DAYS * DAY_S * 1000, now);
  }

  /** Keeps a player or club tracked while `reason` holds (a linked member, a channel board). */
  pin(kind: EntityKind, tag: string, reason: string): Promise<void> {
    return this.store.pin(kind, parseTag(tag), reason, this.now());
  }

  unpin(kind: EntityKind, tag: string, reason: string): Promise<void> {
    return this.store.unpin(kind, parseTag(tag), reason);
  }

  prune(): Promise<import('../store/history-store.ts').PruneReport> {
    return this.store.prune(this.now(), this.config.HISTORY_DAYS);
  }

  // ------------------------------------------------------------------ the poll schedule (the poller's)

  /** Tracked players or clubs whose poll is due at `nowMs`, at most `limit`. */
  due(kind: EntityKind, nowMs: number, limit: number): Promise<{ id: number; tag: string; dueAt: number }[]> {
    return this.store.due(kind, nowMs, limit);
  }

  /** Records a poll of these entities (ids from `due`) and when each is due next. */
  markPolled(kind: EntityKind, ids: number[], nowMs: number, nextMs: number): Promise<void> {
    return this.store.markPolled(kind, ids, nowMs, nextMs);
  }

  /** When the next tracked player or club is due (epoch ms), or null when none is tracked. */
  nextDue(kind: EntityKind, nowMs: number): Promise<number | null> {
    return this.store.nextDue(kind, nowMs);
  }

  /** Makes `tags` exactly the entities pinned for `reason` (the top of a ranking, say). */
  replacePins(kind: EntityKind, reason: string, tags: string[], nowMs: number): Promise<void> {
    return this.store.replacePins(kind, reason, tags, nowMs);
  }

  /** When each periodic poller job last ran (epoch ms), as saved by `saveJobTimes`; survives restarts. */
  async jobTimes(): Promise<Record<string, number>> {
    const saved = await this.store.getMeta<Record<string, unknown>>(JOB_TIMES);
    return Object.fromEntries(Object.entries(saved ?? {}).filter((e): e is [string, number] => typeof e[1] === 'number'));
  }

  saveJobTimes(times: Record<string, number>): Promise<void> {
    return this.store.setMeta(JOB_TIMES, times);
  }

  async close(): Promise<void> {
    await this.flush();
  }

  /**
   * Brawlers seen for the first time that the recorded catalogue does not list: fetch the catalogue
   * again (their gadgets and star powers come with it). Without a recorded catalogue nothing is
   * asked: the poller's catalogue job fetches it first thing.
   */
  private async refreshCatalogueFor(ids: number[]): Promise<void> {
    const saved = await this.store.getMeta<{ items: { id: number }[] }>('catalogue.brawlers');
    if (!saved) return;
    const listed = new Set(saved.items.map((b) => b.id));
    const missing = ids.filter((id) => !listed.has(id));
    const now = this.now();
    if (missing.length === 0 || now - this.lastCatalogueRefresh < CATALOGUE_REFRESH_GAP_MS) return;
    this.lastCatalogueRefresh = now;
    this.logger?.info({ brawlers: missing }, 'brawlers the catalogue does not list: fetching it again');
    await this.stats.brawlers(CATALOGUE_REFRESH);
  }

  // ------------------------------------------------------------------ helpers

  private fetched<T>(data: T, atMs = this.now(), ttlMs = this.ttlMs): Fetched<T> {
    const now = this.now();
    return { data, fetchedAt: atMs, expiresAt: atMs + ttlMs, stale: false, ageSeconds: Math.max(0, Math.floor((now - atMs) / 1000)) };
  }

  private async tracking(kind: EntityKind, tag: string, since: number | null) {
    const t = await this.store.tracking(kind, tag, this.now());
    return { tracked: t.tracked, trackedUntil: t.until !== null && t.until > 0 ? Math.floor(t.until / 1000) : null, since };
  }

  /**
   * A look-up of a player or club through history: renews tracking, and when nothing is recorded
   * yet fetches it once (which records the first snapshot). Unknown tags are NotFoundError; other
   * upstream failures leave the answer empty rather than failing it.
   */
  private async ensureRecorded(kind: EntityKind, tag: string): Promise<void> {
    const has = await this.store.currentState(kind, tag);
    if (!has) {
      try {
        if (kind === 'player') await this.stats.player(tag);
        else await this.stats.club(tag);
      } catch (e) {
        if (e instanceof NotFoundError) throw e;
        this.logger?.warn({ err: e, kind, tag }, 'could not fetch for a first snapshot');
      }
    }
    await this.renew(kind, tag);
    await this.flush();
  }

  private async firstT(kind: EntityKind, tag: string): Promise<number | null> {
    const t = await this.store.firstRecorded(kind, tag);
    return t === null ? null : t;
  }

  // ------------------------------------------------------------------ search

  async searchPlayers(name: string, limit: number, offset: number): Promise<Fetched<PlayerSearchPage>> {
    const page = await this.search('player', name, limit, offset);
    const items: PlayerSearchItem[] = page.items.map((r) => ({
      tag: r.tag,
      name: r.name,
      trophies: r.trophies,
      club: r.clubTag ? { tag: r.clubTag, name: r.clubName ?? '' } : null,
      match: r.match,
    }));
    return this.fetched({ items, total: page.total, limit, offset });
  }

  async searchClubs(name: string, limit: number, offset: number): Promise<Fetched<ClubSearchPage>> {
    const page = await this.search('club', name, limit, offset);
    const items = page.items.map((r) => ({
      tag: r.tag,
      name: r.name,
      trophies: r.trophies,
      memberCount: r.memberCount,
      badgeId: r.badgeId,
      match: r.match,
    }));
    return this.fetched({ items, total: page.total, limit, offset });
  }

  /**
   * Name matches, preceded by the player/club whose tag the query is (when it is a valid tag that
   * exists: from the index, else fetched from upstream). A query written with `#` is a tag only.
   */
  private async search(kind: EntityKind, name: string, limit: number, offset: number): Promise<{ items: Hit[]; total: number }> {
    let byTag: Hit | null = null;
    const tagOnly = /^\s*(#|%23)/i.test(name);
    if (isValidTag(name)) {
      const tag = parseTag(name);
      let row = await this.store.entity(kind, tag);
      if (!row || !row.name) {
        try {
          if (kind === 'player') await this.stats.player(tag);
          else await this.stats.club(tag);
          await this.flush();
          row = await this.store.entity(kind, tag);
        } catch (e) {
          if (!(e instanceof NotFoundError)) this.logger?.warn({ err: e, tag }, 'search: tag look-up failed');
          row = null;
        }
      }
      if (row && row.name) byTag = { ...row, match: 'tag' };
    }
    if (tagOnly) return { items: byTag && offset === 0 && limit > 0 ? [byTag] : [], total: byTag ? 1 : 0 };
    // The tag hit takes the first place: name results shift by one.
    const shift = byTag ? 1 : 0;
    const names = await this.store.search(kind, name, limit + shift, Math.max(0, offset - shift));
    const rows: Hit[] = names.items.filter((r) => r.tag !== byTag?.tag).map((r) => ({ ...r, match: MATCH_NAMES[r.match] }));
    const all = byTag && offset === 0 ? [byTag, ...rows] : rows;
    const dup = byTag !== null && names.items.some((r) => r.tag === byTag!.tag);
    return { items: all.slice(0, limit), total: names.total + (byTag && !dup ? 1 : 0) };
  }

  // ------------------------------------------------------------------ players

  async playerHistory(tagInput: string, limit: number): Promise<Fetched<PlayerHistory>> {
    const tag = parseTag(tagInput);
    await this.ensureRecorded('player', tag);
    const snaps = limit > 0 ? await this.store.snapshots('player', tag, { limit }) : [];
    return this.fetched({ tag, ...(await this.tracking('player', tag, await this.firstT('player', tag))), items: snaps.map(playerSnapshotView) });
  }

  /** Change events newest first; reads further back until `limit` events are certain. */
  async playerLog(tagInput: string, limit: number): Promise<Fetched<PlayerLog>> {
    const tag = parseTag(tagInput);
    await this.ensureRecorded('player', tag);
    const gap = Math.max(3600, 2 * this.config.POLL_PLAYER_MINUTES * 60);
    let want = Math.max(limit, 1) * 4 + 8;
    let items: PlayerLog['items'] = [];
    for (;;) {
      const newest = await this.store.snapshots('player', tag, { limit: want });
      const ascending = [...newest].reverse();
      const complete = newest.length < want;
      const oldest = ascending[0]?.t ?? 0;
      const battles = await this.store.playerBattles(tag, { sinceMs: oldest * 1000 });
      let events = playerLogEvents(ascending, battles.map((b) => b.t), gap);
      // A session reaching back to the oldest snapshot read may have started earlier.
      if (!complete) events = events.filter((e) => e.type !== 'trophies' || e.start - gap > oldest);
      if (complete || events.length >= limit) {
        items = events.slice(0, Math.max(0, limit));
        break;
      }
      want *= 4;
    }
    return this.fetched({ tag, ...(await this.tracking('player', tag, await this.firstT('player', tag))), items });
  }

  async playerPush(tagInput: string): Promise<Fetched<PlayerPush>> {
    const tag = parseTag(tagInput);
    await this.ensureRecorded('player', tag);
    const nowS = sec(this.now());
    const snaps = await this.store.snapshots('player', tag, { sinceMs: (nowS - 31 * DAY_S) * 1000, includeBefore: true });
    const battles = await this.store.playerBattles(tag, { limit: 200 });
    const push = pushOf(tag, snaps, battles, nowS);
    return this.fetched({ ...push, ...(await this.tracking('player', tag, await this.firstT('player', tag))) });
  }

  // ------------------------------------------------------------------ clubs

  async clubHistory(tagInput: string, limit: number): Promise<Fetched<ClubHistory>> {
    const tag = parseTag(tagInput);
    await this.ensureRecorded('club', tag);
    const snaps = limit > 0 ? await this.store.snapshots('club', tag, { limit }) : [];
    return this.fetched({ tag, ...(await this.tracking('club', tag, await this.firstT('club', tag))), items: snaps.map(clubSnapshotView) });
  }

  async clubLog(tagInput: string, limit: number): Promise<Fetched<ClubLog>> {
    const tag = parseTag(tagInput);
    await this.ensureRecorded('club', tag);
    const rows = limit > 0 ? await this.store.clubEvents(tag, limit) : [];
    const items: ClubLogEvent[] = [];
    for (const r of rows) {
      if (r.kind === 'settings') {
        items.push({ timestamp: r.t, type: 'settings', field: r.subject, from: r.old, to: r.new });
        continue;
      }
      let name = typeof r.new === 'string' && r.kind === 'join' ? r.new : typeof r.old === 'string' && r.kind === 'leave' ? r.old : '';
      if (r.kind === 'role') name = (await this.store.entity('player', r.subject))?.name ?? '';
      const e: ClubLogEvent = { timestamp: r.t, type: r.kind, player: { tag: r.subject, name }, from: null, to: null };
      if (r.kind === 'role') {
        e.from = r.old;
        e.to = r.new;
      }
      items.push(e);
    }
    return this.fetched({ tag, ...(await this.tracking('club', tag, await this.firstT('club', tag))), items });
  }

  /**
   * Each member's activity over the last `days` days (see club-activity.ts). Looking it up keeps the
   * club tracked and its members too, so their battles are recorded from then on.
   */
  async clubActivity(
    tagInput: string,
    opts: { days?: number; sinceMs?: number; untilMs?: number; thresholds?: ActivityThresholds; sort?: ActivitySort } = {},
  ): Promise<Fetched<ClubActivity>> {
    const tag = parseTag(tagInput);
    await this.ensureRecorded('club', tag);
    const nowS = sec(Math.min(opts.untilMs ?? Infinity, this.now()));
    const periodFromS = opts.sinceMs !== undefined ? sec(opts.sinceMs) : nowS - (opts.days ?? ACTIVITY_DAYS.default) * DAY_S;
    const days = Math.max(1, Math.ceil((nowS - periodFromS) / DAY_S));
    const readFromS = Math.min(periodFromS, nowS - 30 * DAY_S);
    const snapshots = (await this.store.snapshots('club', tag, { sinceMs: readFromS * 1000, includeBefore: true })).filter((s) => s.t <= nowS);
    const memberTags = Object.keys(snapshots[0] ? items(snapshots[0].state, 'members') : {});
    for (const m of memberTags) this.background(this.renew('player', m));
    const [joins, battles] = await Promise.all([this.store.clubJoins(tag), this.store.battleSummary(memberTags, periodFromS * 1000, (nowS + 1) * 1000)]);
    const activity = clubActivityOf({
      tag,
      snapshots,
      joins,
      battles,
      nowS,
      days,
      fromS: periodFromS,
      ...(opts.thresholds ? { thresholds: opts.thresholds } : {}),
      ...(opts.sort ? { sort: opts.sort } : {}),
    });
    return this.fetched({ ...activity, ...(await this.tracking('club', tag, await this.firstT('club', tag))) });
  }

  /**
   * A club's recorded changes after `after`, oldest first, for a channel feed: who joined, who left
   * (with the days since their recorded join and their trophies in the last state before they
   * left), role and settings changes. Reads only what the poller recorded: a feed pins its club
   * instead of renewing tracking with every read.
   */
  async clubChanges(tagInput: string, after: ClubEventPosition, limit: number, opts: { pushTrophies?: number } = {}): Promise<ClubChange[]> {
    const tag = parseTag(tagInput);
    const rows = await this.store.clubEventsAfter(tag, after, limit);
    let pushes = opts.pushTrophies ? await this.clubPushes(tag, after, opts.pushTrophies) : [];
    // Events were read up to `limit`: pushes after the last of them wait for the next read.
    const last = rows.length === limit ? rows[rows.length - 1]! : null;
    if (last) pushes = pushes.filter((p) => positionOrder(p, last) <= 0);
    if (rows.length === 0 && pushes.length === 0) return [];
    const out: ClubChange[] = [];
    let beforeT = -1;
    let beforeMembers: Record<string, Record<string, Json>> = {};
    let first: number | null | undefined;
    for (const r of rows) {
      const c: ClubChange = { t: r.t, kind: r.kind, subject: r.subject, name: '', old: r.old, new: r.new };
      if (r.kind === 'join' && typeof r.new === 'string') c.name = r.new;
      else if (r.kind === 'leave' && typeof r.old === 'string') c.name = r.old;
      else if (r.kind === 'role') c.name = (await this.store.entity('player', r.subject))?.name ?? '';
      if (r.kind === 'leave') {
        // The state in force just before the poll that saw them gone: their trophies at leaving.
        if (beforeT !== r.t) {
          const snaps = await this.store.snapshots('club', tag, { sinceMs: r.t * 1000, includeBefore: true });
          const prev = snaps.find((s) => s.t < r.t);
          beforeT = r.t;
          beforeMembers = prev ? (items(prev.state, 'members') as Record<string, Record<string, Json>>) : {};
        }
        const m = beforeMembers[r.subject];
        if (m && typeof m.trophies === 'number') c.trophies = m.trophies;
        const joined = await this.store.lastJoin(tag, r.subject, r.t);
        if (joined !== null) c.inClubSince = { t: joined, recorded: true };
        else {
          // Not seen joining: they were there when recording began.
          if (first === undefined) first = await this.store.firstRecorded('club', tag);
          if (first !== null) c.inClubSince = { t: first, recorded: false };
        }
      }
      out.push(c);
    }
    return [...out, ...pushes].sort(positionOrder).slice(0, limit);
  }

  /**
   * Big pushes after `after`: at each recorded state of the club, members whose trophies stand at
   * least `threshold` above the state in force at the start of that UTC day, the first time that
   * day. Derived from recorded states only, so the same history always gives the same pushes at
   * the same times (a feed's retried post carries the same changes).
   */
  private async clubPushes(tag: string, after: ClubEventPosition, threshold: number): Promise<ClubChange[]> {
    const dayOf = (t: number) => Math.floor(t / DAY_S) * DAY_S;
    const firstDay = dayOf(after.t);
    // newest first, down to the state in force at the start of the cursor's day
    const snaps = (await this.store.snapshots('club', tag, { sinceMs: firstDay * 1000, includeBefore: true })).reverse();
    const out: ClubChange[] = [];
    let day = -1;
    let base: Record<string, Record<string, Json>> = {};
    let best = new Map<string, number>();
    let inForce: Record<string, Record<string, Json>> | null = null;
    for (const s of snaps) {
      const members = items(s.state, 'members') as Record<string, Record<string, Json>>;
      if (s.t < firstDay) {
        inForce = members;
        continue;
      }
      if (dayOf(s.t) !== day) {
        // A new day: its baseline is the state in force at its start (the previous state, or this
        // one when it was recorded at the very start of the day or nothing was recorded before).
        day = dayOf(s.t);
        base = s.t === day || !inForce ? members : inForce;
        best = new Map();
      }
      inForce = members;
      for (const [m, now] of Object.entries(members)) {
        const from = base[m]?.trophies;
        const to = now.trophies;
        if (typeof from !== 'number' || typeof to !== 'number') continue;
        const gain = to - from;
        const before = best.get(m) ?? 0;
        if (gain > before) best.set(m, gain);
        if (gain < threshold || before >= threshold) continue;
        const c: ClubChange = { t: s.t, kind: 'push', subject: m, name: typeof now.name === 'string' ? now.name : '', old: from, new: to };
        if (positionOrder(c, after) > 0) out.push(c);
      }
    }
    return out;
  }

  /**
   * What automatic roles follow, from what the poller recorded since `sinceMs`: the members of a
   * club who joined, left or changed club role.
   */
  clubMembersChangedSince(clubTag: string, sinceMs: number): Promise<string[]> {
    return this.store.clubMembersChangedSince(parseTag(clubTag), sec(sinceMs));
  }

  /** Pinned entities (reason starting with `prefix`, e.g. `link:`) whose recorded state changed since `sinceMs`. */
  pinnedChangedSince(kind: EntityKind, prefix: string, sinceMs: number): Promise<{ tag: string; reason: string }[]> {
    return this.store.pinnedChangedSince(kind, prefix, sec(sinceMs));
  }

  /** The pins (reason starting with `prefix`) of these entities: e.g. who linked each account. */
  pinsOf(kind: EntityKind, tags: string[], prefix: string): Promise<{ tag: string; reason: string }[]> {
    return tags.length ? this.store.pinsOf(kind, tags.map((t) => parseTag(t)), prefix) : Promise.resolve([]);
  }

  /**
   * Linked members' trophies gained and battles over [sinceMs, untilMs] (default now) from their own
   * recordings; players with nothing recorded are absent. Boards of a server's members use it.
   */
  async playerGains(tags: string[], sinceMs: number, untilMs?: number): Promise<PlayerGain[]> {
    const toS = sec(Math.min(untilMs ?? Infinity, this.now()));
    const fromS = sec(sinceMs);
    const list = [...new Set(tags.map((t) => parseTag(t)))];
    const battles = await this.store.battleSummary(list, fromS * 1000, (toS + 1) * 1000);
    const out: PlayerGain[] = [];
    for (const tag of list) {
      const snaps = await this.store.snapshots('player', tag, { sinceMs: fromS * 1000, includeBefore: true });
      const g = playerGainOf(tag, snaps, battles.get(tag), fromS, toS);
      if (g) out.push(g);
    }
    return out;
  }

  // ------------------------------------------------------------------ catalogue-based

  /** The catalogue: live when upstream answers, else the copy recorded last. */
  private async catalogue(): Promise<S.Brawler[]> {
    try {
      return (await this.stats.brawlers()).data.items;
    } catch (e) {
      const saved = await this.store.getMeta<{ items: S.Brawler[] }>('catalogue.brawlers');
      if (saved) return saved.items;
      throw e;
    }
  }

  /**
   * Names for ids: what battles, profiles and catalogues last said (recorded), then the live
   * catalogue for what is not recorded yet; '' for an id nobody named.
   */
  private async namer(ids: number[], catalogue: () => Promise<Map<number, string>>): Promise<(id: number) => string> {
    const recorded = await this.store.gameNames(ids);
    const live = ids.some((id) => !recorded.has(id)) ? await catalogue() : new Map<number, string>();
    return (id) => recorded.get(id) || live.get(id) || '';
  }

  /** A brawler the catalogue lists, or one only battles and profiles named (limited, or released since). */
  async bestBuild(brawlerId: number): Promise<Fetched<BestBuild>> {
    const catalogue = await this.catalogue();
    const listed = catalogue.find((x) => x.id === brawlerId);
    const rows = await this.store.topBuilds(brawlerId, BEST_BUILD_SAMPLE);
    const ids = [brawlerId, ...rows.flatMap((r) => [...r.gadgets, ...r.starPowers, ...r.hyperCharges, ...r.gears])];
    const known = new Map([...itemNames(catalogue), ...catalogue.map((b): [number, string] => [b.id, b.name])]);
    const name = await this.namer(ids, async () => known);
    if (!listed && !name(brawlerId)) throw new NotFoundError(`Brawler ${brawlerId} not found`, 404, 'notFound');
    const results = await this.store.brawlerResults(rows.map((r) => r.playerId), brawlerId);
    return this.fetched(bestBuildOf({ id: brawlerId, name: name(brawlerId) }, rows, results, name));
  }

  async events(): Promise<Fetched<Events>> {
    const rotation = await this.stats.eventRotation();
    const history = await this.store.rotationHistory((sec(this.now()) - ROTATION_LOOKBACK_S) * 1000);
    const active: EventItem[] = rotation.data.map((e) => ({
      slotId: e.slotId,
      startTime: e.startTime,
      endTime: e.endTime,
      event: { ...e.event },
      predicted: false,
    }));
    return { ...rotation, data: { active, upcoming: predictUpcoming(rotation.data, history) } };
  }

  async maps(): Promise<Fetched<MapList>> {
    const rows = await this.store.maps();
    return this.fetched({ items: rows.map((m) => ({ id: m.id, name: m.name, mode: m.mode, firstSeen: m.firstSeen, lastActive: m.lastActive })) });
  }

  async map(mapId: number): Promise<Fetched<MapDetail>> {
    const m = await this.store.map(mapId);
    if (!m) throw new NotFoundError(`Map ${mapId} not found`, 404, 'notFound');
    const counts = await this.store.mapBrawlerCounts(mapId);
    const name = await this.namer(
      counts.rows.map((r) => r.brawlerId),
      async () => {
        try {
          return new Map((await this.catalogue()).map((b) => [b.id, b.name]));
        } catch {
          // Statistics without names beat no statistics while upstream is down.
          return new Map();
        }
      },
    );
    const { stats, prior } = mapStats(counts.rows, name);
    return this.fetched({
      id: m.id,
      name: m.name,
      mode: m.mode,
      firstSeen: m.firstSeen,
      lastActive: m.lastActive,
      battles: counts.battles,
      minSample: MIN_SAMPLE,
      prior,
      stats,
    });
  }

  // ------------------------------------------------------------------ series (charts)

  /**
   * A recorded metric over [fromMs, toMs], oldest first, epoch-ms points. Levels (trophies,
   * victories...) give one point per snapshot plus the value in force at `fromMs`; per-day counts
   * (battlesPerDay, winsPerDay) give one point per UTC day with recorded battles.
   */
  async series(kind: 'player', tag: string, metric: PlayerMetric, fromMs: number, toMs: number): Promise<Point[]>;
  async series(kind: 'club', tag: string, metric: ClubMetric, fromMs: number, toMs: number): Promise<Point[]>;
  async series(kind: EntityKind, tagInput: string, metric: PlayerMetric | ClubMetric, fromMs: number, toMs: number): Promise<Point[]> {
    const tag = parseTag(tagInput);
    if (kind === 'player' && (metric === 'battlesPerDay' || metric === 'winsPerDay')) {
      const battles = await this.store.playerBattles(tag, { sinceMs: fromMs, untilMs: toMs });
      return perDay(battles, metric === 'winsPerDay');
    }
    if (kind === 'club' && metric === 'memberWins') return this.memberWins(tag, fromMs, toMs);
    const snaps = await this.store.snapshots(kind, tag, { sinceMs: fromMs, includeBefore: true });
    const value = kind === 'player' ? playerValue(metric as PlayerMetric) : clubValue(metric as ClubMetric);
    return levels(snaps, value, fromMs, toMs);
  }

  /** Σ of the members' victories (3vs3 + solo + duo) at each club snapshot, from their recorded profiles. */
  private async memberWins(tag: string, fromMs: number, toMs: number): Promise<Point[]> {
    const clubSnaps = (await this.store.snapshots('club', tag, { sinceMs: fromMs, includeBefore: true })).reverse();
    const members = new Set<string>();
    for (const s of clubSnaps) for (const m of Object.keys(items(s.state, 'members'))) members.add(m);
    const histories = new Map<string, Snapshot[]>();
    for (const m of members) histories.set(m, await this.store.snapshots('player', m, { sinceMs: fromMs, includeBefore: true }));
    const out: Point[] = [];
    for (const s of clubSnaps) {
      const t = Math.max(s.t * 1000, fromMs);
      if (t > toMs) continue;
      let v = 0;
      let known = 0;
      for (const m of Object.keys(items(s.state, 'members'))) {
        const h = histories.get(m);
        const snap = h?.find((x) => x.t * 1000 <= t) ?? h?.[h.length - 1];
        if (!snap) continue;
        known++;
        v += num(snap.state['3vs3Victories']) + num(snap.state.soloVictories) + num(snap.state.duoVictories);
      }
      if (known > 0) out.push({ t, v });
    }
    return out;
  }

  /** Epoch ms of the first thing recorded about a player or club (null when nothing is). */
  async firstRecorded(kind: EntityKind, tagInput: string): Promise<number | null> {
    const t = await this.store.firstRecorded(kind, parseTag(tagInput));
    return t === null ? null : t * 1000;
  }

  /** Raw snapshots and battles, for adapters (images) that compute their own measures. */
  snapshots(kind: EntityKind, tagInput: string, opts: { limit?: number; sinceMs?: number; includeBefore?: boolean } = {}): Promise<Snapshot[]> {
    return this.store.snapshots(kind, parseTag(tagInput), opts);
  }

  battles(tagInput: string, opts: { sinceMs?: number; untilMs?: number; limit?: number } = {}): Promise<PlayerBattleRow[]> {
    return this.store.playerBattles(parseTag(tagInput), opts);
  }
}

// ------------------------------------------------------------------ pure helpers

function toObservation(kind: FetchedKind, key: string, data: unknown, atMs: number): Observation | null {
  switch (kind) {
    case 'player':
      return { kind: 'player', atMs, data: data as S.Player };
    case 'battlelog':
      return { kind: 'battlelog', atMs, tag: key, data: data as S.BattleLog };
    case 'club':
      return { kind: 'club', atMs, data: data as S.Club };
    case 'rotation':
      return { kind: 'rotation', atMs, data: data as S.EventRotation };
    case 'brawlers':
      return { kind: 'brawlers', atMs, data: (data as S.BrawlerList).items };
    case 'rankings': {
      const env = data as { region: string; items: unknown[] };
      const [what, region] = key.split(':');
      if (what === 'clubs') return { kind: 'clubRanking', atMs, region: region ?? env.region, data: env.items as S.ClubRankingItem[] };
      // Brawler rankings list players too: they enter the search index the same way.
      return { kind: 'playerRanking', atMs, region: what === 'players' ? (region ?? env.region) : `${region}:${key.split(':')[2]}`, data: env.items as S.PlayerRankingItem[] };
    }
    default:
      return null;
  }
}

function playerValue(metric: PlayerMetric): (s: Snapshot) => number {
  return (s) => {
    const st = s.state;
    switch (metric) {
      case 'victories':
        return num(st['3vs3Victories']) + num(st.soloVictories) + num(st.duoVictories);
      case 'fame':
      case 'bestBrawlerHighest':
      case 'brawlers': {
        const all = Object.values(items(st, 'brawlers'));
        if (metric === 'brawlers') return all.length;
        const highs = all.map((b) => Math.max(0, num(b.highestTrophies)));
        return metric === 'fame' ? highs.reduce((a, b) => a + b, 0) : Math.max(0, ...highs);
      }
      default:
        return num(st[metric]);
    }
  };
}

function clubValue(metric: ClubMetric): (s: Snapshot) => number {
  return (s) => {
    if (metric === 'memberCount') return Object.keys(items(s.state, 'members')).length;
    return num(s.state[metric]);
  };
}

/** Level series: the value in force at `fromMs`, then each snapshot inside the window. */
export function levels(newestFirst: Snapshot[], value: (s: Snapshot) => number, fromMs: number, toMs: number): Point[] {
  const out: Point[] = [];
  for (const s of [...newestFirst].reverse()) {
    const t = s.t * 1000;
    if (t > toMs) break;
    const p = { t: Math.max(t, fromMs), v: value(s) };
    if (out.length > 0 && out[out.length - 1]!.t === p.t) out[out.length - 1] = p;
    else out.push(p);
  }
  return out;
}

function perDay(battles: PlayerBattleRow[], winsOnly: boolean): Point[] {
  const days = new Map<number, number>();
  for (const b of battles) {
    if (winsOnly && b.result !== 1) continue;
    const d = Math.floor(b.t / DAY_S) * DAY_S * 1000;
    days.set(d, (days.get(d) ?? 0) + 1);
  }
  return [...days].sort((a, b) => a[0] - b[0]).map(([t, v]) => ({ t, v }));
}

/** Opens the store (DATABASE_URL, else under DATA_DIR) and builds the service, observing the StatsService when it can be observed. */
export async function openHistory(opts: {
  config: HistoryConfig & Pick<Config, 'DATA_DIR' | 'DATABASE_URL' | 'DATABASE_SCHEMA'>;
  stats: HistoryStats & { observe?(o: CoreObserver): () => void };
  now?: () => number;
  logger?: Logger;
}): Promise<{ history: HistoryService; store: HistoryStore; close(): Promise<void> }> {
  const store = await HistoryStore.openFor(opts.config);
  opts.logger?.info({ store: store.location }, 'history store open');
  const history = new HistoryService({ store, stats: opts.stats, config: opts.config, ...(opts.now ? { now: opts.now } : {}), ...(opts.logger ? { logger: opts.logger } : {}) });
  const stop = opts.stats.observe?.(history.observer);
  return {
    history,
    store,
    async close() {
      stop?.();
      await history.close();
      await store.close();
    },
  };
}
