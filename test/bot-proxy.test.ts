/**
 * The bot through Discord's REST proxy: `starr discord-proxy` (@discordjs/proxy) runs as its own OS
 * process in front of the fake Discord, the real discord.js Client sets DISCORD_API_URL to it, and
 * commands go end to end — gateway discovery, interaction callbacks, multipart picture uploads,
 * edits. The fake Discord records each request's User-Agent: every request of the bot arrived
 * through the proxy.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startWorld, type TestWorld } from './support/world.ts';
import { startBotHarness, type BotHarness } from './support/fake-discord-bot.ts';
import { PROXY_USER_AGENT } from '../src/bot/discord-proxy.ts';

const START = Date.UTC(2026, 5, 1, 12);
let w: TestWorld;
let h: BotHarness;
let proxy: ChildProcess | undefined;
let out = '';
let exited: Promise<number | null>;

/** Starts `starr discord-proxy` in front of the fake; resolves with the DISCORD_API_URL it prints. */
function startProxy(upstream: string): Promise<string> {
  const bin = join(import.meta.dirname, '..', 'bin', 'starr.js');
  const child = spawn(process.execPath, [bin, 'discord-proxy', '--port', '0', '--upstream', upstream], {
    env: { PATH: process.env.PATH ?? '' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  proxy = child;
  exited = new Promise((resolve) => child.on('exit', (code) => resolve(code)));
  child.stdout.setEncoding('utf8');
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (d: string) => (out += d));
  return new Promise((resolve, reject) => {
    child.stdout.on('data', (d: string) => {
      out += d;
      const m = /DISCORD_API_URL=(http:\/\/127\.0\.0\.1:\d+\/api)/.exec(out);
      if (m) resolve(m[1]!);
    });
    child.on('exit', () => reject(new Error(`starr discord-proxy exited early: ${out}`)));
  });
}

beforeAll(async () => {
  w = await startWorld({ startMs: START });
  h = await startBotHarness(w.core, { now: w.now, through: (fake) => startProxy(fake.apiUrl) });
});

afterAll(async () => {
  await h?.close();
  proxy?.kill('SIGKILL');
  await w?.close();
});

describe('the bot through starr discord-proxy', () => {
  it('answers a command with a picture through the proxy, every request passing it', async () => {
    const rec = await h.send(h.fake.commandInteraction(`/player tag:${w.sim.world.playerTag(3)}`, { guild: h.guild }));
    expect(rec.callbacks).toHaveLength(1);
    const m = h.fake.answer(rec);
    expect(m.embeds[0]!.title).toContain(w.sim.world.playerTag(3));
    expect(m.attachments.map((a) => a.filename)).toContain('player.png');
    expect(m.attachments.find((a) => a.filename === 'player.png')!.size).toBeGreaterThan(1000);

    const help = await h.send(h.fake.commandInteraction('/help', { guild: h.guild }));
    expect(help.callbacks).toEqual([4]);

    // everything the bot sent (gateway discovery, callbacks, uploads) came through the proxy; only
    // the harness's own command deployment went straight to Discord
    const bots = h.fake.requests.filter((r) => !r.route.includes('/commands') && !r.route.startsWith('(http'));
    expect(bots.map((r) => r.route)).toContain('/gateway/bot');
    expect(bots.some((r) => r.files.some((f) => f.name === 'player.png'))).toBe(true);
    expect(bots.filter((r) => !r.userAgent?.includes(PROXY_USER_AGENT))).toEqual([]);
    expect(h.fake.rejections).toEqual([]);
  });

  it("passes Discord's errors through unchanged (a second acknowledgement is refused with 40060)", async () => {
    const rec = await h.send(h.fake.commandInteraction('/help', { guild: h.guild }));
    const res = await fetch(`${h.core.config.DISCORD_API_URL}/v10/interactions/${rec.id}/${rec.token}/callback`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ type: 4, data: { content: 'again' } }),
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { code: number }).code).toBe(40060);
    expect(h.fake.rejections.at(-1)!.userAgent).toContain(PROXY_USER_AGENT);
  });

  it('stops cleanly on SIGTERM', async () => {
    proxy!.kill('SIGTERM');
    expect(await exited).toBe(0);
  });
});
