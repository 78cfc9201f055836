/**
 * Club feeds: each change the poller records for a club (joins, leaves, role and settings
 * changes) posted in a channel, once.
 *
 * - A feed and its cursor (the last change it posted) live in the durable keyv namespace 'feeds',
 *   one record per feed, so a cursor saved by one process never overwrites another feed's.
 * - Delivery runs where boards run (the delivering role). One process at a time works on a feed
 *   (a lease from core.coordination), reads the feed again under the lease, posts what follows
 *   its cursor, and saves the cursor after each message.
 * - A crash between "posted" and "cursor saved" is covered by Discord: each message carries a
 *   nonce derived from the feed and the first change it shows, with enforce_nonce, so the retry
 *   within a few minutes gets the message already posted instead of a second one. The changes of
 *   one poll are always cut into the same messages (feedMessages), so a retry carries the same
 *   nonces.
 * - A broken channel (deleted, hidden, permissions taken) is marked with its problem for
 *   `/feed list` (with what the admin can do about it) and retried later and later (as boards
 *   are): each retry first checks the channel, so a fixed one loses its mark even when nothing new
 *   is to be posted; the cursor waits, nothing is lost.
 */
import { createHash, randomBytes } from 'node:crypto';
import type Keyv from 'keyv';
import { z } from 'zod';
import { RESTJSONErrorCodes } from 'discord-api-types/v10';
import type { ClubChange, ClubEventPosition } from '../core/history.ts';
import type { Core } from '../core/index.ts';
import { sec } from '../store/history-store.ts';
import type { ComponentStore } from './components.ts';
import { FEED_EVENTS, feedMessages } from './embeds/feed.ts';
import { UserError } from './errors.ts';
import { format } from './format.ts';
import { track } from './history-views.ts';
import { apiCode, boardLanguage, checkChannel, describePostFailure, missingPermissionsProblem, type BoardProblem, type ChannelPoster } from './leaderboards.ts';
import { missingBoardPermissions } from './permissions.ts';
import { renderView } from './render.ts';
import { KeyedQueue } from './serial.ts';
import type { GuildSettingsStore, Premium } from './settings.ts';
import { Colour } from './view.ts';
import { Ticker } from './ticker.ts';

const Position = z.object({ t: z.number(), kind: z.string(), subject: z.string() });

const Feed = z.object({
  id: z.string(),
  guildId: z.string(),
  channelId: z.string(),
  club: z.string(),
  clubName: z.string(),
  events: z.array(z.enum(FEED_EVENTS)).min(1),
  /** with 'push': a member gaining at least this many trophies in a UTC day is posted */
  pushTrophies: z.number().int().positive().optional(),
  createdBy: z.string(),
  createdAt: z.number(),
  /** the server's language when the feed was made; the server's /settings language overrides it */
  locale: z.string(),
  /** the last change handled (posted, or skipped as not wanted) */
  cursor: Position,
  lastPostAt: z.number().optional(),
  lastRunAt: z.number().optional(),
  failures: z.number().int().default(0),
  problem: z.string().optional(),
  problemValues: z.record(z.string(), z.string()).optional(),
});
export type Feed = z.infer<typeof Feed>;

/** Feeds per server: each is a club polled for as long as it exists. */
export const FEED_LIMITS = { free: 3, keyed: 10 } as const;
/** Changes read per feed and run; more wait for the next run (at most 5 messages of 10). */
export const CHANGES_PER_RUN = 50;
/**
 * A feed's lease. Shorter than the window in which Discord deduplicates a nonce ("a few minutes"),
 * so a process that took over from one that died after posting still gets the posted message back.
 */
const LEASE_MS = 60_000;
/** First wait after a failure; doubled after each, up to a day. */
const RETRY_MS = 60_000;
const MAX_BACKOFF_MS = 24 * 3600_000;
const INDEX = 'index';

/** Discord takes a nonce of up to 25 characters: the feed's id and a digest of the change. */
export function feedNonce(feedId: string, first: Pick<ClubChange, 't' | 'kind' | 'subject'>): string {
  const digest = createHash('sha256').update(`${feedId}:${first.t}:${first.kind}:${first.subject}`).digest('base64url');
  return `${feedId}.${digest}`.slice(0, 25);
}

