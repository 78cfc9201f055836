/**
 * Embed builders are pure functions from the official bodies to APIEmbed. The fixtures are the
 * simulated world's answers (deterministic in seed and time, in the official shapes) plus
 * hand-made edge cases.
 */
import { describe, expect, it } from 'vitest';
import Keyv from 'keyv';
import { World } from '../src/sim/world.ts';
import { BattleLog, Brawler, Club, EventRotation, Player, PlayerRankingItem, type BattleLogItem } from '../src/upstream/schemas.ts';
import { format } from '../src/bot/format.ts';
import { battleLine, battleLogEmbed, brawlersEmbed, profileEmbed, summariseBattles } from '../src/bot/embeds/player.ts';
import { clubEmbed, membersEmbed } from '../src/bot/embeds/club.ts';
import { rankingEmbed } from '../src/bot/embeds/ranking.ts';
import { brawlerEmbed } from '../src/bot/embeds/brawler.ts';
import { eventsEmbeds } from '../src/bot/embeds/events.ts';
import { boardView } from '../src/bot/embeds/leaderboard.ts';
import { escapeMarkdown, gameName, pager } from '../src/bot/embeds/common.ts';
import { enumName, modeName, titleCase } from '../src/bot/embeds/names.ts';
import { renderView } from '../src/bot/render.ts';
import { ComponentStore } from '../src/bot/components.ts';
import { checkMessage, describeProblems } from '../src/bot/limits.ts';
import { resolveMarkup } from '../src/bot/text.ts';
import type { ReplyView } from '../src/bot/view.ts';
import { bestBuildEmbedOf, logEmbedOf, mapEmbedOf, pushEmbedOf } from '../src/bot/embeds/history.ts';
import type { BestBuild, ClubLog, MapDetail, PlayerLog, PlayerPush } from '../src/core/history-schemas.ts';

const world = new World({ seed: 'embeds', players: 300, clubs: 30 });
const T = Date.UTC(2026, 5, 1, 12);
const en = format('en-US');
const de = format('de');

const player = Player.parse(world.player(world.playerTag(7), T));
const log = BattleLog.parse(world.battlelog(player.tag, T));
const club = Club.parse(world.club(world.clubTag(2), T));

/** Every view must render into a message Discord accepts. */
async function accepted(view: ReplyView): Promise<void> {
  const msg = await renderView(view, new ComponentStore(new Keyv()));
  expect(describeProblems(checkMessage(msg.body, { files: msg.files.map((f) => ({ name: f.name, size: f.data.length })) }))).toBe('');
}

describe('names', () => {
  it('writes API identifiers for people', () => {
    expect(titleCase('EL PRIMO')).toBe('El Primo');
    expect(titleCase('8-BIT')).toBe('8-Bit');
    expect(titleCase('COLONEL\nRUFFS')).toBe('Colonel Ruffs');
    expect(modeName('brawlBall', en)).toBe('Brawl Ball');
    expect(modeName('wipeout5V5', en)).toBe('Wipeout 5v5');
    expect(modeName('unknown', en)).toBe('Special event');
    expect(enumName('vicePresident')).toBe('Vice president');
  });

  it('drops game colour markup and escapes Discord markdown in names', () => {
    expect(gameName('<c8>TOXIC</c> Ninjas')).toBe('TOXIC Ninjas');
    expect(gameName('**bold** _x_ [TOP]')).toBe('\\*\\*bold\\*\\* \\_x\\_ \\[TOP\\]');
    expect(gameName('   ')).toBe('\\(no name\\)');
    expect(escapeMarkdown('a|b`c')).toBe('a\\|b\\`c');
  });
});

