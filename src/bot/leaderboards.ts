/**
 * Channel leaderboards: a message in a channel, edited in place on a schedule, ranking a club's
 * members or the members of a server who linked an account.
 *
 * - Boards live in the guild settings (keyv), so they survive restarts; the scheduler picks up
 *   whatever is due from `lastRunAt`. Each time a board is due, one process refreshes it: the due
 *   time is claimed on core.coordination (Redis in a cluster), so two bot processes — or a button
 *   pressed on both at once — edit it once.
 * - One board failing (deleted channel, missing permission, a club that no longer exists) never
 *   stops the others: each refresh is isolated, the problem is recorded in words for
 *   `/leaderboard list`, and the board waits longer after each failure instead of hammering
 *   Discord (repeated 403s count toward Cloudflare's invalid-request ban).
 * - A deleted board message is posted again; the board keeps its place.
 * - At creation the bot checks its own permissions in the channel and tells the admin exactly
 *   which are missing.
 */
import { randomBytes } from 'node:crypto';
import { RESTJSONErrorCodes } from 'discord-api-types/v10';
import { NotFoundError, isUpstreamError } from '../upstream/errors.ts';
import type { ComponentStore } from './components.ts';
import { CLUB_SIZE } from './embeds/club.ts';
import { boardView, metricRows, resultsView, WIN_RATE_MIN_BATTLES, type BoardData, type BoardRow, type Period } from './embeds/leaderboard.ts';
import type { PlayerGain } from '../core/club-activity.ts';
import { seasonWindow, weekWindow } from '../render/measures.ts';
import { UserError, staleNote } from './errors.ts';
import { format, type Format } from './format.ts';
import { track } from './history-views.ts';
import type { LinkStore } from './links.ts';
import { missingBoardPermissions } from './permissions.ts';
import { renderView, type RenderedMessage } from './render.ts';
import type { Core } from '../core/index.ts';
import { WEEKLY_METRICS, type Board, type BoardMetric, type BoardSource, type GuildSettings, type GuildSettingsStore, type Premium } from './settings.ts';
import { Colour, type ReplyView } from './view.ts';
import { Ticker } from './ticker.ts';

/** The Discord side of boards: channel messages with the bot token. */
export interface ChannelPoster {
  /** the bot's permissions in the channel; null when the channel does not exist or is not visible */
  botPermissions(guildId: string, channelId: string): Promise<bigint | null>;
  /**
   * Posts a message; with `nonce`, Discord enforces it (enforce_nonce): the same nonce from the bot
   * within a few minutes returns the message already posted instead of a second one.
   */
  post(channelId: string, msg: RenderedMessage, opts?: { nonce?: string }): Promise<string>;
  edit(channelId: string, messageId: string, msg: RenderedMessage): Promise<void>;
  delete(channelId: string, messageId: string): Promise<void>;
  /** whether this process refreshes boards of that server (a shard holds it); default all */
  owns?(guildId: string): boolean;
}

/** What went wrong with a board: a catalogue message, shown in the reader's language by /leaderboard list. */
export interface BoardProblem {
  key: string;
  values?: Record<string, string>;
}

/** A board's problem in words; problems saved before they were catalogue keys are shown as saved. */
export function problemText(b: Pick<Board, 'problem' | 'problemValues'>, fmt: Format): string | undefined {
  if (!b.problem) return undefined;
  return b.problem.startsWith('board.problem.') ? fmt.t(b.problem, b.problemValues) : b.problem;
}

/** The language of a server's public posts: its /settings language, else the board's (the server's Discord locale when it was made). */
export function boardLanguage(settings: Pick<GuildSettings, 'language'>, board: Pick<Board, 'locale'>): string {
  return settings.language ?? board.locale;
}

/** Board counts and pace per plan: a server key raises both. */
export const BOARD_LIMITS = {
  free: { boards: 2, minInterval: 30 },
  keyed: { boards: 10, minInterval: 10 },
} as const;
export const DEFAULT_INTERVAL_MINUTES = 30;
/** The refresh button works at most this often per board. */
export const MANUAL_REFRESH_MS = 60_000;
/** Longest wait between attempts at a failing board. */
const MAX_BACKOFF_MS = 24 * 3600_000;
/** A weekly board's results are claimed for this long: a process that failed to post leaves them to the next try. */
const RESULTS_CLAIM_MS = 15 * 60_000;
/** Most linked members read for one server board. */
const MAX_MEMBER_ROWS = 100;

