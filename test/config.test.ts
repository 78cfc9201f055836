import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ConfigError, cacheUrl, loadConfig, renderEnvExample, settings, usesSimulator } from '../src/config.ts';
import { main } from '../src/cli.ts';

describe('config', () => {
  it('starts on embedded defaults with an empty environment', () => {
    const cfg = loadConfig({});
    expect(cfg.PORT).toBe(8080);
    expect(cfg.CACHE_TTL_SECONDS).toBe(120);
    expect(cfg.BRAWLSTARS_API_TOKEN).toEqual([]);
    expect(usesSimulator(cfg)).toBe(true);
    expect(cacheUrl(cfg)).toMatch(/^sqlite:\/\/.*data\/cache\.sqlite$/);
    expect(cfg.RANKING_COUNTRIES).toContain('US');
  });

  it('reads the shards of this process as ids and ranges out of SHARD_COUNT', () => {
    expect(loadConfig({}).SHARD_IDS).toBeUndefined();
    expect(loadConfig({}).SHARD_COUNT).toBeUndefined();
    const cfg = loadConfig({ SHARD_COUNT: '16', SHARD_IDS: '8-11, 3,0,3' });
    expect(cfg.SHARD_COUNT).toBe(16);
    expect(cfg.SHARD_IDS).toEqual([0, 3, 8, 9, 10, 11]);
    expect(() => loadConfig({ SHARD_COUNT: '2', SHARD_IDS: '1-2' })).toThrow('SHARD_IDS="1-2": shard ids run from 0 to SHARD_COUNT-1 (1); got 2');
  });

  it.each(['BOARD_CHECK_SECONDS', 'FEED_CHECK_SECONDS', 'POLL_SCAN_SECONDS'] as const)('reads %s (how often bot processes look for due boards / unposted feed changes, workers at the poll schedule), in whole seconds from 1 to 3600', (name) => {
    expect(loadConfig({})[name]).toBe(60);
    expect(loadConfig({ [name]: '5' })[name]).toBe(5);
    for (const bad of ['0', '1.5', 'soon', '3601']) {
      expect(() => loadConfig({ [name]: bad })).toThrow(`${name}="${bad}": expected a whole number from 1 to 3600`);
    }
  });

  it.each(['RATE_LIMIT_FREE', 'RATE_LIMIT_KEY'] as const)('reads %s up to a billion a minute (a limit no load reaches, as benchmarks need), no further', (name) => {
    expect(loadConfig({ [name]: '1000000000' })[name]).toBe(1_000_000_000);
    for (const bad of ['0', '1000000001']) {
      expect(() => loadConfig({ [name]: bad })).toThrow(`${name}="${bad}": expected a whole number from 1 to 1000000000`);
    }
  });

  it('reads comma-separated tokens and a redis cache URL', () => {
    const cfg = loadConfig({ BRAWLSTARS_API_TOKEN: ' a.b.c , d.e.f ', CACHE_URL: 'redis://127.0.0.1:6379' });
    expect(cfg.BRAWLSTARS_API_TOKEN).toEqual(['a.b.c', 'd.e.f']);
    expect(usesSimulator(cfg)).toBe(false);
    expect(cacheUrl(cfg)).toBe('redis://127.0.0.1:6379');
  });

  it.each([
    ['PORT', 'eighty', /PORT="eighty": expected a whole number from 0 to 65535/],
    ['PORT', '70000', /PORT="70000": expected a whole number/],
    ['CACHE_TTL_SECONDS', '1.5', /CACHE_TTL_SECONDS="1.5": expected a whole number/],
    ['CACHE_URL', 'memcached://x', /CACHE_URL="memcached:\/\/x": expected a URL starting with sqlite:\/\/ or redis:\/\//],
    ['DATABASE_URL', 'redis://127.0.0.1:6379', /DATABASE_URL="redis:\/\/127.0.0.1:6379": expected a URL starting with postgres:\/\/ or postgresql:\/\//],
    ['DATABASE_URL', 'sqlite://./data/x.sqlite', /DATABASE_URL=.*expected a URL starting with postgres/],
    ['DATABASE_SCHEMA', 'Starr-Stats', /DATABASE_SCHEMA="Starr-Stats": expected a lower-case SQL identifier/],
    ['LOG_LEVEL', 'loud', /LOG_LEVEL="loud": expected one of fatal, error/],
    ['TRUST_PROXY', 'maybe', /TRUST_PROXY="maybe": expected true or false/],
    ['RANKING_COUNTRIES', 'US,USA', /RANKING_COUNTRIES="US,USA": expected comma-separated two-letter country codes/],
    ['DISCORD_PUBLIC_KEY', 'abc', /expected the application public key: 64 hex characters/],
    ['STARR_SECRET', 'short', /expected at least 16 characters/],
    ['SHARD_COUNT', '0', /SHARD_COUNT="0": expected a whole number from 1/],
    ['SHARD_IDS', 'one', /SHARD_IDS="one": expected shard ids like 0,1 or ranges like 0-3/],
    ['SHARD_IDS', '3-1', /the range 3-1 runs backwards/],
    ['SHARD_IDS', '0,1', /SHARD_IDS="0,1": set SHARD_COUNT too/],
  ])('rejects %s=%s with one message naming the variable and what it expects', (name, value, message) => {
    let caught: unknown;
    try {
      loadConfig({ [name]: value });
    } catch (e) {
      caught = e;
    }
    expect(caught).toBeInstanceOf(ConfigError);
    expect((caught as ConfigError).variable).toBe(name);
    expect((caught as Error).message).toMatch(message);
  });

  it('takes values from a .env file without overriding the environment', async () => {
    const { mkdtempSync, writeFileSync } = await import('node:fs');
    const { join } = await import('node:path');
    const { tmpdir } = await import('node:os');
    const dir = mkdtempSync(join(tmpdir(), 'starr-cfg-'));
    writeFileSync(join(dir, '.env'), 'PORT=9191\nSIM_PLAYERS=123\n');
    const cfg = loadConfig({ SIM_PLAYERS: '77' }, { envFile: join(dir, '.env') });
    expect(cfg.PORT).toBe(9191);
    expect(cfg.SIM_PLAYERS).toBe(77);
  });

  it('.env.example and the README list every setting', () => {
    expect(readFileSync('.env.example', 'utf8')).toBe(renderEnvExample());
    const readme = readFileSync('README.md', 'utf8');
    for (const name of Object.keys(settings)) expect(readme, `README mentions ${name}`).toContain(`\`${name}\``);
  });

  it('the CLI refuses to start with a bad setting, naming it, exit code 78', async () => {
    const err: string[] = [];
    const code = await main(['serve'], { out: () => {}, err: (s) => err.push(s), env: { PORT: 'x' }, cwd: process.cwd() });
    expect(code).toBe(78);
    expect(err.join('\n')).toContain('Invalid setting PORT="x"');
  });
});
