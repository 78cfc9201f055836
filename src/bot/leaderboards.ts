/**
 * Channel leaderboards: a message in a channel, edited in place on a schedule, ranking a club's
 * members or the members of a server who linked an account.
 *
 * - Boards live in the guild settings (keyv), so they survive restarts; the scheduler picks up
 *   whatever is due from `lastRunAt`.
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
import { boardView, type BoardData, type BoardRow } from './embeds/leaderboard.ts';
import { UserError, staleNote } from './errors.ts';
import { format, type Format } from './format.ts';
import { track } from './history-views.ts';
import type { LinkStore } from './links.ts';
import { missingBoardPermissions } from './permissions.ts';
import { renderView, type RenderedMessage } from './render.ts';
import type { Core } from '../core/index.ts';
import type { Board, BoardSource, GuildSettings, GuildSettingsStore, Premium } from './settings.ts';
import { Colour, type ReplyView } from './view.ts';

/** The Discord side of boards: channel messages with the bot token. */
export interface ChannelPoster {
  /** the bot's permissions in the channel; null when the channel does not exist or is not visible */
  botPermissions(guildId: string, channelId: string): Promise<bigint | null>;
  post(channelId: string, msg: RenderedMessage): Promise<string>;
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
/** Most linked members read for one server board. */
const MAX_MEMBER_ROWS = 100;

function apiCode(e: unknown): number | undefined {
  const c = (e as { code?: unknown })?.code;
  return typeof c === 'number' ? c : undefined;
}

export interface LeaderboardDeps {
  settings: GuildSettingsStore;
  links: LinkStore;
  components: ComponentStore;
  now: () => number;
}

export class Leaderboards {
  private poster: ChannelPoster | null = null;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<unknown> | undefined;

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

  private async data(guildId: string, source: BoardSource): Promise<{ data: BoardData; fmtNote?: (f: Format) => string | undefined }> {
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
    const { data, fmtNote } = await this.data(guildId, board.source);
    return boardView(data, board, fmt, this.deps.now(), fmtNote?.(fmt));
  }

  // ------------------------------------------------------------------ admin actions

  async create(
    guildId: string,
    req: { channelId: string; source: BoardSource; intervalMinutes: number; createdBy: string; locale: string },
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
    await this.checkChannel(poster, guildId, req.channelId);

    const board: Board = {
      id: randomBytes(4).toString('hex'),
      channelId: req.channelId,
      source: req.source,
      intervalMinutes: req.intervalMinutes,
      createdBy: req.createdBy,
      createdAt: this.deps.now(),
      locale: req.locale,
      failures: 0,
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

  private async checkChannel(poster: ChannelPoster, guildId: string, channelId: string): Promise<void> {
    const perms = await poster.botPermissions(guildId, channelId);
    if (perms === null) {
      throw new UserError('error.boardChannelHidden', {}, Colour.warn);
    }
    const missing = missingBoardPermissions(perms);
    if (missing.length) {
      throw new UserError('error.boardPermissions', { missing: missing.map((m) => `**${m}**`).join(', '), channel: `<#${channelId}>` }, Colour.warn);
    }
  }

  async remove(guildId: string, boardId: string): Promise<Board | undefined> {
    let removed: Board | undefined;
    await this.deps.settings.update(guildId, (s) => {
      removed = s.boards.find((b) => b.id === boardId);
      s.boards = s.boards.filter((b) => b.id !== boardId);
    });
    if (!removed) return undefined;
    if (removed.messageId && this.poster) {
      await this.poster.delete(removed.channelId, removed.messageId).catch(() => undefined);
    }
    if (removed.source.kind === 'club') await track(this.core, false, 'club', removed.source.tag, `board:${guildId}:${removed.id}`);
    return removed;
  }

  /** The refresh button: the new view for the message it sits on (the router edits it in). */
  async refreshByButton(guildId: string, boardId: string): Promise<ReplyView> {
    const settings = await this.deps.settings.get(guildId);
    const board = settings.boards.find((b) => b.id === boardId);
    if (!board) throw new UserError('error.boardGone', {}, Colour.info);
    const now = this.deps.now();
    if (board.lastOkAt !== undefined && now - board.lastOkAt < MANUAL_REFRESH_MS) {
      throw new UserError('error.boardJustRefreshed', { when: format(boardLanguage(settings, board)).relative(board.lastOkAt) }, Colour.info);
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
      const settings = await this.deps.settings.get(guildId);
      for (const board of settings.boards) if (this.dueAt(board) <= now) due.push({ guildId, board });
    }
    let refreshed = 0;
    let failed = 0;
    for (let i = 0; i < due.length; i += 4) {
      const results = await Promise.all(due.slice(i, i + 4).map(({ guildId, board }) => this.refresh(poster, guildId, board)));
      for (const ok of results) ok ? refreshed++ : failed++;
    }
    return { refreshed, failed };
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
      if (code === RESTJSONErrorCodes.MissingPermissions) {
        const perms = await poster.botPermissions(guildId, board.channelId).catch(() => null);
        const missing = perms === null ? [] : missingBoardPermissions(perms);
        if (missing.length) problem = { key: 'board.problem.missing', values: { missing: missing.join(', '), channel: `<#${board.channelId}>` } };
      }
      log.warn({ code, err: e }, 'leaderboard update failed');
      await this.record(guildId, board.id, { ok: false, problem });
      return false;
    }
  }

  private describe(code: number | undefined, e: unknown, what: 'post' | 'edit'): BoardProblem {
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
    if (this.timer) return;
    this.timer = setInterval(() => {
      if (this.running) return;
      this.running = this.tick()
        .catch((e) => this.core.logger.error({ err: e }, 'leaderboard tick failed'))
        .finally(() => {
          this.running = undefined;
        });
    }, everyMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    await this.running;
  }

  /** Settings of a server's boards for `/leaderboard list`. */
  async list(guildId: string): Promise<GuildSettings['boards']> {
    return (await this.deps.settings.get(guildId)).boards;
  }
}