/** The period a metric counts over at `nowMs`: this ISO week or this season, up to now. */
export function periodOf(metric: BoardMetric, nowMs: number): Period {
  if (metric === 'seasonGain') return { start: seasonWindow(nowMs).start, end: nowMs };
  const w = weekWindow(nowMs);
  return { start: w.start, end: nowMs, id: w.id };
}

export function apiCode(e: unknown): number | undefined {
  const c = (e as { code?: unknown })?.code;
  return typeof c === 'number' ? c : undefined;
}

/**
 * Before a channel post is set up (a board, a feed): the bot must see the channel and hold what
 * posting needs there, or the admin is told exactly what is missing (`keys`: their error messages).
 */
export async function checkChannel(poster: ChannelPoster, guildId: string, channelId: string, keys: { hidden: string; missing: string }): Promise<void> {
  const perms = await poster.botPermissions(guildId, channelId);
  if (perms === null) {
    throw new UserError(keys.hidden, {}, Colour.warn);
  }
  const missing = missingBoardPermissions(perms);
  if (missing.length) {
    throw new UserError(keys.missing, { missing: missing.map((m) => `**${m}**`).join(', '), channel: `<#${channelId}>` }, Colour.warn);
  }
}

/** Why Discord refused a channel post or edit, as a problem the admin reads in their list. */
export function describePostFailure(code: number | undefined, e: unknown, what: 'post' | 'edit'): BoardProblem {
  switch (code) {
    case RESTJSONErrorCodes.UnknownChannel:
      return { key: 'board.problem.channelDeleted' };
    case RESTJSONErrorCodes.MissingAccess:
      return { key: 'board.problem.channelHidden' };
    case RESTJSONErrorCodes.MissingPermissions:
      return { key: 'board.problem.permissions' };
    default:
      return { key: 'board.problem.refused', values: { what, error: (e as Error)?.message ?? String(e) } };
  }
}

/** A problem with the exact permissions the bot lacks in the channel, when it can tell them. */
export async function missingPermissionsProblem(poster: ChannelPoster, guildId: string, channelId: string, fallback: BoardProblem): Promise<BoardProblem> {
  const perms = await poster.botPermissions(guildId, channelId).catch(() => null);
  const missing = perms === null ? [] : missingBoardPermissions(perms);
  return missing.length ? { key: 'board.problem.missing', values: { missing: missing.join(', '), channel: `<#${channelId}>` } } : fallback;
}

export interface LeaderboardDeps {
  settings: GuildSettingsStore;
  links: LinkStore;
  components: ComponentStore;
  now: () => number;
}

export class Leaderboards {
  private poster: ChannelPoster | null = null;
  private ticker: Ticker | undefined;
  /** board → the week whose results this process knows are posted (saves a claim per tick) */
  private readonly posted = new Map<string, string>();

  constructor(
    private readonly core: Core,
    private readonly deps: LeaderboardDeps,
  ) {}

  /** Set by the transport that holds the bot token (gateway or REST); null = cannot post. */
  setPoster(p: ChannelPoster | null): void {
    this.poster = p;
  }

  get canPost(): boolean {
    return this.poster !== null;
  }

  limits(premium: Premium) {
    return premium.keyed ? BOARD_LIMITS.keyed : BOARD_LIMITS.free;
  }

  // ------------------------------------------------------------------ data → view

  /**
   * A board's rows: trophies now from the game's API, or a metric over a period from recorded
   * history (the core's club activity for a club, the members' own recordings for a server's
   * members). Members with nothing recorded over the period are left out and counted, not shown as 0.
   */
  private async data(guildId: string, board: Pick<Board, 'source' | 'metric'>, period?: Period): Promise<{ data: BoardData; fmtNote?: (f: Format) => string | undefined }> {
    const base = await this.trophyData(guildId, board.source);
    if (board.metric === 'trophies') return base;
    const window = period ?? periodOf(board.metric, this.deps.now());
    let gains: PlayerGain[];
    if (board.source.kind === 'club') {
      const activity = (await this.core.history.clubActivity(board.source.tag, { sinceMs: window.start, untilMs: window.end })).data;
      gains = activity.members.map((m) => ({ tag: m.tag, name: m.name, trophies: m.trophies, gained: m.gained, battles: m.battles, wins: m.wins }));
    } else {
      gains = await this.core.history.playerGains(base.data.rows.map((r) => r.tag), window.start, window.end);
    }
    const users = new Map(base.data.rows.map((r) => [r.tag, r.userId]));
    const ranked = metricRows(board.metric, gains, users);
    const since = window.start;
    return {
      data: {
        ...base.data,
        rows: ranked.rows,
        metric: board.metric,
        period: (f) => f.t('board.period', { metric: f.t(`board.metric.${board.metric}`), since: f.date(since) }),
        notes: (f) => [
          ...(ranked.unrecorded ? [f.t('board.unrecorded', { n: ranked.unrecorded })] : []),
          ...(ranked.tooFew ? [f.t('board.tooFewBattles', { n: ranked.tooFew, min: WIN_RATE_MIN_BATTLES })] : []),
        ],
      },
      ...(base.fmtNote ? { fmtNote: base.fmtNote } : {}),
    };
  }

