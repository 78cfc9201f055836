/**
 * What the service core needs from the official API (or the simulated world, which speaks the same
 * HTTP). Implemented by `UpstreamClient` in client.ts; every method validates the body with the
 * schemas in schemas.ts and throws the typed errors of errors.ts.
 */
import type {
  BattleLog,
  Brawler,
  BrawlerList,
  BrawlerRankings,
  Club,
  ClubMembers,
  ClubRankings,
  EventRotation,
  GameModeList,
  Player,
  PlayerRankings,
} from './schemas.ts';

export interface PageQuery {
  limit?: number;
  after?: string;
  before?: string;
}

export interface RequestOptions {
  /**
   * Interactive requests (a user waiting) go before polling ones when the shared request budget is
   * exhausted.
   */
  priority?: 'interactive' | 'poll';
  signal?: AbortSignal;
  /**
   * Milliseconds the whole request may take, every attempt, back-off and wait for a token included:
   * each attempt's timeout is cut to what is left, and a retry or a throttle wait that would not
   * fit is not started (the last failure is reported instead). A user waiting for an answer gets
   * one; polling leaves it out and keeps the full timeout and retries.
   */
  budgetMs?: number;
}

export interface UpstreamApi {
  /** 'official' for the game's API (or a proxy of it), 'simulated' for the simulated world */
  readonly kind: 'official' | 'simulated';
  readonly baseUrl: string;
  player(tag: string, opts?: RequestOptions): Promise<Player>;
  battlelog(tag: string, opts?: RequestOptions): Promise<BattleLog>;
  club(tag: string, opts?: RequestOptions): Promise<Club>;
  clubMembers(tag: string, page?: PageQuery, opts?: RequestOptions): Promise<ClubMembers>;
  playerRankings(countryCode: string, page?: PageQuery, opts?: RequestOptions): Promise<PlayerRankings>;
  clubRankings(countryCode: string, page?: PageQuery, opts?: RequestOptions): Promise<ClubRankings>;
  brawlerRankings(countryCode: string, brawlerId: number, page?: PageQuery, opts?: RequestOptions): Promise<BrawlerRankings>;
  brawlers(page?: PageQuery, opts?: RequestOptions): Promise<BrawlerList>;
  brawler(brawlerId: number, opts?: RequestOptions): Promise<Brawler>;
  eventRotation(opts?: RequestOptions): Promise<EventRotation>;
  gameModes(page?: PageQuery, opts?: RequestOptions): Promise<GameModeList>;
  close(): Promise<void>;
}