/** The feeds of each server in the durable store; reads go to the store every time (other processes write too). */
export class FeedStore {
  private readonly queue = new KeyedQueue();

  constructor(private readonly kv: Keyv) {}

  async ids(guildId: string): Promise<string[]> {
    return (await this.kv.get<string[]>(`guild:${guildId}`)) ?? [];
  }

  async get(guildId: string, id: string): Promise<Feed | undefined> {
    const parsed = Feed.safeParse(await this.kv.get(`feed:${guildId}:${id}`));
    return parsed.success ? parsed.data : undefined;
  }

  async list(guildId: string): Promise<Feed[]> {
    const out: Feed[] = [];
    for (const id of await this.ids(guildId)) {
      const f = await this.get(guildId, id);
      if (f) out.push(f);
    }
    return out;
  }

  /** Ids of the servers with at least one feed. */
  async guilds(): Promise<string[]> {
    return (await this.kv.get<string[]>(INDEX)) ?? [];
  }

  async add(feed: Feed): Promise<void> {
    await this.kv.set(`feed:${feed.guildId}:${feed.id}`, Feed.parse(feed));
    await this.queue.run(`guild:${feed.guildId}`, async () => {
      const ids = await this.ids(feed.guildId);
      await this.kv.set(`guild:${feed.guildId}`, [...ids, feed.id]);
      if (ids.length === 0) await this.setIndexed(feed.guildId, true);
    });
  }

  async remove(guildId: string, id: string): Promise<Feed | undefined> {
    return this.queue.run(`guild:${guildId}`, async () => {
      const ids = await this.ids(guildId);
      if (!ids.includes(id)) return undefined;
      const feed = await this.get(guildId, id);
      const rest = ids.filter((x) => x !== id);
      if (rest.length) await this.kv.set(`guild:${guildId}`, rest);
      else {
        await this.kv.delete(`guild:${guildId}`);
        await this.setIndexed(guildId, false);
      }
      await this.kv.delete(`feed:${guildId}:${id}`);
      return feed;
    });
  }

  /** Applies `change` to a feed that still exists (a removed feed is not written back). */
  async update(guildId: string, id: string, change: (f: Feed) => void): Promise<Feed | undefined> {
    return this.queue.run(`feed:${guildId}:${id}`, async () => {
      if (!(await this.ids(guildId)).includes(id)) return undefined;
      const f = await this.get(guildId, id);
      if (!f) return undefined;
      change(f);
      await this.kv.set(`feed:${guildId}:${id}`, Feed.parse(f));
      return f;
    });
  }

  private setIndexed(guildId: string, on: boolean): Promise<void> {
    return this.queue.run(INDEX, async () => {
      const ids = new Set(await this.guilds());
      if (on) ids.add(guildId);
      else ids.delete(guildId);
      await this.kv.set(INDEX, [...ids]);
    });
  }
}

export interface FeedDeps {
  store: FeedStore;
  settings: GuildSettingsStore;
  components: ComponentStore;
  now: () => number;
}

/** What a run of the feeds did. */
export interface FeedRunReport {
  /** feeds looked at (owned by this process, not waiting after a failure) */
  feeds: number;
  /** messages posted and changes they showed */
  messages: number;
  changes: number;
  failed: number;
  /** feeds another process was working on */
  busy: number;
}

export class Feeds {
  private poster: ChannelPoster | null = null;
  private ticker: Ticker | undefined;

  constructor(
    private readonly core: Core,
    private readonly deps: FeedDeps,
  ) {}

  /** Set by the transport that holds the bot token; null = cannot post. */
  setPoster(p: ChannelPoster | null): void {
    this.poster = p;
  }

  limit(premium: Premium): number {
    return premium.keyed ? FEED_LIMITS.keyed : FEED_LIMITS.free;
  }

  list(guildId: string): Promise<Feed[]> {
    return this.deps.store.list(guildId);
  }

  // ------------------------------------------------------------------ admin actions

