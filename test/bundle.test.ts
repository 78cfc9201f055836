/**
 * `starr` runs the esbuild bundle of bin/build.js, not the TypeScript sources: each test works in a
 * copy of the project (its sources, bin/, the lock file; node_modules linked), runs bin/starr.js as
 * a process and looks at what it printed and what it left in .build/.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { World } from '../src/sim/world.ts';

const ROOT = join(import.meta.dirname, '..');
const copies: string[] = [];

afterAll(() => {
  for (const dir of copies) rmSync(dir, { recursive: true, force: true });
});

/** A copy of the project; node_modules linked whole, or package by package without `leaveOut`. */
function project(leaveOut?: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'starr-bundle-'));
  copies.push(dir);
  for (const part of ['src', 'commands', 'bin', 'package.json', 'package-lock.json', 'tsconfig.json']) cpSync(join(ROOT, part), join(dir, part), { recursive: true });
  if (leaveOut === undefined) symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'));
  else {
    mkdirSync(join(dir, 'node_modules'));
    for (const name of readdirSync(join(ROOT, 'node_modules'))) {
      if (name !== leaveOut) symlinkSync(join(ROOT, 'node_modules', name), join(dir, 'node_modules', name));
    }
  }
  return dir;
}

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function starr(dir: string, args: string[], env: Record<string, string> = {}): Promise<Run> {
  const child = spawn(process.execPath, ['bin/starr.js', ...args], {
    cwd: dir,
    env: { PATH: process.env.PATH ?? '', DATA_DIR: join(dir, 'data'), LOG_LEVEL: 'silent', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** The finished builds in a copy's .build/ (temporaries would start with tmp-). */
function builds(dir: string): string[] {
  return existsSync(join(dir, '.build')) ? readdirSync(join(dir, '.build')).sort() : [];
}

describe('bin/starr.js', () => {
  it('builds once, runs from the build, and rebuilds when a source changes; stack traces name src/', { timeout: 180_000 }, async () => {
    const dir = project();
    const first = await starr(dir, ['--help']);
    expect(first.stderr).toBe('');
    expect(first.code).toBe(0);
    expect(first.stdout).toContain('Usage: starr <command>');
    const built = builds(dir);
    expect(built).toHaveLength(1);
    expect(existsSync(join(dir, '.build', built[0]!, 'cli.js'))).toBe(true);

    expect((await starr(dir, ['--help'])).code).toBe(0);
    expect(builds(dir)).toEqual(built);

    const cli = join(dir, 'src', 'cli.ts');
    const source = readFileSync(cli, 'utf8');
    expect(source).toContain('Starr Stats: Brawl Stars statistics service');
    writeFileSync(
      cli,
      `${source.replace('Starr Stats: Brawl Stars statistics service', 'Starr Stats (edited copy)')}\nif (process.env.THROW_AT_START) throw new Error('thrown at start');\n`,
    );
    const edited = await starr(dir, ['--help']);
    expect(edited.code).toBe(0);
    expect(edited.stdout).toContain('Starr Stats (edited copy)');
    expect(builds(dir)).toHaveLength(2);

    const thrown = await starr(dir, ['--help'], { THROW_AT_START: '1' });
    expect(thrown.code).not.toBe(0);
    expect(thrown.stderr).toContain('thrown at start');
    expect(thrown.stderr).toMatch(/src\/cli\.ts:\d+:\d+/);
    expect(thrown.stderr).not.toMatch(/\.build\/\w+\/cli\.js/);
  });

  it('two processes starting at once share one build, and load the bot commands from it', { timeout: 180_000 }, async () => {
    const dir = project();
    const runs = await Promise.all([starr(dir, ['deploy-commands', '--dry-run']), starr(dir, ['deploy-commands', '--dry-run'])]);
    const commands = readdirSync(join(ROOT, 'commands')).filter((f) => f.endsWith('.ts'));
    for (const run of runs) {
      expect(run.stderr).toBe('');
      expect(run.code).toBe(0);
      expect(run.stdout).toMatch(new RegExp(`^${commands.length} commands follow Discord's rules: /about`));
    }
    const built = builds(dir);
    expect(built).toHaveLength(1);
    expect(readdirSync(join(dir, '.build', built[0]!, 'commands')).filter((f) => f.endsWith('.js'))).toHaveLength(commands.length);
  });

  it('renders a picture through the built render worker', { timeout: 180_000 }, async () => {
    const dir = project();
    // the worker's tsx entry is gone: a picture can only come from the built one
    rmSync(join(dir, 'src', 'render', 'worker.mjs'));
    const tag = new World({ seed: 'bundle', players: 60, clubs: 6 }).playerTag(3);
    const run = await starr(dir, ['try', `/player tag:${tag}`, '--out', 'shots'], { SIM_SEED: 'bundle', SIM_PLAYERS: '60', SIM_CLUBS: '6' });
    expect(run.stderr).toBe('(simulated game world: no BRAWLSTARS_API_TOKEN is set)\n');
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/Attachments:\n {2}shots\/player\.png \(\d+ KB\)/);
    expect(readFileSync(join(dir, 'shots', 'player.png')).subarray(1, 4).toString()).toBe('PNG');
  });

  it('runs the sources through tsx with one warning when it cannot build, and on STARR_TSX=1', { timeout: 180_000 }, async () => {
    const noEsbuild = project('esbuild');
    const fallback = await starr(noEsbuild, ['--help']);
    expect(fallback.code).toBe(0);
    expect(fallback.stdout).toContain('Usage: starr <command>');
    expect(fallback.stderr.trim().split('\n')).toEqual([expect.stringMatching(/^starr: cannot build the bundle \(.*esbuild.*\); running the sources through tsx$/)]);
    expect(builds(noEsbuild)).toEqual([]);

    const dir = project();
    const forced = await starr(dir, ['deploy-commands', '--dry-run'], { STARR_TSX: '1' });
    expect(forced.stderr).toBe('');
    expect(forced.code).toBe(0);
    expect(forced.stdout).toMatch(/^\d+ commands follow Discord's rules: \/about/);
    expect(builds(dir)).toEqual([]);
  });
});
