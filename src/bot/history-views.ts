/**
 * Views built on recorded history (logs, trophy pushes, best builds, predicted events, map
 * statistics), from the HistoryService's bodies through the pure builders of embeds/history.ts.
 */
import type { APIEmbed } from 'discord-api-types/v10';
import { NotFoundError } from '../upstream/errors.ts';
import { parseApiTime, type Brawler, type Player } from '../upstream/schemas.ts';
import type { Choice, CommandContext } from './command.ts';
import type { Core } from '../core/index.ts';
import { UserError } from './errors.ts';
import type { UpcomingEvent } from './embeds/events.ts';
import { LOG_LINES, bestBuildEmbedOf, logEmbedOf, mapEmbedOf, pushEmbedOf } from './embeds/history.ts';
import { modeName } from './embeds/names.ts';
import { matchChoices } from './lookup.ts';
import { Colour, type ReplyView } from './view.ts';

/**
 * Keeps a linked player or a board's club polled (pin) or lets it go (unpin). Tracking is a side
 * effect: a failure is logged, never turned into a failed command.
 */
export async function track(core: Core, on: boolean, kind: 'player' | 'club', tag: string, reason: string): Promise<void> {
  try {
    await (on ? core.history.pin(kind, tag, reason) : core.history.unpin(kind, tag, reason));
  } catch (e) {
    core.logger.warn({ err: e, kind, tag, reason }, on ? 'could not pin' : 'could not unpin');
  }
}

export async function logEmbed(ctx: CommandContext, kind: 'player' | 'club', tag: string, name: string): Promise<APIEmbed> {
  const h = ctx.core.history;
  const log = kind === 'player' ? await h.playerLog(tag, LOG_LINES) : await h.clubLog(tag, LOG_LINES);
  return logEmbedOf(kind, log.data, name, ctx.fmt);
}

export async function pushEmbed(ctx: CommandContext, p: Player): Promise<APIEmbed> {
  const push = await ctx.core.history.playerPush(p.tag);
  return pushEmbedOf(push.data, p.name, ctx.fmt);
}

export async function bestBuildEmbed(ctx: CommandContext, b: Brawler): Promise<APIEmbed> {
  const build = await ctx.core.history.bestBuild(b.id);
  return bestBuildEmbedOf(build.data, ctx.fmt);
}

/** Predicted next events, or undefined when the prediction failed. */
export async function upcomingEvents(ctx: CommandContext): Promise<UpcomingEvent[] | undefined> {
  try {
    const events = (await ctx.core.history.events()).data;
    return events.upcoming.map((e) => ({ mode: e.event.mode, map: e.event.map, startsAt: parseApiTime(e.startTime) }));
  } catch (e) {
    ctx.core.logger.warn({ err: e }, 'event predictions failed');
    return undefined;
  }
}

interface KnownMap {
  id: number;
  name: string;
  mode?: string;
}

/** Maps by name: every map history saw. */
async function knownMaps(ctx: CommandContext): Promise<KnownMap[]> {
  return (await ctx.core.history.maps()).data.items.flatMap((m) => (m.name ? [{ id: m.id, name: m.name, ...(m.mode ? { mode: m.mode } : {}) }] : []));
}

/** Map choices for autocomplete (value: the map id as text). */
export async function mapChoices(ctx: CommandContext, typed: string): Promise<Choice[]> {
  const maps = (await knownMaps(ctx)).sort((a, b) => a.name.localeCompare(b.name));
  return matchChoices(
    maps.map((m) => ({ name: `${m.name} (${modeName(m.mode, ctx.fmt)})`, value: String(m.id) })),
    typed,
  );
}

export async function mapView(ctx: CommandContext, name: string, sort: 'win' | 'use'): Promise<ReplyView> {
  const h = ctx.core.history;
  const q = name.trim();
  const maps = await knownMaps(ctx);
  const found = /^\d+$/.test(q) ? maps.find((m) => m.id === Number(q)) : maps.find((m) => m.name.toLowerCase() === q.toLowerCase());
  if (!found) throw new UserError('error.unknownMap', { name: q.slice(0, 60) }, Colour.info);
  let detail;
  try {
    detail = (await h.map(found.id)).data;
  } catch (e) {
    if (e instanceof NotFoundError) throw new UserError('error.mapNotRecorded', { name: found.name }, Colour.info);
    throw e;
  }
  return {
    embeds: [mapEmbedOf(detail, sort, ctx.fmt)],
    rows: [
      (['win', 'use'] as const).map((s) => ({
        type: 'button' as const,
        label: ctx.fmt.t(s === 'win' ? 'map.sortWin' : 'map.sortUse'),
        disabled: s === sort,
        action: { command: 'map', args: { name: String(found.id), sort: s } },
      })),
    ],
  };
}