  private async trophyData(guildId: string, source: BoardSource): Promise<{ data: BoardData; fmtNote?: (f: Format) => string | undefined }> {
    if (source.kind === 'club') {
      const club = await this.core.stats.club(source.tag);
      const rows: BoardRow[] = club.data.members.map((m) => ({ name: m.name, tag: m.tag, trophies: m.trophies }));
      return {
        data: {
          title: club.data.name,
          subtitle: (f) => f.t('board.clubSubtitle', { tag: club.data.tag, n: rows.length, max: CLUB_SIZE }),
          rows,
          skipped: 0,
        },
        fmtNote: (f) => staleNote(club, f),
      };
    }
    const settings = await this.deps.settings.get(guildId);
    const members = settings.members.slice(0, MAX_MEMBER_ROWS);
    const rows: BoardRow[] = [];
    let skipped = 0;
    // A few lookups at a time: the core coalesces and caches, and the poller shares the budget.
    for (let i = 0; i < members.length; i += 8) {
      const batch = members.slice(i, i + 8);
      const found = await Promise.all(
        batch.map(async (userId) => {
          const tag = await this.deps.links.defaultTag(userId);
          if (!tag) return null;
          // An account someone else verified is theirs; with verification required, only verified ones count.
          if (!(await this.deps.links.counts(userId, tag, settings.verification === 'required'))) return null;
          try {
            const p = await this.core.stats.player(tag);
            return { name: p.data.name, tag: p.data.tag, trophies: p.data.trophies, userId };
          } catch (e) {
            if (e instanceof NotFoundError) {
              skipped++;
              return null;
            }
            throw e;
          }
        }),
      );
      for (const r of found) if (r) rows.push(r);
    }
    return { data: { title: (f) => f.t('board.membersTitle'), subtitle: (f) => f.t('board.membersSubtitle'), rows, skipped } };
  }

  /** The board's message as it should look now. */
  async view(guildId: string, board: Board): Promise<ReplyView> {
    const fmt = format(boardLanguage(await this.deps.settings.get(guildId), board));
    const { data, fmtNote } = await this.data(guildId, board);
    return boardView(data, board, fmt, this.deps.now(), fmtNote?.(fmt));
  }

  // ------------------------------------------------------------------ admin actions

  async create(
    guildId: string,
    req: { channelId: string; source: BoardSource; metric?: BoardMetric; intervalMinutes: number; createdBy: string; locale: string },
    premium: Premium,
  ): Promise<Board> {
    const poster = this.poster;
    if (!poster) {
      throw new UserError('error.boardNoToken', {}, Colour.error);
    }
    const limits = this.limits(premium);
    const settings = await this.deps.settings.get(guildId);
    if (settings.boards.length >= limits.boards) {
      throw new UserError(premium.keyed ? 'error.boardsFullKeyed' : 'error.boardsFull', { n: limits.boards });
    }
    if (req.intervalMinutes < limits.minInterval) {
      throw new UserError(premium.keyed ? 'error.boardTooOftenKeyed' : 'error.boardTooOften', {
        n: limits.minInterval,
        keyed: BOARD_LIMITS.keyed.minInterval,
      });
    }
    await checkChannel(poster, guildId, req.channelId, { hidden: 'error.boardChannelHidden', missing: 'error.boardPermissions' });

    const board: Board = {
      id: randomBytes(4).toString('hex'),
      channelId: req.channelId,
      source: req.source,
      intervalMinutes: req.intervalMinutes,
      createdBy: req.createdBy,
      createdAt: this.deps.now(),
      locale: req.locale,
      failures: 0,
      metric: req.metric ?? 'trophies',
    };
    const msg = await this.render(await this.view(guildId, board));
    try {
      board.messageId = await poster.post(req.channelId, msg);
    } catch (e) {
      const why = this.describe(apiCode(e), e, 'post');
      throw new UserError('error.boardPost', { why: format(req.locale).t(why.key, why.values) }, Colour.error);
    }
    board.lastRunAt = board.lastOkAt = this.deps.now();
    await this.deps.settings.update(guildId, (s) => {
      s.boards.push(board);
    });
    if (board.source.kind === 'club') await track(this.core, true, 'club', board.source.tag, `board:${guildId}:${board.id}`);
    return board;
  }


