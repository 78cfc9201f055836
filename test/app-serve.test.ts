/**
 * The newcomer's first command: `npm start` (= `starr serve`) on embedded defaults, as a real
 * process. It must say it uses the simulated world, answer on its port and stop cleanly on SIGTERM.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const dir = mkdtempSync(join(tmpdir(), 'starr-serve-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('starr serve', () => {
  it('starts on defaults against the simulated world, serves the API and stops on SIGTERM', async () => {
    const child = spawn(process.execPath, ['bin/starr.js', 'serve'], {
      env: { PATH: process.env.PATH ?? '', DATA_DIR: dir, PORT: '0', HOST: '127.0.0.1', SIM_PLAYERS: '300', SIM_CLUBS: '30' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    // The address is read from the log as it arrives (no polling): start-up takes what it takes.
    const url = await new Promise<string>((resolve, reject) => {
      const read = (c: Buffer) => {
        out += c.toString();
        const m = /listening on (http:\/\/\S+?) \(/.exec(out);
        if (m) resolve(m[1]!);
      };
      child.stdout.on('data', read);
      child.stderr.on('data', read);
      child.on('exit', (code) => reject(new Error(`exited with ${code} before listening:\n${out}`)));
    });
    expect(out).toContain('No BRAWLSTARS_API_TOKEN set: using the simulated game world');

    const health = (await (await fetch(`${url}/healthz`)).json()) as Record<string, unknown>;
    expect(health).toMatchObject({ status: 'ok', upstream: 'simulated', cacheStore: 'sqlite' });
    const ready = await fetch(`${url}/readyz`);
    expect(ready.status).toBe(200);
    const ranking = (await (await fetch(`${url}/rankings/global/players?limit=3`)).json()) as { region: string; items: { rank: number }[] };
    expect(ranking.region).toBe('global');
    expect(ranking.items).toHaveLength(3);
    expect(ranking.items.map((i: { rank: number }) => i.rank)).toEqual([1, 2, 3]);

    const code = await new Promise<number | null>((resolve) => {
      child.on('exit', (c) => resolve(c));
      child.kill('SIGTERM');
    });
    expect(code).toBe(0);
    expect(out).toContain('shutting down');
  });
});
