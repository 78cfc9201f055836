/**
 * The simulated world's HTTP surface: paging cursors, every error body, authentication and the
 * control endpoints, over real HTTP on 127.0.0.1.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeCursor, encodeCursor, SimClock, startSim, type SimServer } from '../src/sim/index.ts';
import * as S from '../src/upstream/schemas.ts';

const T0 = Date.UTC(2026, 10, 20, 18, 30, 0);
type Body = any;

let sim: SimServer;
beforeAll(async () => {
  sim = await startSim({ seed: 'http', players: 3000, clubs: 100, clock: new SimClock(T0) });
});
afterAll(() => sim.close());

async function call(path: string, token: string | null = sim.token, init: RequestInit = {}) {
  const headers: Record<string, string> = { ...(init.headers as Record<string, string>) };
  if (token !== null) headers.authorization = `Bearer ${token}`;
  const res = await fetch(sim.url + path, { ...init, headers });
  const text = await res.text();
  return { status: res.status, headers: res.headers, text, body: text ? JSON.parse(text) : undefined };
}

/** Control endpoints live beside /v1. */
async function controlCall(path: string, token: string | null, init: RequestInit = {}) {
  const base = sim.url.replace(/\/v1$/, '');
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (token !== null) headers.authorization = `Bearer ${token}`;
  const res = await fetch(base + path, { ...init, headers });
  return { status: res.status, body: (await res.json()) as Body };
}

/** A club with more than 20 members at T0. */
function bigClub(): string {
  for (let c = 0; c < sim.world.clubCount; c++) {
    const tag = sim.world.clubTag(c);
    if ((sim.world.clubMembers(tag, T0) ?? []).length > 20) return tag;
  }
  throw new Error('no club with more than 20 members');
}