  async remove(guildId: string, boardId: string): Promise<Board | undefined> {
    let removed: Board | undefined;
    await this.deps.settings.update(guildId, (s) => {
      removed = s.boards.find((b) => b.id === boardId);
      s.boards = s.boards.filter((b) => b.id !== boardId);
    });
    if (!removed) return undefined;
    await this.deps.settings.forgetBoard(guildId, boardId);
    if (removed.messageId && this.poster) {
      await this.poster.delete(removed.channelId, removed.messageId).catch(() => undefined);
    }
    if (removed.source.kind === 'club') await track(this.core, false, 'club', removed.source.tag, `board:${guildId}:${removed.id}`);
    return removed;
  }

  /** The refresh button: the new view for the message it sits on (the router edits it in). */
  async refreshByButton(guildId: string, boardId: string): Promise<ReplyView> {
    const settings = await this.deps.settings.get(guildId, { fresh: true });
    const board = settings.boards.find((b) => b.id === boardId);
    if (!board) throw new UserError('error.boardGone', {}, Colour.info);
    const now = this.deps.now();
    if (board.lastOkAt !== undefined && now - board.lastOkAt < MANUAL_REFRESH_MS) {
      throw new UserError('error.boardJustRefreshed', { when: format(boardLanguage(settings, board)).relative(board.lastOkAt) }, Colour.info);
    }
    // Two presses on two processes at once: one refresh, the other is told it just happened.
    if (!(await this.core.coordination.claim(`board:${guildId}:${board.id}:manual:${board.lastOkAt ?? 0}`, MANUAL_REFRESH_MS))) {
      throw new UserError('error.boardJustRefreshed', { when: format(boardLanguage(settings, board)).relative(now) }, Colour.info);
    }
    const view = await this.view(guildId, board);
    await this.record(guildId, board.id, { ok: true });
    return view;
  }

  private render(view: ReplyView): Promise<RenderedMessage> {
    return renderView(view, this.deps.components);
  }

  // ------------------------------------------------------------------ schedule

  /** When a board is next due: its interval, doubled after each failure. */
  dueAt(b: Board): number {
    const base = b.intervalMinutes * 60_000;
    const wait = Math.min(base * 2 ** Math.min(b.failures, 10), MAX_BACKOFF_MS);
    return (b.lastRunAt ?? 0) + wait;
  }

  /** Refreshes every due board of every server; one server's failure never stops the others. */
  async tick(): Promise<{ refreshed: number; failed: number }> {
    const poster = this.poster;
    if (!poster) return { refreshed: 0, failed: 0 };
    const now = this.deps.now();
    const due: { guildId: string; board: Board }[] = [];
    for (const guildId of await this.deps.settings.guildsWithBoards()) {
      if (poster.owns && !poster.owns(guildId)) continue;
      const settings = await this.deps.settings.get(guildId, { fresh: true });
      for (const board of settings.boards) {
        const dueAt = this.dueAt(board);
        // Every bot process reads the same schedule: the one that claims this due time refreshes.
        if (dueAt <= now && (await this.core.coordination.claim(`board:${guildId}:${board.id}:${dueAt}`, board.intervalMinutes * 60_000))) {
          due.push({ guildId, board });
        }
      }
    }
    let refreshed = 0;
    let failed = 0;
    for (let i = 0; i < due.length; i += 4) {
      const results = await Promise.all(due.slice(i, i + 4).map(({ guildId, board }) => this.refresh(poster, guildId, board)));
      for (const ok of results) ok ? refreshed++ : failed++;
    }
    await this.weekResults(poster, now);
    return { refreshed, failed };
  }

