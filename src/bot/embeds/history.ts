/**
 * Embeds of recorded history: a player's log and trophy push, a club's log, a brawler's best
 * build, a map's statistics. Pure functions of the HistoryService's bodies (history-schemas.ts).
 */
import type { APIEmbed } from 'discord-api-types/v10';
import type { BestBuild, ClubLog, ClubLogEvent, MapDetail, PlayerLog, PlayerLogEvent, PlayerPush } from '../../core/history-schemas.ts';
import type { Format } from '../format.ts';
import { Colour } from '../view.ts';
import { clubRole, clubType } from './club.ts';
import { credit, gameName } from './common.ts';
import { enumName, modeName, titleCase } from './names.ts';

/** Club settings the game names; others read as the API names them. */
const CLUB_FIELDS = ['type', 'requiredTrophies', 'description', 'badgeId', 'name'];

/** Log lines shown at most (the description stays well inside its limit). */
export const LOG_LINES = 20;

const at = (seconds: number, fmt: Format) => fmt.relative(seconds * 1000);

function recordedNote(h: { since: number | null; tracked: boolean; trackedUntil: number | null }, fmt: Format): string {
  if (h.since === null) {
    return h.trackedUntil ? fmt.t('history.nothingYetUntil', { until: fmt.date(h.trackedUntil * 1000) }) : fmt.t('history.nothingYet');
  }
  return fmt.t('history.since', { since: fmt.date(h.since * 1000) });
}

export function playerLogLine(e: PlayerLogEvent, fmt: Format): string {
  const when = at(e.timestamp, fmt);
  switch (e.type) {
    case 'trophies':
      return `🏆 ${fmt.t('log.trophies', { change: fmt.signed(e.change), from: fmt.int(e.from), to: fmt.int(e.to), battles: e.battles })} · ${when}`;
    case 'brawlerUnlocked':
      return `🆕 ${fmt.t('log.unlocked', { brawler: titleCase(e.brawler.name) })} · ${when}`;
    case 'powerUp':
      return `⚡ ${fmt.t('log.power', { brawler: titleCase(e.brawler.name), from: e.from, to: e.to })} · ${when}`;
    case 'rankUp':
      return `🎖️ ${fmt.t('log.rank', { brawler: titleCase(e.brawler.name), from: e.from, to: e.to })} · ${when}`;
    case 'prestigeUp':
      return `✨ ${fmt.t('log.prestige', { brawler: titleCase(e.brawler.name), from: e.from, to: e.to })} · ${when}`;
    case 'clubJoined':
      return `🛡️ ${fmt.t('log.clubJoined', { club: gameName(e.club.name), tag: e.club.tag })} · ${when}`;
    case 'clubLeft':
      return `🚪 ${fmt.t('log.clubLeft', { club: gameName(e.club.name), tag: e.club.tag })} · ${when}`;
    case 'nameChanged':
      return `✏️ ${fmt.t('log.renamed', { from: gameName(e.from), to: gameName(e.to) })} · ${when}`;
  }
}

function show(v: unknown): string {
  return v === null || v === undefined || v === '' ? '—' : typeof v === 'string' ? gameName(v) : String(v);
}

/** "Required trophies: 1000 → 2000", the setting in the game's words of the reader's language. */
export function clubSettingChange(field: string, from: unknown, to: unknown, fmt: Format): string {
  const name = CLUB_FIELDS.includes(field) ? fmt.t(`club.field.${field}`) : enumName(field);
  const value = (v: unknown) => (field === 'type' && typeof v === 'string' ? clubType(v, fmt) : show(v));
  return `${name}: ${value(from)} → ${value(to)}`;
}

export function clubLogLine(e: ClubLogEvent, fmt: Format): string {
  const when = at(e.timestamp, fmt);
  const who = e.player ? `**${gameName(e.player.name)}** ${e.player.tag}` : '';
  switch (e.type) {
    case 'join':
      return `🟢 ${fmt.t('log.memberJoined', { who })} · ${when}`;
    case 'leave':
      return `🔴 ${fmt.t('log.memberLeft', { who })} · ${when}`;
    case 'role': {
      const role = (v: unknown) => (typeof v === 'string' && v ? clubRole(v, fmt) : show(v));
      return `🎖️ ${who}: ${role(e.from)} → ${role(e.to)} · ${when}`;
    }
    case 'settings':
      return `⚙️ ${clubSettingChange(e.field ?? 'setting', e.from, e.to, fmt)} · ${when}`;
  }
}

export function logEmbedOf(kind: 'player' | 'club', log: PlayerLog | ClubLog, name: string, fmt: Format): APIEmbed {
  const lines =
    kind === 'player'
      ? (log as PlayerLog).items.slice(0, LOG_LINES).map((e) => playerLogLine(e, fmt))
      : (log as ClubLog).items.slice(0, LOG_LINES).map((e) => clubLogLine(e, fmt));
  return {
    title: `${gameName(name)} ${log.tag} · ${fmt.t('history.log')}`,
    color: Colour.premium,
    description: [recordedNote(log, fmt), '', lines.length ? lines.join('\n') : `_${fmt.t('history.noChanges')}_`].join('\n'),
    footer: { text: credit(fmt) },
  };
}