describe('paging', () => {
  it('cursors are unpadded base64url of {"pos":N}', () => {
    expect(encodeCursor(10)).toBe('eyJwb3MiOjEwfQ');
    expect(encodeCursor(1)).toBe('eyJwb3MiOjF9');
    expect(decodeCursor('eyJwb3MiOjIwfQ')).toBe(20);
    expect(decodeCursor('eyJwb3MiOjF9==')).toBeNull();
    expect(decodeCursor('30')).toBeNull();
  });

  it('walks club members forward and back with limit/after/before like the API', async () => {
    const tag = encodeURIComponent(bigClub());
    const all = (await call(`/clubs/${tag}/members`)).body;
    expect(all.paging.cursors).toEqual({});
    const n = all.items.length;
    const p1 = (await call(`/clubs/${tag}/members?limit=10`)).body;
    expect(p1.paging.cursors).toEqual({ after: encodeCursor(10) });
    const p2 = (await call(`/clubs/${tag}/members?limit=10&after=${p1.paging.cursors.after}`)).body;
    expect(p2.paging.cursors).toEqual({ after: encodeCursor(20), before: encodeCursor(10) });
    const p3 = (await call(`/clubs/${tag}/members?limit=10&after=${p2.paging.cursors.after}`)).body;
    expect(n).toBeLessThanOrEqual(30);
    expect(p3.paging.cursors).toEqual({ before: encodeCursor(20) });
    expect([...p1.items, ...p2.items, ...p3.items]).toEqual(all.items);
    const back = (await call(`/clubs/${tag}/members?limit=10&before=${p2.paging.cursors.before}`)).body;
    expect(back).toEqual(p1);
    S.ClubMembers.parse(p2);
  });

  it('rankings: 200 items without limit, clamped above 200, pages of 30 continue at rank 31', async () => {
    const full = (await call('/rankings/global/players')).body;
    expect(full.items).toHaveLength(200);
    expect(full.paging.cursors).toEqual({});
    const clamped = (await call('/rankings/global/players?limit=500')).body;
    expect(clamped.items).toHaveLength(200);
    const p1 = (await call('/rankings/global/players?limit=30')).body;
    expect(p1.paging.cursors).toEqual({ after: encodeCursor(30) });
    const p2 = (await call(`/rankings/global/players?limit=30&after=${p1.paging.cursors.after}`)).body;
    expect(p2.items[0].rank).toBe(31);
    expect(p2.paging.cursors).toEqual({ after: encodeCursor(60), before: encodeCursor(30) });
    const last = (await call(`/rankings/global/players?limit=30&after=${encodeCursor(180)}`)).body;
    expect(last.items).toHaveLength(20);
    expect(last.paging.cursors).toEqual({ before: encodeCursor(180) });
    const clubs = (await call('/rankings/global/clubs?limit=10')).body;
    expect(clubs.paging.cursors).toEqual({ after: encodeCursor(10) });
  });

  it('brawlers and game modes page the same way and default to everything in id order', async () => {
    const all = (await call('/brawlers')).body;
    S.BrawlerList.parse(all);
    expect(all.paging.cursors).toEqual({});
    const ids = all.items.map((b: Body) => b.id);
    expect(ids).toEqual([...ids].sort((a, b) => a - b));
    expect(ids).not.toContain(16000033);
    expect(ids).not.toContain(16000055);
    expect(ids).not.toContain(16000088);
    const first = (await call('/brawlers?limit=10')).body;
    expect(first.items).toEqual(all.items.slice(0, 10));
    expect(first.paging.cursors).toEqual({ after: encodeCursor(10) });
    const modes = (await call('/gamemodes?limit=5')).body;
    S.GameModeList.parse(modes);
    expect(modes.items).toHaveLength(5);
    const one = (await call('/brawlers/16000000')).body;
    expect(one).toEqual(all.items[0]);
    S.Brawler.parse(one);
  });

  it('rejects hand-made or broken cursors, both directions at once, and bad limits with 400 badRequest', async () => {
    for (const q of ['after=30', 'after=eyJwb3MiOjEwfQ%3D%3D', 'before=abc', `after=${encodeCursor(10)}&before=${encodeCursor(20)}`, 'limit=0', 'limit=ten', 'limit=-5']) {
      const r = await call(`/rankings/global/players?${q}`);
      expect(r.status, q).toBe(400);
      expect(r.body.reason).toBe('badRequest');
      expect(typeof r.body.message).toBe('string');
    }
  });
});

describe('error bodies', () => {
  it('404 notFound for unknown but well-formed tags, echoing the tag as sent', async () => {
    const r = await call('/players/%23PYLQ2GRJ');
    expect(r.status).toBe(404);
    expect(r.body).toEqual({ reason: 'notFound', message: 'Not found with tag %23PYLQ2GRJ' });
    expect(r.headers.get('cache-control')).toBe('public max-age=600');
    for (const path of ['/players/%23PYLQ2GRJ/battlelog', '/clubs/%23PYLQ2GRJ', '/clubs/%23PYLQ2GRJ/members']) {
      expect((await call(path)).body.reason).toBe('notFound');
    }
  });

  it('404 for tags outside the alphabet, unknown brawlers, countries and paths', async () => {
    expect((await call('/players/sij3f')).body).toEqual({ reason: 'notFound', message: 'Not found with tag sij3f' });
    expect((await call('/players/%23ABC')).status).toBe(404);
    expect((await call('/brawlers/16000033')).body).toEqual({ reason: 'notFound', message: 'Not found with id 16000033' });
    expect((await call('/rankings/global/brawlers/16000033')).status).toBe(404);
    expect((await call('/rankings/ZZ/players')).body.reason).toBe('notFound');
    expect((await call('/nothing/here')).status).toBe(404);
  });

  it('accepts tags in any letter case and the URL-encoded #', async () => {
    const tag = sim.world.playerTag(12);
    const upper = await call(`/players/${encodeURIComponent(tag)}`);
    const lower = await call(`/players/${encodeURIComponent(tag.toLowerCase())}`);
    expect(upper.status).toBe(200);
    expect(lower.text).toBe(upper.text);
  });
});