  /**
   * Posts each weekly board's results once its week has closed: exactly once across the processes
   * that deliver (a claim on the board and the week) and across restarts (the week posted is
   * recorded in the durable store under a key of its own, read after the claim). A post that fails
   * is tried again once the claim runs out.
   */
  private async weekResults(poster: ChannelPoster, now: number): Promise<void> {
    const thisWeek = weekWindow(now);
    const closed = weekWindow(thisWeek.start - 1);
    for (const guildId of await this.deps.settings.guildsWithBoards()) {
      if (poster.owns && !poster.owns(guildId)) continue;
      for (const board of (await this.deps.settings.get(guildId)).boards) {
        if (!WEEKLY_METRICS.includes(board.metric) || board.createdAt >= thisWeek.start || this.posted.get(`${guildId}:${board.id}`) === closed.id) continue;
        if (!(await this.core.coordination.claim(`board-week:${guildId}:${board.id}:${closed.id}`, RESULTS_CLAIM_MS))) continue;
        const log = this.core.logger.child({ component: 'leaderboards', guild: guildId, board: board.id, week: closed.id });
        try {
          if ((await this.deps.settings.lastWeekPosted(guildId, board.id)) !== closed.id) {
            const fmt = format(boardLanguage(await this.deps.settings.get(guildId), board));
            const { data } = await this.data(guildId, board, closed);
            await poster.post(board.channelId, await this.render(resultsView(data, closed, fmt)));
            await this.deps.settings.markWeekPosted(guildId, board.id, closed.id);
            log.info('posted the week’s results');
          }
          this.posted.set(`${guildId}:${board.id}`, closed.id);
        } catch (e) {
          log.warn({ err: e }, 'week results failed; tried again when the claim runs out');
        }
      }
    }
  }

  /** Edits one board in place. Never throws: failures are recorded on the board. */
  private async refresh(poster: ChannelPoster, guildId: string, board: Board): Promise<boolean> {
    const log = this.core.logger.child({ component: 'leaderboards', guild: guildId, board: board.id });
    let view: ReplyView;
    try {
      view = await this.view(guildId, board);
    } catch (e) {
      const problem: BoardProblem =
        e instanceof NotFoundError && board.source.kind === 'club'
          ? { key: 'board.problem.clubGone', values: { tag: board.source.tag } }
          : { key: isUpstreamError(e) ? 'board.problem.upstream' : 'board.problem.data' };
      log.warn({ err: e }, 'leaderboard data failed');
      await this.record(guildId, board.id, { ok: false, problem });
      return false;
    }
    try {
      const msg = await this.render(view);
      if (board.messageId) {
        try {
          await poster.edit(board.channelId, board.messageId, msg);
        } catch (e) {
          if (apiCode(e) !== RESTJSONErrorCodes.UnknownMessage) throw e;
          // Someone deleted the board's message: post it again.
          const id = await poster.post(board.channelId, msg);
          await this.record(guildId, board.id, { ok: true, messageId: id });
          return true;
        }
      } else {
        const id = await poster.post(board.channelId, msg);
        await this.record(guildId, board.id, { ok: true, messageId: id });
        return true;
      }
      await this.record(guildId, board.id, { ok: true });
      return true;
    } catch (e) {
      const code = apiCode(e);
      let problem = this.describe(code, e, 'edit');
      if (code === RESTJSONErrorCodes.MissingPermissions) problem = await missingPermissionsProblem(poster, guildId, board.channelId, problem);
      log.warn({ code, err: e }, 'leaderboard update failed');
      await this.record(guildId, board.id, { ok: false, problem });
      return false;
    }
  }

  private describe(code: number | undefined, e: unknown, what: 'post' | 'edit'): BoardProblem {
    return describePostFailure(code, e, what);
  }

  private async record(guildId: string, boardId: string, r: { ok: boolean; problem?: BoardProblem; messageId?: string }): Promise<void> {
    const now = this.deps.now();
    await this.deps.settings.update(guildId, (s) => {
      const b = s.boards.find((x) => x.id === boardId);
      if (!b) return;
      b.lastRunAt = now;
      if (r.messageId) b.messageId = r.messageId;
      if (r.ok) {
        b.lastOkAt = now;
        b.failures = 0;
        delete b.problem;
        delete b.problemValues;
      } else {
        b.failures += 1;
        b.problem = r.problem?.key;
        if (r.problem?.values) b.problemValues = r.problem.values;
        else delete b.problemValues;
      }
    });
  }

  /** Runs `tick` every `everyMs` (default one minute) until `stop`. */
  start(everyMs = 60_000): void {
    this.ticker ??= new Ticker('leaderboard tick', this.core.logger);
    this.ticker.start(everyMs, () => this.tick());
  }

  async stop(): Promise<void> {
    await this.ticker?.stop();
  }

  /** Settings of a server's boards for `/leaderboard list`. */
  async list(guildId: string): Promise<GuildSettings['boards']> {
    return (await this.deps.settings.get(guildId)).boards;
  }
}
