/**
 * Player embeds: profile, brawlers, battle log, ranks. Pure functions of the official bodies.
 */
import type { APIEmbed } from 'discord-api-types/v10';
import { parseApiTime, playerClub, type BattleLog, type BattleLogItem, type Player, type PlayerBrawler } from '../../upstream/schemas.ts';
import type { Format } from '../format.ts';
import { Colour } from '../view.ts';
import { clampPage, dataFooter, gameName, nameColour, pageCount } from './common.ts';
import { modeName, titleCase } from './names.ts';

export const BRAWLERS_PER_PAGE = 10;
export const BATTLES_PER_PAGE = 10;

function title(p: Pick<Player, 'name' | 'tag'>): string {
  return `${gameName(p.name)} ${p.tag}`;
}

export interface ProfileOptions {
  /** brawlers in the game's catalogue, for "owned / total" */
  brawlerTotal?: number;
  /** attachment name of the profile card, shown as the embed image */
  image?: string;
  fetchedAt?: number;
}

export function profileEmbed(p: Player, fmt: Format, o: ProfileOptions = {}): APIEmbed {
  const club = playerClub(p);
  const maxed = p.brawlers.filter((b) => b.power >= 11).length;
  const fields: NonNullable<APIEmbed['fields']> = [
    { name: `🏆 ${fmt.t('player.trophies')}`, value: `${fmt.int(p.trophies)}\n${fmt.t('player.highest', { n: fmt.int(p.highestTrophies) })}`, inline: true },
    { name: `⭐ ${fmt.t('player.level')}`, value: fmt.int(p.expLevel), inline: true },
    {
      name: `🧩 ${fmt.t('player.brawlers')}`,
      value: `${fmt.int(p.brawlers.length)}${o.brawlerTotal ? ` / ${fmt.int(o.brawlerTotal)}` : ''}\n${fmt.t('player.maxed', { n: fmt.int(maxed) })}`,
      inline: true,
    },
    { name: `⚔️ ${fmt.t('player.wins3v3')}`, value: fmt.int(p['3vs3Victories']), inline: true },
    { name: `👤 ${fmt.t('player.winsSolo')}`, value: fmt.int(p.soloVictories), inline: true },
    { name: `👥 ${fmt.t('player.winsDuo')}`, value: fmt.int(p.duoVictories), inline: true },
  ];
  if (p.totalPrestigeLevel !== undefined) fields.push({ name: `🎖️ ${fmt.t('player.prestige')}`, value: fmt.int(p.totalPrestigeLevel), inline: true });
  const best = [...p.brawlers].sort((a, b) => b.trophies - a.trophies).slice(0, 3);
  if (best.length) {
    fields.push({
      name: `🔥 ${fmt.t('player.bestBrawlers')}`,
      value: best.map((b) => `**${titleCase(b.name)}** ${fmt.int(b.trophies)}`).join('\n'),
      inline: true,
    });
  }
  return {
    title: title(p),
    color: nameColour(p.nameColor) ?? Colour.brand,
    description: `🛡️ ${club ? fmt.t('player.club', { club: gameName(club.name), tag: club.tag }) : fmt.t('player.noClub')}`,
    fields,
    ...(o.image ? { image: { url: `attachment://${o.image}` } } : {}),
    ...dataFooter(fmt, o.fetchedAt),
  };
}

export type BrawlerSort = 'trophies' | 'power' | 'rank' | 'name';

export function sortBrawlers(list: PlayerBrawler[], sort: BrawlerSort): PlayerBrawler[] {
  const by: Record<BrawlerSort, (a: PlayerBrawler, b: PlayerBrawler) => number> = {
    trophies: (a, b) => b.trophies - a.trophies || a.id - b.id,
    power: (a, b) => b.power - a.power || b.trophies - a.trophies,
    rank: (a, b) => b.rank - a.rank || b.trophies - a.trophies,
    name: (a, b) => titleCase(a.name).localeCompare(titleCase(b.name)),
  };
  return [...list].sort(by[sort]);
}