  async create(
    guildId: string,
    req: { channelId: string; club: { tag: string; name: string }; events: Feed['events']; pushTrophies?: number; createdBy: string; locale: string },
    premium: Premium,
  ): Promise<Feed> {
    const poster = this.poster;
    if (!poster) throw new UserError('error.feedNoToken', {}, Colour.error);
    const existing = await this.deps.store.list(guildId);
    if (existing.some((f) => f.club === req.club.tag && f.channelId === req.channelId)) {
      throw new UserError('error.feedExists', { tag: req.club.tag, channel: `<#${req.channelId}>` }, Colour.info);
    }
    const max = this.limit(premium);
    if (existing.length >= max) throw new UserError(premium.keyed ? 'error.feedsFullKeyed' : 'error.feedsFull', { n: max });
    await checkChannel(poster, guildId, req.channelId, { hidden: 'error.boardChannelHidden', missing: 'error.feedPermissions' });
    const now = this.deps.now();
    const feed: Feed = {
      id: randomBytes(4).toString('hex'),
      guildId,
      channelId: req.channelId,
      club: req.club.tag,
      clubName: req.club.name,
      events: [...new Set([...req.events, ...(req.pushTrophies ? (['push'] as const) : [])])],
      ...(req.pushTrophies ? { pushTrophies: req.pushTrophies } : {}),
      createdBy: req.createdBy,
      createdAt: now,
      locale: req.locale,
      // Changes from now on: a new feed does not replay the club's past.
      cursor: { t: sec(now), kind: '~', subject: '' },
      failures: 0,
    };
    await this.deps.store.add(feed);
    // The club is polled for as long as a feed needs it.
    await track(this.core, true, 'club', feed.club, `feed:${guildId}:${feed.id}`);
    return feed;
  }

  async remove(guildId: string, id: string): Promise<Feed | undefined> {
    const removed = await this.deps.store.remove(guildId, id);
    if (removed) await track(this.core, false, 'club', removed.club, `feed:${guildId}:${removed.id}`);
    return removed;
  }

  // ------------------------------------------------------------------ delivery

  /** When a failing feed is tried again: a minute, doubled after each failure, at most a day. */
  dueAt(f: Feed): number {
    if (f.failures === 0) return 0;
    return (f.lastRunAt ?? 0) + Math.min(RETRY_MS * 2 ** Math.min(f.failures - 1, 16), MAX_BACKOFF_MS);
  }

  /** Posts what every feed of this process's servers has not posted yet. */
  async tick(): Promise<FeedRunReport> {
    const report: FeedRunReport = { feeds: 0, messages: 0, changes: 0, failed: 0, busy: 0 };
    const poster = this.poster;
    if (!poster) return report;
    const now = this.deps.now();
    const due: Feed[] = [];
    for (const guildId of await this.deps.store.guilds()) {
      if (poster.owns && !poster.owns(guildId)) continue;
      for (const f of await this.deps.store.list(guildId)) if (this.dueAt(f) <= now) due.push(f);
    }
    report.feeds = due.length;
    for (let i = 0; i < due.length; i += 8) {
      await Promise.all(due.slice(i, i + 8).map((f) => this.deliver(poster, f, report)));
    }
    return report;
  }