export function pushEmbedOf(push: PlayerPush, name: string, fmt: Format): APIEmbed {
  const gain = (g: PlayerPush['gains']['day']) => (g ? `**${fmt.signed(g.change)}**\n${fmt.int(g.from)} → ${fmt.int(g.to)}` : '—');
  const fields: NonNullable<APIEmbed['fields']> = [
    { name: fmt.t('push.day'), value: gain(push.gains.day), inline: true },
    { name: fmt.t('push.week'), value: gain(push.gains.week), inline: true },
    { name: fmt.t('push.month'), value: gain(push.gains.month), inline: true },
    { name: fmt.t('push.bestDay'), value: push.bestDay ? `${push.bestDay.date}: **${fmt.signed(push.bestDay.change)}**` : '—', inline: true },
    { name: fmt.t('push.winStreak'), value: fmt.int(push.winStreak), inline: true },
  ];
  if (push.brawlers.length) {
    fields.push({
      name: fmt.t('push.brawlers'),
      value: push.brawlers
        .slice(0, 8)
        .map((b) => `**${titleCase(b.name)}** ${fmt.signed(b.change)} (${fmt.int(b.trophies)})`)
        .join('\n'),
    });
  }
  return {
    title: `${gameName(name)} ${push.tag} · ${fmt.t('push.title')}`,
    color: Colour.premium,
    description: `${push.trophies === null ? '' : `🏆 ${fmt.t('push.now', { n: fmt.int(push.trophies) })} `}${recordedNote(push, fmt)}`,
    fields,
    footer: { text: credit(fmt) },
  };
}

export function bestBuildEmbedOf(b: BestBuild, fmt: Format): APIEmbed {
  const shares = (list: BestBuild['gadgets']) =>
    list.length ? list.map((s) => `**${titleCase(s.name)}** ${fmt.pct(s.share, 0)}`).join('\n') : '—';
  const builds = b.builds.slice(0, 5).map((x, i) => {
    const parts = [...x.gadgets, ...x.starPowers, ...x.hyperCharges].map((p) => titleCase(p.name)).join(' + ') || fmt.t('build.nothing');
    const rate = x.winRate === null ? fmt.t('build.noBattles') : fmt.t('build.rate', { rate: fmt.pct(x.winRate), n: x.battles });
    return `\`${i + 1}.\` ${parts} · ${fmt.t('build.players', { n: x.players })} · ${rate}`;
  });
  return {
    title: `${titleCase(b.brawler.name)} · ${fmt.t('build.title')}`,
    color: Colour.premium,
    description:
      b.minTrophies === null
        ? fmt.t('build.from', { n: b.sampleSize })
        : fmt.t('build.fromMin', { n: b.sampleSize, min: fmt.int(b.minTrophies) }),
    fields: [
      { name: `🔧 ${fmt.t('brawler.gadgets')}`, value: shares(b.gadgets), inline: true },
      { name: `⭐ ${fmt.t('brawler.starPowers')}`, value: shares(b.starPowers), inline: true },
      { name: `💥 ${fmt.t('brawler.hypercharges')}`, value: shares(b.hyperCharges), inline: true },
      { name: `⚙️ ${fmt.t('brawler.gears')}`, value: shares(b.gears.slice(0, 6)), inline: true },
      { name: fmt.t('build.combinations'), value: builds.length ? builds.join('\n') : '—' },
    ],
    footer: { text: credit(fmt) },
  };
}

/** Brawlers shown on a map page. */
export const MAP_ROWS = 12;

export function mapEmbedOf(m: MapDetail, sort: 'win' | 'use', fmt: Format): APIEmbed {
  const rows = [...m.stats]
    .filter((s) => s.picks > 0)
    .sort((a, b) => (sort === 'use' ? b.useRate - a.useRate : (b.adjustedWinRate ?? -1) - (a.adjustedWinRate ?? -1)))
    .slice(0, MAP_ROWS)
    .map((s, i) => {
      const win = s.winRate === null ? fmt.t('map.noDecided') : fmt.t('map.win', { rate: fmt.pct(s.winRate) });
      const adjusted = s.smallSample && s.adjustedWinRate !== null ? ` ${fmt.t('map.adjusted', { rate: fmt.pct(s.adjustedWinRate) })}` : '';
      return `\`${String(i + 1).padStart(2, ' ')}.\` **${titleCase(s.brawler.name)}** · ${win}${adjusted} · ${fmt.t('map.use', { rate: fmt.pct(s.useRate) })} · ${fmt.t('map.picks', { n: s.picks })}`;
    });
  return {
    title: `${m.name ?? fmt.t('map.fallbackName', { id: m.id })}${m.mode ? ` · ${modeName(m.mode, fmt)}` : ''}`,
    color: Colour.brand,
    description:
      `${fmt.t(sort === 'use' ? 'map.byUse' : 'map.byWin', { n: m.battles })} ${fmt.t('map.lastPlayed', { when: fmt.relative(m.lastActive * 1000) })}\n\n` +
      (rows.length ? rows.join('\n') : `_${fmt.t('map.none')}_`),
    footer: { text: `${credit(fmt)} · ${fmt.t('map.footer', { n: m.minSample })}` },
  };
}
