/**
 * The bot's command line through `main()`: deploy-commands against the fake Discord, `try` for
 * every command (text output, attachments on disk, --json, --press, --complete, exit codes), and
 * the command loader's checks.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { main, type CliIo } from '../src/cli.ts';
import { CommandLoadError, loadCommands } from '../src/bot/command.ts';
import { DeployError, appIdFromToken, validateDefinitions } from '../src/bot/deploy.ts';
import { World } from '../src/sim/world.ts';
import { FakeDiscord } from './support/fake-discord.ts';

let dir: string;
let fake: FakeDiscord;
const SIM = { SIM_SEED: 'cli', SIM_PLAYERS: '120', SIM_CLUBS: '12' };
const world = new World({ seed: 'cli', players: 120, clubs: 12 });

function io(env: Record<string, string> = {}): CliIo & { stdout: string[]; stderr: string[] } {
  const stdout: string[] = [];
  const stderr: string[] = [];
  return {
    stdout,
    stderr,
    out: (s) => stdout.push(s),
    err: (s) => stderr.push(s),
    env: { DATA_DIR: join(dir, 'data'), LOG_LEVEL: 'silent', ...SIM, ...env },
    cwd: dir,
  };
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'starr-bot-cli-'));
  fake = await FakeDiscord.start();
});

afterAll(async () => {
  await fake.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('starr deploy-commands', () => {
  it('validates and bulk-overwrites the commands of one guild, or globally', async () => {
    const g = fake.addGuild({ name: 'Dev' });
    const env = { DISCORD_TOKEN: fake.token, DISCORD_API_URL: fake.apiUrl };
    const a = io(env);
    expect(await main(['deploy-commands', '--guild', g.id], a)).toBe(0);
    const names = (await loadCommands()).definitions().map((d) => d.name).sort();
    expect(fake.guildCommands.get(g.id)!.map((c) => c.name).sort()).toEqual(names);
    expect(a.stdout.join('\n')).toContain(`in server ${g.id}`);

    const b = io(env);
    expect(await main(['deploy-commands'], b)).toBe(0);
    expect(fake.globalCommands.map((c) => c.name).sort()).toEqual(names);
    expect(fake.commandPuts.at(-1)!.guildId).toBeUndefined();
    // Contexts are for global commands; a server's copy goes without them.
    expect(fake.globalCommands.find((c) => c.name === 'settings')!.contexts).toEqual([0]);
    expect(fake.guildCommands.get(g.id)!.every((c) => c.contexts === null)).toBe(true);
    expect(fake.rejections.filter((r) => r.route.includes('/commands'))).toEqual([]);
  });

  it('checks without deploying on --dry-run, and needs the token otherwise', async () => {
    const dry = io();
    expect(await main(['deploy-commands', '--dry-run'], dry)).toBe(0);
    expect(dry.stdout[0]).toMatch(/^\d+ commands follow Discord's rules: \/about/);
    expect(JSON.parse(dry.stdout[1]!)).toHaveLength((await loadCommands()).all.length);
    const none = io();
    expect(await main(['deploy-commands'], none)).toBe(78);
    expect(none.stderr.join('\n')).toContain('DISCORD_TOKEN is not set');
    expect(await main(['deploy-commands', '--guild', 'abc'], io())).toBe(2);
  });

  it('refuses definitions that break the rules the builders miss', () => {
    expect(() =>
      validateDefinitions([
        { name: 'x', description: 'x', options: [{ type: 3, name: 'a', description: 'a' }, { type: 3, name: 'b', description: 'b', required: true }] },
      ]),
    ).toThrow(/\/x\.options\[1\]\.required: Required options must be placed before non-required options/);
    expect(() => validateDefinitions([{ name: 'x', description: 'x' }, { name: 'x', description: 'y' }])).toThrow(DeployError);
    expect(appIdFromToken(fake.token)).toBe(fake.appId);
  });

  it('refuses a command module with a broken shape, name or definition when loading', async () => {
    const cmds = mkdtempSync(join(dir, 'commands-'));
    const write = (name: string, body: string) => writeFileSync(join(cmds, name), body);
    const mod = (def: string) => `import { z } from 'zod';\nexport default { definition: ${def}, args: z.object({}), run: async () => ({ content: 'x' }) };\n`;
    write('ok.ts', mod(`{ name: 'ok', description: 'fine' }`));
    expect((await loadCommands(cmds)).definitions().map((d) => d.name)).toEqual(['ok']);
    write('bad.ts', mod(`{ name: 'bad', description: 'x', options: [{ type: 3, name: 'a', description: 'a' }, { type: 3, name: 'a', description: 'b' }] }`));
    await expect(loadCommands(cmds)).rejects.toThrow(/bad\.ts: \/bad breaks Discord's rules:\noptions\[1\]\.name: Option names must be unique/);
    rmSync(join(cmds, 'bad.ts'));
    write('named.ts', mod(`{ name: 'other', description: 'x' }`));
    await expect(loadCommands(cmds)).rejects.toThrow(/must be named after its command/);
    rmSync(join(cmds, 'named.ts'));
    write('shape.ts', `export default { definition: { name: 'shape', description: 'x' } };\n`);
    await expect(loadCommands(cmds)).rejects.toBeInstanceOf(CommandLoadError);
  });
});

describe('starr try', () => {
  const player = world.playerTag(4);
  const club = world.clubTag(1);

  it('prints the reply of every command as text', { timeout: 120_000 }, async () => {
    const runs: [string, RegExp, number?][] = [
      [`/player tag:${player}`, /■ .*#\w+\n[\s\S]*▸ 🏆 Trophies/],
      [`/player tag:${player} view:brawlers`, /· Brawlers\n│ ` 1` \*\*/],
      [`/player tag:${player} view:battlelog`, /· Battle log\n/],
      [`/player tag:${player} view:log`, /■ Premium view/, 1],
      [`/club show tag:${club}`, /▸ 👥 Members: \d+ \/ 30/],
      [`/club show tag:${club} view:members`, /· Members\n/],
      ['/ranking type:clubs', /■ Top clubs · Global/],
      ['/brawler name:shelly', /■ Shelly\n[\s\S]*▸ 🔧 Gadgets/],
      ['/events', /■ 🎮 Active events\n[\s\S]*ends in \d+ (?:hours?|minutes?)/],
      ['/map name:Somewhere', /■ Unknown map\n│ No recorded map is called \*\*Somewhere/, 1],
      [`/link tag:${player}`, /■ Account linked/],
      ['/unlink', /■ Unlinked/],
      ['/leaderboard list', /■ Leaderboards of this server\n│ _None yet/],
      ['/settings apikey status', /■ Server settings\n[\s\S]*▸ 🔑 API key: No key registered/],
      ['/help', /■ Starr Stats commands\n/],
      ['/about', /■ Starr Stats \d+\.\d+\.\d+\n/],
    ];
    for (const [text, pattern, code = 0] of runs) {
      const t = io();
      expect(await main(['try', text, '--out', 'shots'], t), text).toBe(code);
      expect(t.stdout.join('\n'), text).toMatch(pattern);
      expect(t.stderr).toEqual(['(simulated game world: no BRAWLSTARS_API_TOKEN is set)']);
    }
  });

  it('answers in the language of --locale', async () => {
    const t = io();
    expect(await main(['try', `/player tag:${player}`, '--locale', 'pt-BR', '--out', 'shots'], t)).toBe(0);
    const out = t.stdout.join('\n');
    expect(out).toMatch(/▸ 🏆 Troféus\n/);
    expect(out).toContain('— Starr Stats · sem afiliação com a Supercell');
    expect(out).toMatch(/<Escolha uma visão: Perfil ▾ Perfil \| Brawlers \| Registro de batalhas/);
  });

  it('writes attachments and prints components', async () => {
    const t = io();
    expect(await main(['try', `/player tag:${player}`, '--out', 'shots'], t)).toBe(0);
    const out = t.stdout.join('\n');
    expect(out).toContain('🖼  shots/player.png');
    expect(out).toMatch(/Attachments:\n {2}shots\/player\.png \(\d+ KB\)/);
    expect(out).toContain('<Choose a view: Profile ▾ Profile | Brawlers | Battle log');
    expect(readFileSync(join(dir, 'shots', 'player.png')).subarray(1, 4).toString()).toBe('PNG');
  });

  it('prints the raw payload with --json, presses buttons, completes options', async () => {
    const j = io();
    expect(await main(['try', `/club show tag:${club} view:members`, '--json'], j)).toBe(0);
    const body = JSON.parse(j.stdout.join('\n'));
    expect(body.embeds[0].title).toContain(club);
    expect(body.components[0].components[0].custom_id).toMatch(/^s:/);

    const p = io();
    expect(await main(['try', '/ranking type:players', '--press', 'Next'], p)).toBe(0);
    expect(p.stdout.join('\n')).toContain('`21.`');
    const missing = io();
    expect(await main(['try', '/ranking type:players', '--press', 'Nope'], missing)).toBe(2);
    expect(missing.stderr.join('\n')).toContain('No button or menu option is labelled "Nope"');

    const c = io();
    expect(await main(['try', '/ranking type:players country:swe', '--complete', 'country'], c)).toBe(0);
    expect(c.stdout[0]).toBe('Sweden (SE)  →  SE');
  });

  it('explains mistakes in the command itself', async () => {
    const t = io();
    expect(await main(['try', '/player view:nope'], t)).toBe(2);
    expect(t.stderr.join('\n')).toContain('Option view: one of profile, brawlers');
    const u = io();
    expect(await main(['try', '/nothing'], u)).toBe(2);
    expect(u.stderr.join('\n')).toContain('Unknown command /nothing');
    expect(await main(['try'], io())).toBe(2);
    expect(existsSync(join(dir, 'out'))).toBe(false);
  });
});