  /** One feed under its lease. Never throws: a failure is recorded on the feed. */
  private async deliver(poster: ChannelPoster, seen: Feed, report: FeedRunReport): Promise<void> {
    const lease = await this.core.coordination.tryLock(`feed:${seen.guildId}:${seen.id}`, LEASE_MS);
    if (!lease) {
      report.busy++;
      return;
    }
    const log = this.core.logger.child({ component: 'feeds', guild: seen.guildId, feed: seen.id });
    try {
      // Read again under the lease: another process may have moved the cursor since the list.
      const feed = await this.deps.store.get(seen.guildId, seen.id);
      if (!feed) return;
      if (feed.failures > 0 && !(await this.channelWorks(poster, feed, report))) return;
      let changes: ClubChange[];
      try {
        const push = feed.events.includes('push') && feed.pushTrophies ? { pushTrophies: feed.pushTrophies } : {};
        changes = await this.core.history.clubChanges(feed.club, feed.cursor, CHANGES_PER_RUN, push);
      } catch (e) {
        log.warn({ err: e }, 'feed changes could not be read');
        return;
      }
      if (changes.length === 0) return;
      const wanted = changes.filter((c) => (feed.events as string[]).includes(c.kind));
      const fmt = format(boardLanguage(await this.deps.settings.get(feed.guildId), feed));
      const club = { name: feed.clubName, tag: feed.club };
      for (const msg of feedMessages(wanted, club, fmt)) {
        const rendered = await renderView({ embeds: msg.embeds }, this.deps.components);
        try {
          await poster.post(feed.channelId, rendered, { nonce: feedNonce(feed.id, msg.changes[0]!) });
        } catch (e) {
          const code = apiCode(e);
          let problem: BoardProblem = describePostFailure(code, e, 'post');
          if (code === RESTJSONErrorCodes.MissingPermissions) problem = await missingPermissionsProblem(poster, feed.guildId, feed.channelId, problem);
          log.warn({ code, err: e }, 'feed post failed');
          await this.failed(feed, problem);
          report.failed++;
          return;
        }
        report.messages++;
        report.changes += msg.changes.length;
        await this.advance(feed, msg.changes[msg.changes.length - 1]!, true);
        if (!(await lease.renew(LEASE_MS))) return;
      }
      // Past what was not wanted too, so the next run starts after everything read.
      await this.advance(feed, changes[changes.length - 1]!, false);
    } catch (e) {
      // Marked like a refused post, so the admin sees it in /feed list and it is retried later.
      log.error({ err: e }, 'feed run failed');
      await this.failed(seen, { key: 'board.problem.data' }).catch(() => undefined);
      report.failed++;
    } finally {
      await lease.release();
    }
  }

  /**
   * A feed tried again after a failure: whether the bot may post in its channel now. When it may,
   * the mark goes at once (even with nothing new to post); when not, the failure is recorded again
   * with what is wrong now, and the wait doubles.
   */
  private async channelWorks(poster: ChannelPoster, feed: Feed, report: FeedRunReport): Promise<boolean> {
    const perms = await poster.botPermissions(feed.guildId, feed.channelId).catch(() => null);
    let problem: BoardProblem | null = null;
    if (perms === null) {
      // Deleted or hidden: Discord answers both the same way; the post that failed said which.
      problem = { key: feed.problem === 'board.problem.channelDeleted' ? 'board.problem.channelDeleted' : 'board.problem.channelHidden' };
    } else {
      const missing = missingBoardPermissions(perms);
      if (missing.length) problem = { key: 'board.problem.missing', values: { missing: missing.join(', '), channel: `<#${feed.channelId}>` } };
    }
    if (problem) {
      await this.failed(feed, problem);
      report.failed++;
      return false;
    }
    await this.deps.store.update(feed.guildId, feed.id, (f) => {
      f.failures = 0;
      delete f.problem;
      delete f.problemValues;
    });
    feed.failures = 0;
    return true;
  }

  private async advance(feed: Feed, last: ClubEventPosition, posted: boolean): Promise<void> {
    const now = this.deps.now();
    const to = { t: last.t, kind: last.kind, subject: last.subject };
    if (!posted && to.t === feed.cursor.t && to.kind === feed.cursor.kind && to.subject === feed.cursor.subject) return;
    feed.cursor = to;
    await this.deps.store.update(feed.guildId, feed.id, (f) => {
      f.cursor = to;
      if (!posted) return;
      f.lastPostAt = f.lastRunAt = now;
      f.failures = 0;
      delete f.problem;
      delete f.problemValues;
    });
  }

  private async failed(feed: Feed, problem: BoardProblem): Promise<void> {
    const now = this.deps.now();
    await this.deps.store.update(feed.guildId, feed.id, (f) => {
      f.lastRunAt = now;
      f.failures += 1;
      f.problem = problem.key;
      if (problem.values) f.problemValues = problem.values;
      else delete f.problemValues;
    });
  }

  /** Runs `tick` every `everyMs` (default one minute) until `stop`. */
  start(everyMs = 60_000): void {
    this.ticker ??= new Ticker('feed tick', this.core.logger);
    this.ticker.start(everyMs, () => this.tick());
  }

  async stop(): Promise<void> {
    await this.ticker?.stop();
  }
}