export function brawlerLine(b: PlayerBrawler, fmt: Format): string {
  const extras = [
    b.gadgets.length ? `🔧${b.gadgets.length}` : '',
    b.starPowers.length ? `⭐${b.starPowers.length}` : '',
    b.gears.length ? `⚙️${b.gears.length}` : '',
    b.hyperCharges?.length ? `💥${b.hyperCharges.length}` : '',
  ]
    .filter(Boolean)
    .join(' ');
  return `**${titleCase(b.name)}** · 🏆 ${fmt.t('brawlerLine.trophies', { n: fmt.int(b.trophies), max: fmt.int(b.highestTrophies) })} · ⚡${b.power} · ${fmt.t('brawlerLine.rank', { rank: b.rank })}${extras ? ` · ${extras}` : ''}`;
}

export function brawlersEmbed(
  p: Player,
  fmt: Format,
  o: { page?: number; sort?: BrawlerSort; image?: string; fetchedAt?: number } = {},
): { embed: APIEmbed; page: number; pages: number } {
  const sorted = sortBrawlers(p.brawlers, o.sort ?? 'trophies');
  const pages = pageCount(sorted.length, BRAWLERS_PER_PAGE);
  const page = clampPage(o.page, pages);
  const slice = sorted.slice((page - 1) * BRAWLERS_PER_PAGE, page * BRAWLERS_PER_PAGE);
  const first = (page - 1) * BRAWLERS_PER_PAGE;
  return {
    page,
    pages,
    embed: {
      title: `${title(p)} · ${fmt.t('view.player.brawlers')}`,
      color: nameColour(p.nameColor) ?? Colour.brand,
      description: slice.length
        ? slice.map((b, i) => `\`${String(first + i + 1).padStart(2, ' ')}\` ${brawlerLine(b, fmt)}`).join('\n')
        : `_${fmt.t('player.noBrawlers')}_`,
      fields: [
        { name: fmt.t('player.owned'), value: fmt.int(p.brawlers.length), inline: true },
        { name: fmt.t('player.sortedBy'), value: fmt.t(`sort.${o.sort ?? 'trophies'}`), inline: true },
      ],
      ...(o.image ? { image: { url: `attachment://${o.image}` } } : {}),
      ...dataFooter(fmt, o.fetchedAt),
    },
  };
}

/** The player's own entry in a battle (3v3, showdown teams, solo lists, duels). */
function me(item: BattleLogItem, tag: string) {
  const b = item.battle;
  if (!b) return undefined;
  const all = [...(b.teams ?? []).flat(), ...(b.players ?? [])];
  return all.find((x) => x.tag === tag);
}

export interface BattleSummary {
  battles: number;
  victories: number;
  defeats: number;
  draws: number;
  trophyChange: number;
}

export function summariseBattles(log: BattleLog, tag: string): BattleSummary {
  const s: BattleSummary = { battles: 0, victories: 0, defeats: 0, draws: 0, trophyChange: 0 };
  for (const item of log.items) {
    const b = item.battle;
    if (!b) continue;
    s.battles++;
    const won = b.result === 'victory' || (b.rank !== undefined && b.rank <= (b.mode === 'duoShowdown' ? 2 : 4));
    const lost = b.result === 'defeat' || (b.rank !== undefined && !won);
    if (won) s.victories++;
    else if (lost) s.defeats++;
    else if (b.result === 'draw') s.draws++;
    const mine = me(item, tag);
    const change = b.trophyChange ?? mine?.brawlers?.reduce((t, x) => t + (x.trophyChange ?? 0), 0) ?? 0;
    s.trophyChange += change;
  }
  return s;
}

