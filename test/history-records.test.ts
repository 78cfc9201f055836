/**
 * Chart series and the ImageService's records over recorded history: every point is the world's
 * value at the time it was recorded, per-day counts add up to the recorded battles.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HistoryService } from '../src/core/history.ts';
import { historyRecords } from '../src/core/history-records.ts';
import { ImageService, type ImageRecords } from '../src/core/images.ts';
import { createHttpServer } from '../src/http/server.ts';
import { PLAYER_CHART_OPTIONS } from '../src/render/catalogue.ts';
import { shortageText } from '../src/render/chart.ts';
import { renderPng } from '../src/render/index.ts';
import type { RenderJob } from '../src/render/types.ts';
import { serve } from './support/http.ts';
import { backfill, clubsOf } from '../src/poller/backfill.ts';
import { fameOf } from '../src/render/measures.ts';
import { HistoryStore } from '../src/store/history-store.ts';
import type { Club, Player } from '../src/upstream/schemas.ts';
import { startWorld, type TestWorld } from './support/world.ts';

const T0 = Date.UTC(2026, 5, 6, 0);
const DAY = 86_400_000;

describe('series and image records', () => {
  let w: TestWorld;
  let store: HistoryStore;
  let history: HistoryService;
  let records: ImageRecords;
  let tag = '';
  let club = '';

  beforeAll(async () => {
    w = await startWorld({ startMs: T0, players: 200, clubs: 20 });
    store = w.historyStore;
    history = w.history;
    records = historyRecords(history);
    // the strongest player who is in a club
    for (let i = 0; !club; i++) {
      tag = w.sim.world.playerTag(i);
      club = clubsOf(w.sim.world, [tag], T0)[0] ?? '';
    }
    const members = (w.sim.world.club(club, T0) as Club).members.map((m) => m.tag);
    await backfill({ world: w.sim.world, store, days: 4, nowMs: T0, playerTags: [tag, ...members], clubTags: [club], playerEveryMs: 2 * 3_600_000, clubEveryMs: 6 * 3_600_000 });
  });
  afterAll(async () => {
    await w?.close();
  });

  it('draws trophies and fame as recorded at each snapshot', async () => {
    const from = T0 - 3 * DAY;
    const [trophies] = await records.playerSeries(tag, 'trophies', from, T0);
    expect(trophies!.points.length).toBeGreaterThan(3);
    expect(trophies!.points[0]!.t).toBe(from);
    for (const p of trophies!.points) expect(p.v).toBe((w.sim.world.player(tag, p.t) as Player).trophies);
    const fame = await history.series('player', tag, 'fame', from, T0);
    for (const p of fame) expect(p.v).toBe(fameOf(w.sim.world.player(tag, p.t) as Player));
  });

  it('counts recorded battles per day and per brawler', async () => {
    const battles = await history.battles(tag);
    const [perDay] = await records.playerSeries(tag, 'battlesPerDay', T0 - 4 * DAY, T0);
    expect(perDay!.points.reduce((s, p) => s + p.v, 0)).toBe(battles.filter((b) => b.t * 1000 >= T0 - 4 * DAY).length);
    const byBrawler = await records.brawlerRecords(tag);
    expect(byBrawler.reduce((s, r) => s + r.results.length, 0)).toBe(battles.filter((b) => b.result !== null).length);
  });

  it('gives club lines and the member wins of recorded members', async () => {
    const [members] = await records.clubSeries(club, 'memberCount', T0 - 2 * DAY, T0);
    for (const p of members!.points) expect(p.v).toBe((w.sim.world.club(club, p.t) as Club).members.length);
    const [wins] = await records.clubSeries(club, 'memberWins', T0 - 2 * DAY, T0);
    expect(wins!.points.length).toBeGreaterThan(0);
    const last = wins!.points[wins!.points.length - 1]!;
    const total = (w.sim.world.club(club, last.t) as Club).members.reduce((s, m) => {
      const p = w.sim.world.player(m.tag, Math.floor(last.t / 7_200_000) * 7_200_000) as Player;
      return s + p['3vs3Victories'] + p.soloVictories + p.duoVictories;
    }, 0);
    expect(last.v).toBe(total);
  });

  it('finds the first profile of a season and the first recording', async () => {
    const base = await records.seasonBaseline(tag, T0 - 2 * DAY, T0);
    expect(base!.at).toBe(T0 - 2 * DAY);
    expect(base!.trophies).toBe((w.sim.world.player(tag, T0 - 2 * DAY) as Player).trophies);
    expect(await records.firstRecorded('player', tag)).toBeLessThanOrEqual(T0 - 4 * DAY + 2 * 3_600_000);
    expect(await records.firstRecorded('player', w.sim.world.playerTag(150))).toBeNull();
  });

  it('calls a quiet month on the activity chart a period without battles, not "31 recorded points"', async () => {
    const jobs: RenderJob[] = [];
    const images = new ImageService({
      stats: w.stats,
      records,
      renderer: { render: async (job) => (jobs.push(job), renderPng(job)) },
      now: w.now,
    });
    const http = await serve(createHttpServer({ ...w.core, history, images }, { now: w.now }));
    try {
      // Recording began 4 days before 6 June 2026 (battle logs reach a little further back); March has no battles.
      expect((await history.battles(tag)).every((b) => b.t * 1000 >= Date.UTC(2026, 3, 1))).toBe(true);
      const r = await http.get(`/players/${encodeURIComponent(tag)}/chart?option=2&from=01.03.26&to=31.03.26`);
      expect(r.status).toBe(200);
      expect(r.headers['content-type']).toBe('image/png');
      const job = jobs.at(-1)!;
      expect(job.kind).toBe('playerChart');
      const series = job.kind === 'playerChart' ? job.input.series : [];
      expect(series[0]!.points).toHaveLength(31);
      expect(shortageText(PLAYER_CHART_OPTIONS[2], series)).toBe(
        'Starr Stats has recorded no battles in this period. It records a player every time someone looks them up, and keeps tracking them for a while.',
      );
      // The same chart over the days with battles draws them.
      const busy = await http.get(`/players/${encodeURIComponent(tag)}/chart?option=2&from=01.06.26&to=06.06.26`);
      expect(busy.status).toBe(200);
      const drawn = jobs.at(-1)!;
      expect(shortageText(PLAYER_CHART_OPTIONS[2], drawn.kind === 'playerChart' ? drawn.input.series : [])).toBeNull();
    } finally {
      await http.close();
      await images.close();
    }
  });
});