describe('authentication', () => {
  it('403 accessDenied "Missing authorization" without a header', async () => {
    const r = await call('/brawlers', null);
    expect(r.status).toBe(403);
    expect(r.body).toEqual({ reason: 'accessDenied', message: 'Missing authorization' });
    expect(r.headers.get('cache-control')).toBe('public max-age=600');
  });

  it('403 accessDenied "Invalid authorization" for a wrong or forged token', async () => {
    const other = await startSim({ seed: 'another-world', players: 50, clubs: 5 });
    try {
      for (const token of ['nope', `${sim.token}x`, other.token]) {
        const r = await call('/brawlers', token);
        expect(r.status).toBe(403);
        expect(r.body).toEqual({ reason: 'accessDenied', message: 'Invalid authorization' });
      }
    } finally {
      await other.close();
    }
  });

  it('403 accessDenied.invalidIp naming the caller IP when the key is for other IPs', async () => {
    const token = sim.issueToken({ ips: ['203.0.113.7'] });
    const r = await call('/players/%23PYLQ2GRJ', token);
    expect(r.status).toBe(403);
    expect(r.body).toEqual({
      reason: 'accessDenied.invalidIp',
      message: 'Invalid authorization: API key does not allow access from IP 127.0.0.1',
    });
    const ranged = sim.issueToken({ ips: ['127.0.0.0/8'] });
    expect((await call('/brawlers', ranged)).status).toBe(200);
  });

  it('the token looks like an official key: an HS512 JWT with the allowed IPs in limits', () => {
    const [header, payload] = sim.token.split('.').slice(0, 2).map((p) => JSON.parse(Buffer.from(p, 'base64url').toString('utf8')));
    expect(header).toMatchObject({ typ: 'JWT', alg: 'HS512' });
    expect(payload.scopes).toEqual(['brawlstars']);
    expect(payload.limits).toContainEqual({ cidrs: ['127.0.0.1', '::1'], type: 'client' });
  });

  it('control endpoints need the token too', async () => {
    expect((await controlCall('/_sim/faults', null)).status).toBe(403);
    expect((await controlCall('/_sim/faults', 'bad')).status).toBe(403);
    expect((await controlCall('/_sim/faults', sim.token)).status).toBe(200);
  });
});