export function battleLine(item: BattleLogItem, tag: string, fmt: Format): string {
  const b = item.battle!;
  const mode = modeName(item.event.mode ?? b.mode, fmt);
  const map = item.event.map ? ` — ${item.event.map}` : '';
  let outcome: string;
  if (b.rank !== undefined) outcome = `🏅 **#${b.rank}**`;
  else if (b.result === 'victory') outcome = `🟢 **${fmt.t('battle.victory')}**`;
  else if (b.result === 'defeat') outcome = `🔴 **${fmt.t('battle.defeat')}**`;
  else if (b.result === 'draw') outcome = `⚪ **${fmt.t('battle.draw')}**`;
  else outcome = `▫️ **${fmt.t('battle.played')}**`;
  const mine = me(item, tag);
  const brawler = mine?.brawler ? titleCase(mine.brawler.name) : mine?.brawlers?.map((x) => titleCase(x.name)).join('/');
  const change = b.trophyChange ?? mine?.brawlers?.reduce((t, x) => t + (x.trophyChange ?? 0), 0);
  const when = parseApiTime(item.battleTime);
  const parts = [
    `${outcome} · ${mode}${map}`,
    change !== undefined && change !== 0 ? `${fmt.signed(change)} 🏆` : undefined,
    brawler,
    b.starPlayer && b.starPlayer.tag === tag ? `⭐ ${fmt.t('battle.starPlayer')}` : undefined,
    Number.isFinite(when) ? fmt.relative(when) : undefined,
  ];
  return parts.filter(Boolean).join(' · ');
}

export function battleLogEmbed(
  p: Pick<Player, 'name' | 'tag' | 'nameColor'>,
  log: BattleLog,
  fmt: Format,
  o: { page?: number; fetchedAt?: number } = {},
): { embed: APIEmbed; page: number; pages: number } {
  const items = log.items.filter((i) => i.battle);
  const pages = pageCount(items.length, BATTLES_PER_PAGE);
  const page = clampPage(o.page, pages);
  const slice = items.slice((page - 1) * BATTLES_PER_PAGE, page * BATTLES_PER_PAGE);
  const s = summariseBattles(log, p.tag);
  const decided = s.victories + s.defeats;
  return {
    page,
    pages,
    embed: {
      title: `${title(p)} · ${fmt.t('view.player.battlelog')}`,
      color: nameColour(p.nameColor) ?? Colour.brand,
      description: slice.length ? slice.map((i) => battleLine(i, p.tag, fmt)).join('\n') : `_${fmt.t('battle.none')}_`,
      fields: [
        { name: fmt.t('battle.battles'), value: fmt.int(s.battles), inline: true },
        { name: fmt.t('battle.winRate'), value: decided ? fmt.pct(s.victories / decided) : '—', inline: true },
        { name: fmt.t('player.trophies'), value: fmt.signed(s.trophyChange), inline: true },
      ],
      ...dataFooter(fmt, o.fetchedAt),
    },
  };
}

export function ranksEmbed(p: Player, fmt: Format, o: { image?: string; fetchedAt?: number } = {}): APIEmbed {
  const byRank = new Map<number, number>();
  for (const b of p.brawlers) byRank.set(b.rank, (byRank.get(b.rank) ?? 0) + 1);
  const top = [...byRank.entries()].sort((a, b) => b[0] - a[0]).slice(0, 12);
  return {
    title: `${title(p)} · ${fmt.t('view.player.ranks')}`,
    color: nameColour(p.nameColor) ?? Colour.brand,
    description: top.length ? top.map(([rank, n]) => fmt.t('ranks.line', { rank, n })).join('\n') : `_${fmt.t('player.noBrawlers')}_`,
    ...(o.image ? { image: { url: `attachment://${o.image}` } } : {}),
    ...dataFooter(fmt, o.fetchedAt),
  };
}

/** An embed around one image (a chart or a card). */
export function imageEmbed(
  p: Pick<Player, 'name' | 'tag' | 'nameColor'>,
  fmt: Format,
  o: { heading: string; image: string; note?: string; fetchedAt?: number },
): APIEmbed {
  return {
    title: `${title(p)} · ${o.heading}`,
    color: nameColour(p.nameColor) ?? Colour.brand,
    ...(o.note ? { description: o.note } : {}),
    image: { url: `attachment://${o.image}` },
    ...dataFooter(fmt, o.fetchedAt),
  };
}
