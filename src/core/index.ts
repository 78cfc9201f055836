/**
 * The service core's one contract with its front doors (HTTP API, Discord bot, CLI).
 *
 * A `Core` is built only by `openCore` (src/core/open.ts) — in production, in the CLI and in the
 * tests alike — so every front door sees every part: there is no core without history or images.
 * Front doors read through the interfaces below; the poller and the backfill take the running
 * services `openCore` also returns.
 */
import type { Config } from '../config.ts';
import type { Logger } from '../log.ts';
import type { ApiKeyStore } from '../store/apikeys.ts';
import type { KeyvStores } from '../store/keyv.ts';
import type { Coordination } from './coordination.ts';
import type { HistoryService } from './history.ts';
import type { ImageService } from './images.ts';
import type { UpstreamReads } from './types.ts';

export type { Fetched, Freshness, RankingResponse, RankingKind, ReadOptions, UpstreamReads } from './types.ts';

/** What front doors read of recorded history (and the pins a linked member or a board holds). */
export type HistoryReads = Pick<
  HistoryService,
  | 'pin'
  | 'unpin'
  | 'searchPlayers'
  | 'searchClubs'
  | 'playerHistory'
  | 'playerLog'
  | 'playerPush'
  | 'clubHistory'
  | 'clubLog'
  | 'clubActivity'
  | 'clubChanges'
  | 'clubMembersChangedSince'
  | 'pinnedChangedSince'
  | 'pinsOf'
  | 'playerGains'
  | 'bestBuild'
  | 'events'
  | 'maps'
  | 'map'
>;

/** The pictures front doors ask for. */
export type ImageReads = Pick<ImageService, 'playerImage' | 'clubImage' | 'playerChart' | 'clubChart'>;

/** API accounts and keys as front doors use them. */
export type ApiKeys = Pick<ApiKeyStore, 'issue' | 'issueForDiscordUser' | 'verify' | 'planOf' | 'setPlan' | 'revoke'>;

export interface Core {
  readonly config: Config;
  readonly logger: Logger;
  /** keyv namespaces: the response cache, rate limits, guild settings, links, boards, component state */
  readonly stores: KeyvStores;
  /** upstream data through the cache (single-flight, stale-if-error) */
  readonly stats: UpstreamReads;
  readonly keys: ApiKeys;
  readonly history: HistoryReads;
  readonly images: ImageReads;
  /** the role of this process, and claims/leases shared by a cluster's processes (memory in one process) */
  readonly coordination: Coordination;
}
