/** ApiKeyStore (src/store/apikeys.ts) over a real SQLite keyv store. */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ApiKeyStore, hashPassword, verifyPassword, WrongPasswordError } from '../src/store/apikeys.ts';
import { openKeyvStores, type KeyvStores } from '../src/store/keyv.ts';

const FAST = { N: 1024, r: 8, p: 1 };

describe('ApiKeyStore', () => {
  let dir: string;
  let stores: KeyvStores;
  let keys: ApiKeyStore;

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'starr-keys-'));
    stores = await openKeyvStores(`sqlite://${join(dir, 'cache.sqlite')}`);
    keys = ApiKeyStore.open(stores, { scrypt: FAST });
  });
  afterEach(async () => {
    await stores.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('creates the account on first use and issues a key that verifies', async () => {
    const issued = await keys.issue({ email: 'dev@example.com', password: 'correct horse', ip: '203.0.113.7' });
    expect(issued.accountCreated).toBe(true);
    expect(issued.key).toMatch(/^starr_[A-Za-z0-9_-]{43}$/);
    expect(issued.plan.name).toBe('developer');
    const info = await keys.verify(issued.key);
    expect(info).toMatchObject({ owner: { kind: 'email', email: 'dev@example.com' }, keyId: issued.keyId, plan: { name: 'developer', premium: true } });
  });

  it('issues another key for a known email with the right password, refuses a wrong one', async () => {
    const first = await keys.issue({ email: 'dev@example.com', password: 'correct horse', ip: '203.0.113.7' });
    const second = await keys.issue({ email: 'DEV@example.com', password: 'correct horse', ip: '198.51.100.1' });
    expect(second.accountCreated).toBe(false);
    expect(second.key).not.toBe(first.key);
    expect(await keys.verify(first.key)).not.toBeNull();
    expect(await keys.verify(second.key)).not.toBeNull();
    await expect(keys.issue({ email: 'dev@example.com', password: 'wrong horse', ip: '203.0.113.7' })).rejects.toBeInstanceOf(
      WrongPasswordError,
    );
  });

  it('issues keys to a Discord user on an account no email can reach', async () => {
    const user = '123456789012345678';
    const first = await keys.issueForDiscordUser({ userId: user, guildId: '223456789012345678' });
    const second = await keys.issueForDiscordUser({ userId: user, guildId: '323456789012345678' });
    expect([first.accountCreated, second.accountCreated]).toEqual([true, false]);
    expect(await keys.verify(first.key)).toMatchObject({ owner: { kind: 'discord', userId: user }, plan: { name: 'developer' } });
    expect(await keys.verify(second.key)).toMatchObject({ owner: { kind: 'discord', userId: user } });
    // An email that spells the Discord account's id is another account, and needs an @ anyway.
    await expect(keys.issue({ email: `discord:${user}`, password: 'password1', ip: '203.0.113.7' })).rejects.toThrow('Not an email address');
    const lookalike = await keys.issue({ email: `discord:${user}@example.com`, password: 'password1', ip: '203.0.113.7' });
    expect(lookalike.accountCreated).toBe(true);
    expect(await keys.verify(lookalike.key)).toMatchObject({ owner: { kind: 'email', email: `discord:${user}@example.com` } });
    await expect(keys.issueForDiscordUser({ userId: 'someone', guildId: '1' })).rejects.toThrow('Not a Discord user id');
  });

  it('knows nothing of unknown, malformed or tampered keys', async () => {
    const { key } = await keys.issue({ email: 'dev@example.com', password: 'correct horse', ip: '203.0.113.7' });
    expect(await keys.verify('')).toBeNull();
    expect(await keys.verify('not a key')).toBeNull();
    expect(await keys.verify(`${key.slice(0, -1)}${key.endsWith('A') ? 'B' : 'A'}`)).toBeNull();
    expect(await keys.verify(`starr_${'x'.repeat(43)}`)).toBeNull();
  });

  it('creates one account when two first requests race', async () => {
    const [a, b] = await Promise.all([
      keys.issue({ email: 'race@example.com', password: 'password1', ip: '203.0.113.7' }),
      keys.issue({ email: 'race@example.com', password: 'password1', ip: '203.0.113.7' }),
    ]);
    expect([a.accountCreated, b.accountCreated].sort()).toEqual([false, true]);
    expect(await keys.verify(a.key)).not.toBeNull();
    expect(await keys.verify(b.key)).not.toBeNull();
  });

  it('changes plans and revokes keys', async () => {
    const { key } = await keys.issue({ email: 'dev@example.com', password: 'correct horse', ip: '203.0.113.7' });
    expect(await keys.setPlan('dev@example.com', 'basic')).toBe(true);
    expect((await keys.planOf(key))?.premium).toBe(false);
    expect(await keys.setPlan('nobody@example.com', 'basic')).toBe(false);
    expect(await keys.revoke(key)).toBe(true);
    expect(await keys.verify(key)).toBeNull();
    expect(await keys.revoke(key)).toBe(false);
  });

  it('keeps keys across a restart and never stores a key or a password in clear', async () => {
    const password = 'a very particular password';
    const { key } = await keys.issue({ email: 'dev@example.com', password, ip: '203.0.113.7' });
    await stores.close();
    for (const f of readdirSync(dir)) {
      const bytes = readFileSync(join(dir, f)).toString('latin1');
      expect(bytes.includes(key.slice(6))).toBe(false);
      expect(bytes.includes(password)).toBe(false);
    }
    stores = await openKeyvStores(`sqlite://${join(dir, 'cache.sqlite')}`);
    const reopened = ApiKeyStore.open(stores, { scrypt: FAST });
    expect(await reopened.verify(key)).toMatchObject({ owner: { kind: 'email', email: 'dev@example.com' } });
  });
});

describe('password hashes', () => {
  it('are salted scrypt with their cost recorded, and verify only the right password', async () => {
    const a = await hashPassword('hunter22', FAST);
    const b = await hashPassword('hunter22', FAST);
    expect(a).toMatch(/^scrypt\$1024\$8\$1\$[\w-]+\$[\w-]+$/);
    expect(a).not.toBe(b);
    expect(await verifyPassword('hunter22', a)).toBe(true);
    expect(await verifyPassword('hunter23', a)).toBe(false);
    expect(await verifyPassword('hunter22', 'md5$whatever')).toBe(false);
  });

  it('use a default cost of N=2^15', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'starr-keys-'));
    const stores = await openKeyvStores(`sqlite://${join(dir, 'cache.sqlite')}`);
    try {
      const kv = stores.namespace('apikeys');
      await new ApiKeyStore(kv).issue({ email: 'cost@example.com', password: 'password1', ip: '::1' });
      const account = (await kv.get('account:cost@example.com')) as { password: string };
      expect(account.password.startsWith('scrypt$32768$8$1$')).toBe(true);
    } finally {
      await stores.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