describe('control endpoints', () => {
  it('reads and moves the virtual clock', async () => {
    const clock = await controlCall('/_sim/clock', sim.token);
    expect(clock.body).toMatchObject({ now: T0, frozen: true });
    const tag = encodeURIComponent(sim.world.playerTag(3));
    const before = (await call(`/players/${tag}/battlelog`)).text;
    const moved = await controlCall('/_sim/clock', sim.token, { method: 'POST', body: JSON.stringify({ advance: 2 * 86_400_000 }) });
    expect(moved.body.now).toBe(T0 + 2 * 86_400_000);
    expect((await call(`/players/${tag}/battlelog`)).text).not.toBe(before);
    await controlCall('/_sim/clock', sim.token, { method: 'POST', body: JSON.stringify({ set: new Date(T0).toISOString() }) });
    expect(sim.clock.now()).toBe(T0);
    expect((await call(`/players/${tag}/battlelog`)).text).toBe(before);
    expect((await controlCall('/_sim/clock', sim.token, { method: 'POST', body: '{"jump":1}' })).status).toBe(400);
  });
  it('logs every request of the official paths, refused ones too, readable by path and resettable', async () => {
    expect((await controlCall('/_sim/log', sim.token, { method: 'DELETE' })).body).toEqual({ total: 0, dropped: 0, requests: [] });
    const tag = encodeURIComponent(sim.world.playerTag(5));
    const from = Date.now();
    await call(`/players/${tag}`);
    await call(`/players/${tag}/battlelog`);
    await call('/brawlers?limit=2');
    await call('/brawlers', 'bad');
    const to = Date.now();
    const all = await controlCall('/_sim/log', sim.token);
    expect(all.status).toBe(200);
    expect(all.body.total).toBe(4);
    expect(all.body.requests.map((r: { path: string }) => r.path)).toEqual([
      `/v1/players/${tag}`,
      `/v1/players/${tag}/battlelog`,
      '/v1/brawlers?limit=2',
      '/v1/brawlers',
    ]);
    for (const r of all.body.requests as { at: number }[]) expect(r.at >= from && r.at <= to).toBe(true);
    // who asked: Node's fetch says so in its User-Agent
    expect(all.body.requests[0].userAgent).toBe('node');
    // the control endpoints themselves are not upstream requests
    const players = await controlCall('/_sim/log?path=/players/', sim.token);
    expect(players.body.requests).toHaveLength(2);
    expect(sim.log.view().total).toBe(4);
    expect((await controlCall('/_sim/log', 'bad')).status).toBe(403);
    expect((await controlCall('/_sim/log', sim.token, { method: 'DELETE' })).body.total).toBe(0);
    expect(sim.log.view().requests).toEqual([]);
  });

  it('GET /_sim/log?atLeast=N answers once N matching requests arrived', async () => {
    await controlCall('/_sim/log', sim.token, { method: 'DELETE' });
    const tag = encodeURIComponent(sim.world.playerTag(6));
    let answered = false;
    const q = `path=${encodeURIComponent(`/players/${tag}`)}`;
    const waiting = controlCall(`/_sim/log?${q}&atLeast=2`, sim.token).then((r) => {
      answered = true;
      return r;
    });
    await call(`/players/${tag}`);
    await call('/brawlers');
    // one of two so far: the answer waits (the brawlers request did not match)
    await controlCall('/_sim/log', sim.token);
    expect(answered).toBe(false);
    await call(`/players/${tag}/battlelog`);
    const r = await waiting;
    expect(r.status).toBe(200);
    expect(r.body.requests.map((x: { path: string }) => x.path)).toEqual([`/v1/players/${tag}`, `/v1/players/${tag}/battlelog`]);
    // already there: at once
    expect((await controlCall(`/_sim/log?${q}&atLeast=1`, sim.token)).body.requests).toHaveLength(2);
    expect((await controlCall('/_sim/log?atLeast=x', sim.token)).status).toBe(400);
  });

  it('changes a player profile icon as the player would in the game, and refuses what is not an icon', async () => {
    const tag = sim.world.playerTag(5);
    const path = `/_sim/players/${encodeURIComponent(tag)}/icon`;
    const post = (body: string, token: string | null = sim.token) => controlCall(path, token, { method: 'POST', body });
    const before = (await call(`/players/${encodeURIComponent(tag)}`)).body.icon.id;
    const next = before === 28000000 ? 28000001 : 28000000;
    expect((await post(JSON.stringify({ id: next }), null)).status).toBe(403);
    expect((await post('{"id":"28000000"}')).status).toBe(400);
    expect((await post('{"id":27999999}')).status).toBe(400);
    expect((await controlCall(`/_sim/players/${encodeURIComponent('#QQQQQQQQQ')}/icon`, sim.token, { method: 'POST', body: '{"id":28000000}' })).status).toBe(404);
    expect((await call(`/players/${encodeURIComponent(tag)}`)).body.icon.id).toBe(before);
    const set = await post(JSON.stringify({ id: next }));
    expect(set.status).toBe(200);
    expect(set.body).toEqual({ tag, icon: { id: next } });
    expect((await call(`/players/${encodeURIComponent(tag)}`)).body.icon.id).toBe(next);
    // The club's member list shows the same icon: one rule for every body.
    const club = (await call(`/players/${encodeURIComponent(tag)}`)).body.club;
    if (club?.tag) {
      const members = (await call(`/clubs/${encodeURIComponent(club.tag)}/members`)).body.items as { tag: string; icon: { id: number } }[];
      expect(members.find((m) => m.tag === tag)?.icon.id).toBe(next);
    }
  });

  it('moves a player between clubs and gives roles as the game would; every body agrees, and a refused change changes nothing', async () => {
    const enc = encodeURIComponent;
    const playerClub = async (tag: string) => (await call(`/players/${enc(tag)}`)).body.club as { tag?: string };
    const members = async (club: string) => (await call(`/clubs/${enc(club)}/members`)).body.items as { tag: string; role: string }[];
    const inClub = async (club: string) => (await call(`/clubs/${enc(club)}`)).body.members as { tag: string; role: string }[];
    // a member below the president of a big club, and a club with room
    const from = bigClub();
    const mover = (await inClub(from)).find((m) => m.role !== 'president')!.tag;
    let to = '';
    let full = '';
    for (let c = 0; c < sim.world.clubCount && (!to || !full); c++) {
      const n = (sim.world.clubMembers(sim.world.clubTag(c), T0) ?? []).length;
      if (!to && n < 25 && sim.world.clubTag(c) !== from) to = sim.world.clubTag(c);
      if (!full && n === 30) full = sim.world.clubTag(c);
    }
    expect(to && full).toBeTruthy();
    const path = `/_sim/players/${enc(mover)}/club`;
    const post = (body: unknown, token: string | null = sim.token, at = path) => controlCall(at, token, { method: 'POST', body: JSON.stringify(body) });

    // refused: no token, bad bodies, unknown player or club, a full club, the club it is in
    expect((await post({ club: to }, null)).status).toBe(403);
    for (const bad of [{}, { club: 5 }, { role: 'president' }, { role: 'boss' }, { club: to, role: 'senior' }]) expect((await post(bad)).status).toBe(400);
    expect((await post({ club: to }, sim.token, `/_sim/players/${enc('#QQQQQQQQQ')}/club`)).status).toBe(404);
    expect((await post({ club: '#QQQQQQQQQ' })).status).toBe(404);
    expect((await post({ club: full })).body.message).toMatch(/full/);
    expect((await post({ club: from })).status).toBe(400);
    const president = (await inClub(from)).find((m) => m.role === 'president')!.tag;
    expect((await post({ role: 'member' }, sim.token, `/_sim/players/${enc(president)}/club`)).status).toBe(400);
    expect((await playerClub(mover)).tag).toBe(from);
    expect((await members(from)).map((m) => m.tag)).toContain(mover);

    // promoted in its club
    const promoted = await post({ role: 'vicePresident' });
    expect(promoted).toEqual({ status: 200, body: { tag: mover, club: { tag: from, role: 'vicePresident' } } });
    expect((await members(from)).find((m) => m.tag === mover)?.role).toBe('vicePresident');
    expect((await inClub(from)).find((m) => m.tag === mover)?.role).toBe('vicePresident');

    // leaves: in no club, on no member list
    expect(await post({ club: null })).toEqual({ status: 200, body: { tag: mover, club: null } });
    expect(await playerClub(mover)).toEqual({});
    expect((await members(from)).map((m) => m.tag)).not.toContain(mover);
    expect((await post({ role: 'senior' })).status).toBe(400);

    // joins another club as a member
    const size = (await members(to)).length;
    expect(await post({ club: to })).toEqual({ status: 200, body: { tag: mover, club: { tag: to, role: 'member' } } });
    expect((await playerClub(mover)).tag).toBe(to);
    expect((await members(to)).length).toBe(size + 1);
    expect((await inClub(to)).find((m) => m.tag === mover)?.role).toBe('member');
    expect((await members(from)).map((m) => m.tag)).not.toContain(mover);
  });
});
