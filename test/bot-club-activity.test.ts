/**
 * /club activity end to end through the real discord.js client and the fake Discord, over ten days
 * of the simulated world recorded into history: premium gating, the coverage said plainly, one line
 * per member, members without a recorded battle log shown as not recorded, the sort buttons, the
 * CSV attachment of the whole table, and the thresholds an admin saves with /settings activity. The
 * CSV itself (quoting of names with commas, quotes, emoji) is checked on its own at the end.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'csv-parse/sync';
import { PermissionFlagsBits } from 'discord-api-types/v10';
import { activityCsv } from '../src/bot/embeds/club-activity.ts';
import type { ClubActivity } from '../src/core/history-schemas.ts';
import { backfill, clubsOf } from '../src/poller/backfill.ts';
import type { Club } from '../src/upstream/schemas.ts';
import { startBotHarness, type BotHarness } from './support/fake-discord-bot.ts';
import type { StoredMessage } from './support/fake-discord.ts';
import { startWorld, type TestWorld } from './support/world.ts';

const START = Date.UTC(2026, 5, 1, 12);
const HOUR = 3_600_000;
const ADMIN = PermissionFlagsBits.ManageGuild | PermissionFlagsBits.ViewChannel | PermissionFlagsBits.SendMessages;
let w: TestWorld;
let h: BotHarness;
let club = '';
let polled: string[] = [];

beforeAll(async () => {
  w = await startWorld({ startMs: START, players: 200, clubs: 10 });
  for (let i = 0; !club; i++) club = clubsOf(w.sim.world, [w.sim.world.playerTag(i)], START)[0] ?? '';
  polled = (w.sim.world.club(club, START) as Club).members.slice(0, 4).map((m) => m.tag);
  await backfill({ world: w.sim.world, store: w.historyStore, days: 10, nowMs: START, playerTags: polled, clubTags: [club], playerEveryMs: HOUR, clubEveryMs: HOUR, rotation: false });
  h = await startBotHarness(w.core, { now: w.now, config: { STARR_SECRET: 'test-secret-of-the-bot' } });
}, 120_000);

afterAll(async () => {
  await h?.close();
  await w?.close();
});

const slash = (text: string, o: Parameters<BotHarness['fake']['commandInteraction']>[1] = {}) => h.send(h.fake.commandInteraction(text, { guild: h.guild, ...o }));
const admin = (text: string) => slash(text, { permissions: ADMIN });

function buttons(m: StoredMessage): { custom_id: string; label: string; disabled?: boolean }[] {
  return m.components.flatMap((r) => ('components' in r ? (r.components as never[]) : [])).filter((c: { type: number }) => c.type === 2);
}

const memberLines = (m: StoredMessage) => m.embeds[0]!.description!.split('\n').filter((l) => l.includes(' · 🏆 '));
const csvRows = (m: StoredMessage) => parse(m.attachments.find((a) => a.filename.endsWith('.csv'))!.data, { bom: true, columns: true }) as Record<string, string>[];

describe('/club activity', () => {
  let m: StoredMessage;
  let answer: ClubActivity;

  it('is a premium view', async () => {
    const locked = h.fake.answer(await slash(`/club activity tag:${club}`));
    expect(locked.embeds[0]!.title).toBe('Premium view');
    expect(locked.embeds[0]!.description).toContain('Club activity');
  });

  it('shows every member with gains, battles where recorded, days since play, and says how much is covered', async () => {
    const key = (await w.keys.issue({ email: 'leader@example.com', password: 'a long password', ip: '127.0.0.1' })).key;
    expect(h.fake.answer(await admin(`/settings apikey set key:${key}`)).embeds[0]!.title).toBe('API key registered');

    m = h.fake.answer(await slash(`/club activity tag:${club}`));
    answer = (await w.core.history.clubActivity(club)).data;
    const e = m.embeds[0]!;
    expect(m.ephemeral).toBe(false);
    expect(e.title).toContain(`${club} · Activity, last 7 days`);
    expect(e.description).toContain('Recorded history covers all 7 days.');
    expect(e.description).toContain(`Battles are recorded for ${polled.length} of ${answer.members.length} members.`);
    expect(e.description).toContain('No thresholds set');

    const lines = memberLines(m);
    expect(lines).toHaveLength(answer.members.length);
    // Inactivity first, as the core sorted it; a member without a recorded battle log shows "—", not 0.
    answer.members.forEach((a, i) => {
      expect(lines[i], a.tag).toContain(`⚔️ ${a.battles === null ? '—' : a.battles}`);
      if (a.gained !== null) expect(lines[i], a.tag).toContain(`🏆 ${a.gained > 0 ? '+' : ''}${a.gained.toLocaleString('en-US')}`);
    });
    expect(lines.filter((l) => l.includes('⚔️ —'))).toHaveLength(answer.members.length - polled.length);

    // The whole table as CSV, the same numbers.
    const rows = csvRows(m);
    expect(m.attachments.map((a) => a.filename)).toEqual(['activity.png', `activity-${club.slice(1)}-2026-06-01.csv`]);
    expect(e.image?.url).toBe('attachment://activity.png');
    expect(m.attachments[0]!.data.subarray(1, 4).toString()).toBe('PNG');
    expect(rows.map((r) => r.tag)).toEqual(answer.members.map((a) => a.tag));
    for (const [i, a] of answer.members.entries()) {
      expect(rows[i]!.gained_7d, a.tag).toBe(a.gained === null ? '' : String(a.gained));
      expect(rows[i]!.battles_7d, a.tag).toBe(a.battles === null ? '' : String(a.battles));
    }
  });

  it('re-sorts by gain and by battles with its buttons, the current order disabled', async () => {
    expect(buttons(m).map((b) => [b.label, b.disabled ?? false])).toEqual([
      ['Most inactive', true],
      ['Top gain', false],
      ['Most battles', false],
    ]);
    const click = await h.send(h.fake.componentInteraction(m, buttons(m).find((b) => b.label === 'Top gain')!.custom_id));
    expect(click.calls.filter((c) => c.status >= 400)).toEqual([]);
    const byGain = h.fake.answer(click);
    const gains = csvRows(byGain).map((r) => r.gained_7d).filter((g) => g !== '').map(Number);
    expect(gains.length).toBeGreaterThan(0);
    expect(gains).toEqual([...gains].sort((a, b) => b - a));
    expect(buttons(byGain).find((b) => b.label === 'Top gain')!.disabled).toBe(true);

    const byBattles = h.fake.answer(await h.send(h.fake.componentInteraction(byGain, buttons(byGain).find((b) => b.label === 'Most battles')!.custom_id)));
    expect(csvRows(byBattles).slice(0, polled.length).map((r) => r.tag).sort()).toEqual([...polled].sort());
  });

  it("flags members below the server's thresholds, saved by an admin with /settings activity", async () => {
    const saved = h.fake.answer(await admin('/settings activity min_gain:100000 idle_days:1'));
    expect(saved.embeds[0]!.title).toBe('Activity flags saved');
    expect(saved.embeds[0]!.description).toContain('fewer than 100,000 trophies in 7 days and no play for 1 day');
    expect(await w.stores.namespace('guilds').get(`guild:${h.guild.id}`)).toMatchObject({ activity: { minGain: 100000, maxIdleDays: 1 } });

    const flagged = h.fake.answer(await slash(`/club activity tag:${club} days:3`));
    const rows = csvRows(flagged);
    const lowGain = rows.filter((r) => r.flags!.split(' ').includes('lowGain'));
    expect(lowGain.map((r) => r.tag).sort()).toEqual(rows.filter((r) => r.gained_3d !== '').map((r) => r.tag).sort());
    const n = rows.filter((r) => r.flags !== '').length;
    expect(flagged.embeds[0]!.description).toContain(`Flagged (${n}): fewer than 100,000 trophies in 3 days and no play for 1 day`);
    expect(memberLines(flagged).filter((l) => l.startsWith('⚠️'))).toHaveLength(n);

    // 0 turns a threshold off; without options the command shows the settings.
    expect(h.fake.answer(await admin('/settings activity min_gain:0')).embeds[0]!.description).toContain('below: no play for 1 day.');
    const notAdmin = h.fake.answer(await slash('/settings activity idle_days:0', { bypassCommandPermissions: true }));
    expect(notAdmin.embeds[0]!.title).toBe('Manage Server needed');
    expect(await w.stores.namespace('guilds').get(`guild:${h.guild.id}`)).toMatchObject({ activity: { maxIdleDays: 1 } });
  });

  it('says when history covers only part of a longer period', async () => {
    const month = h.fake.answer(await slash(`/club activity tag:${club} days:30`));
    expect(month.embeds[0]!.description).toMatch(/Recorded history covers only 10 days of 30 days \(since <t:\d+:D>\)/);
  });
});

describe('activity CSV', () => {
  it('quotes names with commas, quotes and line breaks, keeps emoji, keeps formulas as text, leaves unrecorded cells empty', () => {
    const member = (tag: string, name: string, extra: Partial<ClubActivity['members'][number]> = {}) => ({
      tag,
      name,
      role: 'member',
      trophies: 1000,
      joined: null,
      gained: 10,
      gainedSince: 1,
      gained30d: 20,
      battles: 3,
      wins: 1,
      lastActive: 1_780_000_000,
      inactiveDays: 0,
      inactiveAtLeast: false,
      flags: [] as ('lowGain' | 'inactive')[],
      ...extra,
    });
    const a = {
      tag: '#C',
      name: 'c',
      days: 7,
      members: [
        member('#A', 'Ann, "Queen" 🙂'),
        member('#B', 'two\nlines'),
        member('#D', '=HYPERLINK("x")', { gained: null, gained30d: null, battles: null, wins: null, lastActive: null, inactiveDays: null, flags: ['inactive'] }),
      ],
    } as unknown as ClubActivity;
    const csv = activityCsv(a);
    expect(csv.subarray(0, 3)).toEqual(Buffer.from([0xef, 0xbb, 0xbf]));
    const text = csv.toString('utf8');
    expect(text).toContain('#A,"Ann, ""Queen"" 🙂",member');
    const rows = parse(csv, { bom: true, columns: true }) as Record<string, string>[];
    expect(rows.map((r) => r.name)).toEqual(['Ann, "Queen" 🙂', 'two\nlines', `'=HYPERLINK("x")`]);
    expect(rows[0]).toMatchObject({ gained_7d: '10', gained_30d: '20', battles_7d: '3', last_active: '2026-05-28T20:26:40Z', inactive_at_least: 'false', joined: '' });
    expect(rows[2]).toMatchObject({ gained_7d: '', battles_7d: '', last_active: '', inactive_days: '', inactive_at_least: '', flags: 'inactive' });
  });
});
