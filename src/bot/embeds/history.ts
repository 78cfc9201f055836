/**
 * Embeds of recorded history: a player's log and trophy push, a club's log, a brawler's best
 * build, a map's statistics. Pure functions of the HistoryService's bodies (history-schemas.ts).
 */
import type { APIEmbed } from 'discord-api-types/v10';
import type { BestBuild, ClubLog, ClubLogEvent, MapDetail, PlayerLog, PlayerLogEvent, PlayerPush } from '../../core/history-schemas.ts';
import type { Format } from '../format.ts';
import { Colour } from '../view.ts';
import { CREDIT, gameName } from './common.ts';
import { enumName, modeName, titleCase } from './names.ts';

/** Log lines shown at most (the description stays well inside its limit). */
export const LOG_LINES = 20;

const at = (seconds: number, fmt: Format) => fmt.relative(seconds * 1000);

function recordedNote(h: { since: number | null; tracked: boolean; trackedUntil: number | null }, fmt: Format): string {
  if (h.since === null) {
    return 'Nothing recorded yet. Starr Stats records from now on' + (h.trackedUntil ? `, at least until ${fmt.date(h.trackedUntil * 1000)}.` : '.');
  }
  return `Recorded since ${fmt.date(h.since * 1000)}.`;
}

export function playerLogLine(e: PlayerLogEvent, fmt: Format): string {
  const when = at(e.timestamp, fmt);
  switch (e.type) {
    case 'trophies':
      return `🏆 **${fmt.signed(e.change)}** trophies (${fmt.int(e.from)} → ${fmt.int(e.to)}) in ${fmt.count(e.battles, 'battle')} · ${when}`;
    case 'brawlerUnlocked':
      return `🆕 Unlocked **${titleCase(e.brawler.name)}** · ${when}`;
    case 'powerUp':
      return `⚡ **${titleCase(e.brawler.name)}** power ${e.from} → ${e.to} · ${when}`;
    case 'rankUp':
      return `🎖️ **${titleCase(e.brawler.name)}** rank ${e.from} → ${e.to} · ${when}`;
    case 'prestigeUp':
      return `✨ **${titleCase(e.brawler.name)}** prestige ${e.from} → ${e.to} · ${when}`;
    case 'clubJoined':
      return `🛡️ Joined **${gameName(e.club.name)}** ${e.club.tag} · ${when}`;
    case 'clubLeft':
      return `🚪 Left **${gameName(e.club.name)}** ${e.club.tag} · ${when}`;
    case 'nameChanged':
      return `✏️ Renamed **${gameName(e.from)}** → **${gameName(e.to)}** · ${when}`;
  }
}

function show(v: unknown): string {
  return v === null || v === undefined || v === '' ? '—' : typeof v === 'string' ? gameName(v) : String(v);
}

export function clubLogLine(e: ClubLogEvent, fmt: Format): string {
  const when = at(e.timestamp, fmt);
  const who = e.player ? `**${gameName(e.player.name)}** ${e.player.tag}` : '';
  switch (e.type) {
    case 'join':
      return `🟢 ${who} joined · ${when}`;
    case 'leave':
      return `🔴 ${who} left · ${when}`;
    case 'role':
      return `🎖️ ${who}: ${enumName(show(e.from))} → ${enumName(show(e.to))} · ${when}`;
    case 'settings':
      return `⚙️ ${enumName(e.field ?? 'setting')}: ${show(e.from)} → ${show(e.to)} · ${when}`;
  }
}

export function logEmbedOf(kind: 'player' | 'club', log: PlayerLog | ClubLog, name: string, fmt: Format): APIEmbed {
  const lines =
    kind === 'player'
      ? (log as PlayerLog).items.slice(0, LOG_LINES).map((e) => playerLogLine(e, fmt))
      : (log as ClubLog).items.slice(0, LOG_LINES).map((e) => clubLogLine(e, fmt));
  return {
    title: `${gameName(name)} ${log.tag} · log`,
    color: Colour.premium,
    description: [recordedNote(log, fmt), '', lines.length ? lines.join('\n') : '_No changes recorded yet._'].join('\n'),
    footer: { text: CREDIT },
  };
}