describe('player embeds', () => {
  it("shows the profile in the reader's language, with its numbers, and the card", () => {
    const e = profileEmbed(player, de, { brawlerTotal: 108, image: 'player.png', fetchedAt: T });
    expect(e.title).toBe(`${gameName(player.name)} ${player.tag}`);
    const trophies = e.fields!.find((f) => f.name.includes('Trophäen'))!.value;
    expect(trophies).toContain(new Intl.NumberFormat('de').format(player.trophies));
    expect(trophies).toContain('Rekord');
    expect(e.fields!.find((f) => f.name.includes('Brawler'))!.value).toContain(`${player.brawlers.length} / 108`);
    expect(e.image).toEqual({ url: 'attachment://player.png' });
    expect(e.timestamp).toBe(new Date(T).toISOString());
    expect(e.description).toContain(player.club && 'tag' in player.club ? String(player.club.tag) : 'In keinem Club');
    expect(e.footer!.text).toBe('Starr Stats · nicht mit Supercell verbunden');
  });

  it('says when the player has no club', () => {
    const lone = Player.parse({ ...player, club: {} });
    expect(profileEmbed(lone, en).description).toBe('🛡️ Not in a club');
  });

  it('pages brawlers ten at a time, sorted, clamping the page', () => {
    const pages = Math.ceil(player.brawlers.length / 10);
    const first = brawlersEmbed(player, en, { page: 1 });
    expect(first.pages).toBe(pages);
    const lines = first.embed.description!.split('\n');
    expect(lines).toHaveLength(Math.min(10, player.brawlers.length));
    const top = [...player.brawlers].sort((a, b) => b.trophies - a.trophies)[0]!;
    expect(lines[0]).toContain(`**${titleCase(top.name)}**`);
    expect(brawlersEmbed(player, en, { page: 999 }).page).toBe(pages);
    expect(brawlersEmbed(player, en, { page: -3 }).page).toBe(1);
    const byPower = brawlersEmbed(player, en, { sort: 'power' }).embed.description!;
    const maxPower = Math.max(...player.brawlers.map((b) => b.power));
    expect(byPower.split('\n')[0]).toContain(`⚡${maxPower}`);
  });

  it('summarises the battle log and writes each battle on one line', () => {
    const s = summariseBattles(log, player.tag);
    expect(s.battles).toBe(log.items.filter((i) => i.battle).length);
    expect(s.victories + s.defeats + s.draws).toBeLessThanOrEqual(s.battles);
    const { embed, pages } = battleLogEmbed(player, log, en, { page: 1 });
    expect(pages).toBe(Math.ceil(s.battles / 10));
    expect(embed.description!.split('\n')).toHaveLength(Math.min(10, s.battles));
    expect(embed.fields!.find((f) => f.name === 'Trophies')!.value).toBe(en.signed(s.trophyChange));
  });

  it('handles showdown ranks, duels and items without a battle', () => {
    const showdown: BattleLogItem = {
      battleTime: '20260601T100000.000Z',
      event: { id: 1, mode: 'soloShowdown', map: 'Skull Creek' },
      battle: { mode: 'soloShowdown', type: 'ranked', rank: 2, trophyChange: 8, players: [{ tag: '#ME', name: 'me', brawler: { id: 1, name: 'SHELLY' } }] },
    };
    const duel: BattleLogItem = {
      battleTime: '20260601T100000.000Z',
      event: { id: 2, mode: 'duels', map: 'Duel Map' },
      battle: {
        mode: 'duels',
        result: 'victory',
        players: [{ tag: '#ME', name: 'me', brawlers: [{ id: 1, name: 'GENE', trophyChange: 5 }, { id: 2, name: 'MAX', trophyChange: 3 }] }],
      },
    };
    expect(battleLine(showdown, '#ME', en)).toMatch(/^🏅 \*\*#2\*\* · Solo Showdown — Skull Creek · \+8 🏆 · Shelly · <t:\d+:R>$/);
    expect(battleLine(duel, '#ME', en)).toContain('+8 🏆 · Gene/Max');
    const s = summariseBattles({ items: [showdown, duel, { battleTime: '20260601T100000.000Z', event: { id: 3 } }], paging: { cursors: {} } }, '#ME');
    expect(s).toEqual({ battles: 2, victories: 2, defeats: 0, draws: 0, trophyChange: 16 });
  });
});

describe('club, ranking, brawler, events and board embeds', () => {
  it('shows the club and pages its members by trophies', () => {
    const e = clubEmbed(club, en, { image: 'club.png' });
    expect(e.fields!.find((f) => f.name.includes('Members'))!.value).toBe(`${club.members.length} / 30`);
    expect(e.image).toEqual({ url: 'attachment://club.png' });
    const { embed, pages } = membersEmbed(club, en, { page: 1 });
    expect(pages).toBe(Math.max(1, Math.ceil(club.members.length / 10)));
    const best = [...club.members].sort((a, b) => b.trophies - a.trophies)[0]!;
    expect(embed.description!.split('\n')[0]).toContain(best.tag);
  });

  it('writes rankings twenty per page with ranks aligned', () => {
    const items = world.playerRankings('global', T)!.map((x) => PlayerRankingItem.parse(x));
    const { embed, pages } = rankingEmbed('players', { region: 'global', timestamp: T / 1000, items }, en, { regionName: 'Global', page: 2 });
    expect(pages).toBe(Math.ceil(items.length / 20));
    expect(embed.title).toBe('Top players · Global');
    expect(embed.description!.split('\n')[0]).toContain(`${items[20]!.rank}.`);
  });

  it('lists a brawler catalogue entry and its top players', () => {
    const b = Brawler.parse(world.brawler(16000000));
    const top = world.brawlerRankings('global', 16000000, T)!.map((x) => PlayerRankingItem.parse(x));
    const e = brawlerEmbed(b, en, top);
    expect(e.title).toBe('Shelly');
    expect(e.fields!.find((f) => f.name.includes('Gadgets'))!.value.split('\n')).toHaveLength(b.gadgets.length);
    expect(e.fields!.find((f) => f.name.includes('Top players'))!.value.split('\n')).toHaveLength(Math.min(10, top.length));
  });

  it('lists running events with the time left as Discord timestamps, soonest end first', () => {
    const rotation = EventRotation.parse(world.eventRotation(T));
    const [active, upcoming] = eventsEmbeds(rotation, en, T, [{ mode: 'brawlBall', map: 'Pinhole Punt', startsAt: T + 3600_000 }]);
    const lines = active!.description!.split('\n');
    expect(lines.length).toBe(rotation.length);
    const ends = lines.map((l) => Number(/ends <t:(\d+):R>/.exec(l)![1]));
    expect(ends).toEqual([...ends].sort((a, b) => a - b));
    expect(upcoming!.description).toBe(`**Brawl Ball** — Pinhole Punt · starts <t:${(T + 3600_000) / 1000}:R>`);
    expect(eventsEmbeds(rotation, en, T + 30 * 86_400_000)[0]!.description).toBe('_No event is running right now._');
  });

  it('ranks a board and carries its refresh button', () => {
    const v = boardView(
      { title: 'Night Owls', subtitle: 'Club #X', rows: [{ name: 'b', tag: '#B', trophies: 5 }, { name: 'a', tag: '#A', trophies: 9, userId: '123' }], skipped: 1 },
      { id: 'ab12', intervalMinutes: 30 },
      en,
      T,
    );
    const d = v.embeds![0]!.description!;
    expect(d.indexOf('**a**')).toBeLessThan(d.indexOf('**b**'));
    expect(d).toContain('<@123>');
    expect(d).toContain('1 linked account could not be loaded');
    expect(v.rows![0]![0]).toMatchObject({ type: 'button', action: { command: 'leaderboard', args: { sub: 'refresh', board: 'ab12' } } });
  });

  it('gives pagers distinct custom ids even where actions repeat', async () => {
    const msg = await renderView({ content: 'x', rows: [pager('club', { tag: '#X' }, 1, 3, en)] }, new ComponentStore(new Keyv()));
    const ids = msg.body.components[0]!.components.map((c) => ('custom_id' in c ? c.custom_id : ''));
    expect(new Set(ids).size).toBe(3);
  });

  it('renders every built view into a message Discord accepts', async () => {
    await accepted({ embeds: [profileEmbed(player, en)] });
    await accepted({ embeds: [brawlersEmbed(player, en).embed] });
    await accepted({ embeds: [battleLogEmbed(player, log, en).embed] });
    await accepted({ embeds: [clubEmbed(club, en), membersEmbed(club, en).embed] });
    await accepted({ embeds: eventsEmbeds(EventRotation.parse(world.eventRotation(T)), en, T) });
  });
});

describe('terminal text of Discord markup', () => {
  it('writes timestamps in the given locale', () => {
    expect(resolveMarkup(`ends <t:${(T + 7200_000) / 1000}:R>`, 'en-US', T)).toBe('ends in 2 hours');
    expect(resolveMarkup(`<t:${(T - 300_000) / 1000}:R>`, 'de', T)).toBe('vor 5 Minuten');
    expect(resolveMarkup('<@123> in <#456>', 'en-US', T)).toBe('@123 in #456');
  });
});

describe('history embeds', () => {
  const T0 = T / 1000;
  const tracking = { tracked: true, trackedUntil: T0 + 14 * 86_400, since: T0 - 7 * 86_400 };

  it('writes a player log one line per change', () => {
    const log: PlayerLog = {
      tag: '#ME',
      ...tracking,
      items: [
        { type: 'trophies', timestamp: T0 - 60, start: T0 - 3600, from: 1000, to: 1045, change: 45, battles: 7 },
        { type: 'powerUp', timestamp: T0 - 120, brawler: { id: 1, name: 'EL PRIMO' }, from: 9, to: 10 },
        { type: 'clubJoined', timestamp: T0 - 180, club: { tag: '#CLUB', name: '<c5>Owls</c>' } },
        { type: 'nameChanged', timestamp: T0 - 240, from: 'old', to: 'new_name' },
      ],
    };
    const e = logEmbedOf('player', log, 'Me', en);
    const lines = e.description!.split('\n');
    expect(lines[0]).toBe(`Recorded since <t:${T0 - 7 * 86_400}:D>.`);
    expect(lines.slice(2)).toEqual([
      `🏆 **+45** trophies (1,000 → 1,045) in 7 battles · <t:${T0 - 60}:R>`,
      `⚡ **El Primo** power level 9 → 10 · <t:${T0 - 120}:R>`,
      `🛡️ Joined **Owls** #CLUB · <t:${T0 - 180}:R>`,
      `✏️ Renamed **old** → **new\\_name** · <t:${T0 - 240}:R>`,
    ]);
    const empty = logEmbedOf('player', { ...log, since: null, items: [] }, 'Me', en);
    expect(empty.description).toBe(`Nothing recorded yet. Starr Stats records from now on, at least until <t:${T0 + 14 * 86_400}:D>.\n\n_No changes recorded yet._`);
  });

  it('writes a club log with joins, leaves, roles and settings', () => {
    const log: ClubLog = {
      tag: '#C',
      ...tracking,
      items: [
        { timestamp: T0, type: 'join', player: { tag: '#A', name: 'Ann' }, from: null, to: null },
        { timestamp: T0, type: 'role', player: { tag: '#A', name: 'Ann' }, from: 'member', to: 'vicePresident' },
        { timestamp: T0, type: 'settings', field: 'requiredTrophies', from: 1000, to: 2000 },
      ],
    };
    expect(logEmbedOf('club', log, 'Club', en).description!.split('\n').slice(2)).toEqual([
      `🟢 **Ann** #A joined · <t:${T0}:R>`,
      `🎖️ **Ann** #A: Member → Vice President · <t:${T0}:R>`,
      `⚙️ Required trophies: 1000 → 2000 · <t:${T0}:R>`,
    ]);
  });

  it('shows the trophy push with gains per window', () => {
    const push: PlayerPush = {
      tag: '#ME',
      ...tracking,
      trophies: 20_500,
      gains: { day: { change: 120, from: 20_380, to: 20_500, since: T0 - 86_400 }, week: null, month: null },
      bestDay: { date: '2026-05-30', change: 300 },
      winStreak: 4,
      brawlers: [{ id: 1, name: 'SHELLY', change: 60, trophies: 900 }],
    };
    const e = pushEmbedOf(push, 'Me', en);
    expect(e.fields!.map((f) => [f.name, f.value])).toEqual([
      ['Last 24 hours', '**+120**\n20,380 → 20,500'],
      ['Last 7 days', '—'],
      ['Last 30 days', '—'],
      ['Best day', '2026-05-30: **+300**'],
      ['Win streak', '4'],
      ['Brawlers pushed this week', '**Shelly** +60 (900)'],
    ]);
  });

  it('shows a best build with shares and win rates', () => {
    const ref = (id: number, name: string) => ({ id, name });
    const build: BestBuild = {
      brawler: ref(16000000, 'SHELLY'),
      sampleSize: 40,
      minTrophies: 1200,
      gadgets: [{ ...ref(1, 'FAST FORWARD'), players: 30, share: 0.75 }],
      starPowers: [],
      hyperCharges: [],
      gears: [],
      builds: [{ gadgets: [ref(1, 'FAST FORWARD')], starPowers: [ref(2, 'BAND-AID')], hyperCharges: [], players: 12, battles: 80, wins: 48, winRate: 0.6 }],
    };
    const e = bestBuildEmbedOf(build, en);
    expect(e.description).toBe('From the 40 best players of this brawler that Starr Stats recorded (1,200+ trophies on it).');
    expect(e.fields![0]).toEqual({ name: '🔧 Gadgets', value: '**Fast Forward** 75%', inline: true });
    expect(e.fields![1]!.value).toBe('—');
    expect(e.fields!.at(-1)!.value).toBe('`1.` Fast Forward + Band-Aid · 12 players · 60.0% over 80 battles');
  });

  it("ranks a map's brawlers by adjusted win rate or by use rate", () => {
    const stat = (id: number, name: string, picks: number, useRate: number, winRate: number, adjusted: number, small: boolean) => ({
      brawler: { id, name },
      picks,
      useRate,
      wins: 0,
      losses: 0,
      draws: 0,
      winRate,
      adjustedWinRate: adjusted,
      starPlayer: 0,
      starPlayerRate: null,
      adjustedStarPlayerRate: null,
      smallSample: small,
    });
    const m: MapDetail = {
      id: 15000026,
      name: 'Pinhole Punt',
      mode: 'brawlBall',
      firstSeen: T0 - 86_400,
      lastActive: T0,
      battles: 120,
      minSample: 30,
      prior: { winRate: 0.5, strength: 10 },
      stats: [stat(1, 'SHELLY', 10, 0.1, 0.9, 0.6, true), stat(2, 'COLT', 60, 0.5, 0.55, 0.55, false), stat(3, 'BULL', 0, 0, 0, 0, true)],
    };
    const byWin = mapEmbedOf(m, 'win', en);
    expect(byWin.title).toBe('Pinhole Punt · Brawl Ball');
    const lines = byWin.description!.split('\n').slice(2);
    expect(lines).toEqual([
      '` 1.` **Shelly** · win 90.0% (adjusted 60.0%) · use 10.0% · 10 picks',
      '` 2.` **Colt** · win 55.0% · use 50.0% · 60 picks',
    ]);
    expect(mapEmbedOf(m, 'use', en).description!.split('\n')[2]).toContain('**Colt**');
  });
});
