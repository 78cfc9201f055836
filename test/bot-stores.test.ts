/**
 * The bot's stores over real SQLite keyv files: the key vault, guild settings (keys sealed at
 * rest), links, and component state surviving a restart.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openKeyvStores, type KeyvStores } from '../src/store/keyv.ts';
import { ApiKeyStore } from '../src/store/apikeys.ts';
import { KeyVault, VaultOpenError, VaultUnavailableError } from '../src/bot/secrets.ts';
import { GuildSettingsStore } from '../src/bot/settings.ts';
import { LinkStore, MAX_LINKS, TooManyLinksError } from '../src/bot/links.ts';
import { ComponentStore } from '../src/bot/components.ts';

const dirs: string[] = [];
const opened: KeyvStores[] = [];

async function stores(dir = mkdtempSync(join(tmpdir(), 'starr-bot-stores-'))): Promise<{ dir: string; s: KeyvStores }> {
  dirs.push(dir);
  const s = await openKeyvStores(`sqlite://${join(dir, 'kv.sqlite')}`);
  opened.push(s);
  return { dir, s };
}

afterEach(async () => {
  await Promise.all(opened.splice(0).map((s) => s.close()));
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const SECRET = 'a-long-test-secret-value';

describe('key vault', () => {
  it('seals with AES-256-GCM bound to the guild and opens only there, under the same secret', () => {
    const v = new KeyVault(SECRET);
    const sealed = v.seal('starr_key', '111');
    expect(sealed).toMatch(/^v1\.[\w-]+\.[\w-]+\.[\w-]+$/);
    expect(sealed).not.toContain('starr_key');
    expect(v.open(sealed, '111')).toBe('starr_key');
    expect(v.seal('starr_key', '111')).not.toBe(sealed);
    expect(() => v.open(sealed, '222')).toThrow(VaultOpenError);
    expect(() => new KeyVault('another-secret-value').open(sealed, '111')).toThrow(VaultOpenError);
    const [a, b, c, d] = sealed.split('.') as [string, string, string, string];
    const flipped = (d[0] === 'A' ? 'B' : 'A') + d.slice(1);
    expect(() => v.open([a, b, c, flipped].join('.'), '111')).toThrow(VaultOpenError);
  });

  it('refuses to seal without a secret', () => {
    const v = new KeyVault(undefined);
    expect(v.available).toBe(false);
    expect(() => v.seal('starr_key', '1')).toThrow(VaultUnavailableError);
  });
});

describe('guild settings', () => {
  it('keeps the key sealed on disk, survives a restart, and reports the plan', async () => {
    const { dir, s } = await stores();
    const keys = ApiKeyStore.open(s, { scrypt: { N: 1024, r: 8, p: 1 } });
    const issued = await keys.issue({ email: 'admin@example.com', password: 'correct horse', ip: '127.0.0.1' });
    const info = (await keys.verify(issued.key))!;
    const settings = new GuildSettingsStore(s.namespace('guilds'), new KeyVault(SECRET), keys);
    await settings.setKey('900', issued.key, info, '42', 1000);
    await s.close();
    expect(readFileSync(join(dir, 'kv.sqlite')).includes(Buffer.from(issued.key))).toBe(false);

    const { s: again } = await stores(dir);
    const keys2 = ApiKeyStore.open(again);
    const reopened = new GuildSettingsStore(again.namespace('guilds'), new KeyVault(SECRET), keys2);
    const g = await reopened.get('900');
    expect(g.key).toMatchObject({ keyId: info.keyId, plan: 'developer', setBy: '42', setAt: 1000 });
    expect(await reopened.premium(g)).toEqual({ keyed: true, premium: true, plan: 'developer' });

    const wrongSecret = new GuildSettingsStore(again.namespace('guilds'), new KeyVault('not-the-same-secret'), keys2);
    expect(await wrongSecret.premium(await wrongSecret.get('900'))).toMatchObject({ keyed: false, reason: 'unreadable' });

    await keys2.revoke(issued.key);
    const fresh = new GuildSettingsStore(again.namespace('guilds'), new KeyVault(SECRET), ApiKeyStore.open(again));
    expect(await fresh.premium(await fresh.get('900'))).toMatchObject({ keyed: false, reason: 'revoked' });
    expect(await fresh.removeKey('900')).toBe(true);
    expect(await fresh.premium(await fresh.get('900'))).toMatchObject({ reason: 'no_key' });
  });

  it('serialises concurrent changes of one server and indexes servers with boards', async () => {
    const { s } = await stores();
    const settings = new GuildSettingsStore(s.namespace('guilds'), new KeyVault(SECRET), ApiKeyStore.open(s));
    await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        settings.update('7', (g) => {
          g.members.push(String(i));
        }),
      ),
    );
    expect((await settings.get('7')).members).toHaveLength(20);
    const board = { id: 'b1', channelId: '1', source: { kind: 'members' as const }, intervalMinutes: 30, createdBy: '1', createdAt: 0, locale: 'en-US', failures: 0, metric: 'trophies' as const };
    await settings.update('7', (g) => {
      g.boards.push(board);
    });
    await settings.update('8', (g) => {
      g.boards.push({ ...board, id: 'b2' });
    });
    expect((await settings.guildsWithBoards()).sort()).toEqual(['7', '8']);
    await settings.update('7', (g) => {
      g.boards = [];
    });
    expect(await settings.guildsWithBoards()).toEqual(['8']);
  });
});

describe('links', () => {
  it('keeps several accounts with one default, and caps them', async () => {
    const { s } = await stores();
    const links = new LinkStore(s.namespace('links'));
    await links.link('u', '#AAA', false);
    await links.link('u', '#BBB', false);
    expect(await links.defaultTag('u')).toBe('#AAA');
    await links.link('u', '#BBB', true);
    expect(await links.get('u')).toEqual({ tags: ['#AAA', '#BBB'], default: '#BBB' });
    expect(await links.unlink('u', '#BBB')).toEqual(['#BBB']);
    expect(await links.defaultTag('u')).toBe('#AAA');
    for (let i = 0; i < MAX_LINKS - 1; i++) await links.link('u', `#C${i}`, false);
    await expect(links.link('u', '#ZZZ', false)).rejects.toBeInstanceOf(TooManyLinksError);
    expect((await links.unlink('u')).length).toBe(MAX_LINKS);
    expect(await links.get('u')).toEqual({ tags: [] });
  });
});

describe('component state', () => {
  it('gives the same id to the same action and finds it after a restart', async () => {
    const { dir, s } = await stores();
    const action = { command: 'club', args: { tag: '#X', page: 2 } };
    const id = await new ComponentStore(s.namespace('components')).save([action]);
    expect(id).toMatch(/^s:[\w-]{22}$/);
    expect(await new ComponentStore(s.namespace('components')).save([action])).toBe(id);
    await s.close();
    const { s: again } = await stores(dir);
    const store = new ComponentStore(again.namespace('components'));
    expect(await store.load(id)).toEqual([action]);
    expect(await store.load(`${id}~2`)).toEqual([action]);
    expect(await store.load('s:unknown')).toBeUndefined();
    expect(await store.load('someone-else')).toBeUndefined();
  });

  it('forgets state after its time to live', async () => {
    // keyv dates expiry with Date.now: a faked Date passes the TTL without a real wait, so a busy
    // machine can neither expire the state early nor keep it past its time.
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      const { s } = await stores();
      let now = 1_000_000;
      const store = new ComponentStore(s.namespace('components'), () => now, 50);
      const id = await store.save([{ command: 'events', args: {} }]);
      vi.advanceTimersByTime(49);
      expect(await store.load(id)).toEqual([{ command: 'events', args: {} }]);
      now += 100;
      vi.advanceTimersByTime(51);
      expect(await store.load(id)).toBeUndefined();
    } finally {
      vi.useRealTimers();
    }
  });
});