export function pushEmbedOf(push: PlayerPush, name: string, fmt: Format): APIEmbed {
  const gain = (g: PlayerPush['gains']['day']) => (g ? `**${fmt.signed(g.change)}**\n${fmt.int(g.from)} → ${fmt.int(g.to)}` : '—');
  const fields: NonNullable<APIEmbed['fields']> = [
    { name: 'Last 24 hours', value: gain(push.gains.day), inline: true },
    { name: 'Last 7 days', value: gain(push.gains.week), inline: true },
    { name: 'Last 30 days', value: gain(push.gains.month), inline: true },
    { name: 'Best day', value: push.bestDay ? `${push.bestDay.date}: **${fmt.signed(push.bestDay.change)}**` : '—', inline: true },
    { name: 'Win streak', value: fmt.int(push.winStreak), inline: true },
  ];
  if (push.brawlers.length) {
    fields.push({
      name: 'Brawlers pushed this week',
      value: push.brawlers
        .slice(0, 8)
        .map((b) => `**${titleCase(b.name)}** ${fmt.signed(b.change)} (${fmt.int(b.trophies)})`)
        .join('\n'),
    });
  }
  return {
    title: `${gameName(name)} ${push.tag} · trophy push`,
    color: Colour.premium,
    description: `${push.trophies === null ? '' : `🏆 ${fmt.int(push.trophies)} now. `}${recordedNote(push, fmt)}`,
    fields,
    footer: { text: CREDIT },
  };
}

export function bestBuildEmbedOf(b: BestBuild, fmt: Format): APIEmbed {
  const shares = (list: BestBuild['gadgets']) =>
    list.length ? list.map((s) => `**${titleCase(s.name)}** ${fmt.pct(s.share, 0)}`).join('\n') : '—';
  const builds = b.builds.slice(0, 5).map((x, i) => {
    const parts = [...x.gadgets, ...x.starPowers, ...x.hyperCharges].map((p) => titleCase(p.name)).join(' + ') || '(nothing unlocked)';
    const rate = x.winRate === null ? 'no recorded battles' : `${fmt.pct(x.winRate)} over ${fmt.count(x.battles, 'battle')}`;
    return `\`${i + 1}.\` ${parts} · ${fmt.count(x.players, 'player')} · ${rate}`;
  });
  return {
    title: `${titleCase(b.brawler.name)} · best build`,
    color: Colour.premium,
    description:
      `From the ${fmt.count(b.sampleSize, 'best player')} of this brawler that Starr Stats recorded` +
      (b.minTrophies === null ? '.' : ` (${fmt.int(b.minTrophies)}+ trophies on it).`),
    fields: [
      { name: '🔧 Gadgets', value: shares(b.gadgets), inline: true },
      { name: '⭐ Star powers', value: shares(b.starPowers), inline: true },
      { name: '💥 Hypercharges', value: shares(b.hyperCharges), inline: true },
      { name: '⚙️ Gears', value: shares(b.gears.slice(0, 6)), inline: true },
      { name: 'Combinations', value: builds.length ? builds.join('\n') : '—' },
    ],
    footer: { text: CREDIT },
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
      const win = s.winRate === null ? 'no decided battles' : `win ${fmt.pct(s.winRate)}`;
      const adjusted = s.smallSample && s.adjustedWinRate !== null ? ` (adjusted ${fmt.pct(s.adjustedWinRate)})` : '';
      return `\`${String(i + 1).padStart(2, ' ')}.\` **${titleCase(s.brawler.name)}** · ${win}${adjusted} · use ${fmt.pct(s.useRate)} · ${fmt.count(s.picks, 'pick')}`;
    });
  return {
    title: `${m.name ?? `Map ${m.id}`}${m.mode ? ` · ${modeName(m.mode)}` : ''}`,
    color: Colour.brand,
    description:
      `Best brawlers by ${sort === 'use' ? 'use rate' : 'win rate (adjusted for small samples)'}, from ${fmt.count(m.battles, 'recorded battle')}. ` +
      `Last played ${fmt.relative(m.lastActive * 1000)}.\n\n` +
      (rows.length ? rows.join('\n') : '_No battles recorded on this map yet._'),
    footer: { text: `${CREDIT} · fewer than ${m.minSample} battles: read the adjusted rate` },
  };
}
