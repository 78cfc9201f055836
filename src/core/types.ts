/**
 * The service core's contract with its front doors (HTTP API, Discord bot, CLI).
 *
 * Every read of upstream data comes back as a `Fetched<T>`: the data plus how fresh it is, so the
 * HTTP API can set Cache-Control/Age/stale headers and the bot can say "data from 7 minutes ago
 * (the game's API is in maintenance)".
 */
import type {
  BattleLog,
  Brawler,
  BrawlerList,
  Club,
  ClubRankingItem,
  EventRotation,
  GameModeList,
  Player,
  PlayerRankingItem,
} from '../upstream/schemas.ts';

/** Where a read was answered from: the memory layer, the shared store, upstream, or a stale copy. */
export type FetchedSource = 'memory' | 'store' | 'upstream' | 'stale';

export interface Fetched<T> {
  data: T;
  /** epoch ms when this copy came from upstream */
  fetchedAt: number;
  /** epoch ms when this copy stops being fresh (fetchedAt + TTL) */
  expiresAt: number;
  /** true when upstream failed and this is the last good copy, past its TTL */
  stale: boolean;
  /** seconds since fetchedAt, whole */
  ageSeconds: number;
  /** the upstream failure that made us serve a stale copy (kind only), when stale */
  staleReason?: string;
  /**
   * A digest of this copy's content, equal for equal data (the cache entry's version). Answers
   * derived from the data (pictures) are keyed by it instead of by the data itself. Absent on
   * copies made outside the core's cache.
   */
  version?: string;
  /** where the read was answered from (absent outside the core's cache) */
  source?: FetchedSource;
  /** the cache key of the copy (absent outside the core's cache): what `peekFresh` is asked with */
  key?: string;
}

/** How fresh a copy still held in memory is now (`UpstreamReads.peekFresh`). */
export interface Freshness {
  /** epoch ms when the copy stops being fresh */
  expiresAt: number;
  /** seconds since the copy was fetched, whole */
  ageSeconds: number;
}

/** Rankings in the interface's envelope `{region, timestamp, items}`. */
export interface RankingResponse<T> {
  /** 'global' or the upper-case country code */
  region: string;
  /** unix seconds when the ranking was fetched */
  timestamp: number;
  items: T[];
}

export type RankingKind = 'players' | 'clubs' | 'brawlers';

/** How a front door or the poller reads. */
export interface ReadOptions {
  /** who waits: interactive reads go first in the upstream budget (default interactive) */
  priority?: 'interactive' | 'poll';
  /** false for reads that are not a user's look-up (polling), so they don't renew tracking */
  viewed?: boolean;
  /** skip the cache (still single-flighted); the poller wants what upstream says now */
  fresh?: boolean;
}

/** Upstream reads of the service core. Methods throw the typed errors of upstream/errors.ts. */
export interface UpstreamReads {
  player(tag: string, o?: ReadOptions): Promise<Fetched<Player>>;
  battlelog(tag: string, o?: ReadOptions): Promise<Fetched<BattleLog>>;
  club(tag: string, o?: ReadOptions): Promise<Fetched<Club>>;
  playerRankings(countryCode: string, limit?: number, o?: ReadOptions): Promise<Fetched<RankingResponse<PlayerRankingItem>>>;
  clubRankings(countryCode: string, limit?: number, o?: ReadOptions): Promise<Fetched<RankingResponse<ClubRankingItem>>>;
  brawlerRankings(countryCode: string, brawlerId: number, limit?: number, o?: ReadOptions): Promise<Fetched<RankingResponse<PlayerRankingItem>>>;
  brawlers(o?: ReadOptions): Promise<Fetched<BrawlerList>>;
  brawler(brawlerId: number, o?: ReadOptions): Promise<Fetched<Brawler>>;
  eventRotation(o?: ReadOptions): Promise<Fetched<EventRotation>>;
  gameModes(o?: ReadOptions): Promise<Fetched<GameModeList>>;
  /**
   * A user's read repeated synchronously: when the memory layer still holds, fresh, the very copy a
   * read returned (its `key` and `fetchedAt`), counts the read as the method would (a memory hit, and
   * a look-up of the player or club) and says how fresh the copy is now; otherwise does nothing and
   * returns undefined (the copy is stale, evicted, replaced, or a remembered 404), and the caller
   * reads as usual. The HTTP fast path answers a remembered URL with it without calling its handler.
   */
  peekFresh(key: string, fetchedAt: number): Freshness | undefined;
}
