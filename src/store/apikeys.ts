/**
 * API keys and the accounts that own them, in keyv namespace 'apikeys'.
 *
 * - An account is owned by an email plus a scrypt password hash (POST /generate-api-keys) or by a
 *   Discord user (`/settings apikey create`, no password: Discord vouches for the user), and has a
 *   plan. Asking for a key with a new email creates the account; asking again with the right
 *   password issues another key. The two kinds cannot share an account: an email account's id
 *   always contains an `@`, a Discord account's id is `discord:` and a snowflake.
 * - A key is 32 random bytes shown once. Only its SHA-256 is stored: a high-entropy key needs no
 *   slow hash, and the digest doubles as the lookup index. Comparisons are constant-time.
 * - Plans say what a key may do. The HTTP API and the Discord bot (server keys) both ask `verify`.
 */
import { createHash, randomBytes, scrypt as scryptCb, timingSafeEqual, type ScryptOptions } from 'node:crypto';
import { Lru } from '../lib/lru.ts';
import type { Keyv, KeyvStores } from './keyv.ts';

export type PlanName = 'developer' | 'basic';

export interface Plan {
  name: PlanName;
  /** may call premium endpoints (history, logs, push, best builds) */
  premium: boolean;
  description: string;
}

export const PLANS: Readonly<Record<PlanName, Plan>> = {
  developer: { name: 'developer', premium: true, description: 'Every endpoint, premium ones included, at the key rate limit.' },
  basic: { name: 'basic', premium: false, description: 'Public endpoints at the key rate limit; premium endpoints answer 403.' },
};

/** The plan a new account gets. */
export const DEFAULT_PLAN: PlanName = 'developer';

/** Who owns an account. */
export type AccountOwner = { kind: 'email'; email: string } | { kind: 'discord'; userId: string };

export interface ApiKeyInfo {
  /** first 12 hex digits of the key's SHA-256: safe to log, names the key in rate limits */
  keyId: string;
  owner: AccountOwner;
  plan: Plan;
  createdAt: number;
}

export interface IssuedKey {
  /** the key itself, shown once and never stored */
  key: string;
  keyId: string;
  owner: AccountOwner;
  plan: Plan;
  /** true when this request created the account */
  accountCreated: boolean;
  createdAt: number;
}

export class WrongPasswordError extends Error {
  constructor() {
    super('Wrong password for this email.');
    this.name = 'WrongPasswordError';
  }
}

interface AccountRecord {
  /** email accounts: the address as first given, and the password hash */
  email?: string;
  password?: string;
  /** Discord accounts: the user's snowflake */
  discordUserId?: string;
  plan: PlanName;
  createdAt: number;
  /** SHA-256 hex of every key issued to this account */
  keys: string[];
  /** the IP address given when the account was created or the last key was issued (HTTP only) */
  ip?: string;
}

interface KeyRecord {
  hash: string;
  account: string;
  createdAt: number;
  ip?: string;
  /** for keys issued in Discord: the server it was issued for */
  guildId?: string;
}

export interface ScryptParams {
  N: number;
  r: number;
  p: number;
}

export interface ApiKeyStoreOptions {
  /** scrypt cost of new password hashes; default N=2^15, r=8, p=1 (about 32 MiB, tens of ms) */
  scrypt?: ScryptParams;
  /** how long a verified key is remembered in memory, default 60 s (revocation takes that long) */
  cacheMs?: number;
  now?: () => number;
}

const KEY_PREFIX = 'starr_';
const KEY_BYTES = 32;
const SALT_BYTES = 16;
const HASH_BYTES = 32;

function scrypt(password: string, salt: Buffer, p: ScryptParams): Promise<Buffer> {
  const opts: ScryptOptions = { N: p.N, r: p.r, p: p.p, maxmem: 256 * p.N * p.r + 1024 * 1024 };
  return new Promise((resolve, reject) =>
    scryptCb(password.normalize('NFC'), salt, HASH_BYTES, opts, (err, key) => (err ? reject(err) : resolve(key))),
  );
}

/** `scrypt$N$r$p$salt$hash` (base64url), so the cost can rise later without breaking old hashes. */
export async function hashPassword(password: string, params: ScryptParams): Promise<string> {
  const salt = randomBytes(SALT_BYTES);
  const hash = await scrypt(password, salt, params);
  return ['scrypt', params.N, params.r, params.p, salt.toString('base64url'), hash.toString('base64url')].join('$');
}

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [scheme, N, r, p, salt, hash] = stored.split('$');
  if (scheme !== 'scrypt' || !salt || !hash) return false;
  const expected = Buffer.from(hash, 'base64url');
  const actual = await scrypt(password, Buffer.from(salt, 'base64url'), { N: Number(N), r: Number(r), p: Number(p) });
  return actual.length === expected.length && timingSafeEqual(actual, expected);
}

export const hashKey = (key: string): string => createHash('sha256').update(key, 'utf8').digest('hex');

/** Emails are compared without regard to case (as every mail provider treats them in practice). */
export const accountId = (email: string): string => email.trim().toLowerCase();

const SNOWFLAKE = /^\d{17,20}$/;

/** A Discord user's account id: never an email's, which always contains an `@`. */
export const discordAccountId = (userId: string): string => `discord:${userId}`;

function ownerOf(account: AccountRecord): AccountOwner {
  return account.discordUserId !== undefined ? { kind: 'discord', userId: account.discordUserId } : { kind: 'email', email: account.email ?? '' };
}

/** A key's shape, checked before any store lookup. */
export function looksLikeKey(key: string): boolean {
  return key.startsWith(KEY_PREFIX) && /^[A-Za-z0-9_-]{43}$/.test(key.slice(KEY_PREFIX.length));
}

export class ApiKeyStore {
  private readonly scryptParams: ScryptParams;
  private readonly cacheMs: number;
  private readonly now: () => number;
  private readonly cache = new Lru<string, { info: ApiKeyInfo | null; until: number }>(10_000);
  private readonly locks = new Map<string, Promise<unknown>>();

  constructor(
    private readonly kv: Keyv,
    opts: ApiKeyStoreOptions = {},
  ) {
    this.scryptParams = opts.scrypt ?? { N: 2 ** 15, r: 8, p: 1 };
    this.cacheMs = opts.cacheMs ?? 60_000;
    this.now = opts.now ?? Date.now;
  }

  static open(stores: KeyvStores, opts: ApiKeyStoreOptions = {}): ApiKeyStore {
    return new ApiKeyStore(stores.namespace('apikeys'), opts);
  }

  /** Runs `fn` alone for this account, so two first requests cannot create it twice. */
  private async exclusive<T>(account: string, fn: () => Promise<T>): Promise<T> {
    const before = this.locks.get(account) ?? Promise.resolve();
    const run = before.then(fn, fn);
    const tail = run.catch(() => undefined);
    this.locks.set(account, tail);
    try {
      return await run;
    } finally {
      if (this.locks.get(account) === tail) this.locks.delete(account);
    }
  }

  /**
   * Issues a new key. Creates the account on first use of the email; for a known email the
   * password must match (WrongPasswordError otherwise). Validating the email, IP and password
   * format is the caller's job (the HTTP API answers 422 before coming here).
   */
  async issue(req: { email: string; password: string; ip: string }): Promise<IssuedKey & { email: string }> {
    const id = accountId(req.email);
    if (!id.includes('@')) throw new Error('Not an email address');
    return this.exclusive(id, async () => {
      const now = this.now();
      let account = (await this.kv.get(`account:${id}`)) as AccountRecord | undefined;
      const accountCreated = !account;
      if (account) {
        if (account.password === undefined || !(await verifyPassword(req.password, account.password))) throw new WrongPasswordError();
      } else {
        account = {
          email: req.email.trim(),
          password: await hashPassword(req.password, this.scryptParams),
          plan: DEFAULT_PLAN,
          createdAt: now,
          keys: [],
          ip: req.ip,
        };
      }
      const issued = await this.addKey(id, { ...account, ip: req.ip }, accountCreated, { ip: req.ip });
      return { ...issued, email: account.email ?? req.email.trim() };
    });
  }

  /**
   * Issues a new key to a Discord user (a server admin running `/settings apikey create`),
   * creating the user's account on first use. Discord has already said who the user is, so
   * there is no password; the HTTP API cannot reach this account, since its ids are emails.
   */
  async issueForDiscordUser(req: { userId: string; guildId: string }): Promise<IssuedKey> {
    if (!SNOWFLAKE.test(req.userId)) throw new Error(`Not a Discord user id: ${req.userId}`);
    const id = discordAccountId(req.userId);
    return this.exclusive(id, async () => {
      const existing = (await this.kv.get(`account:${id}`)) as AccountRecord | undefined;
      const account: AccountRecord = existing ?? { discordUserId: req.userId, plan: DEFAULT_PLAN, createdAt: this.now(), keys: [] };
      return this.addKey(id, account, !existing, { guildId: req.guildId });
    });
  }

  /** Stores a new key for the account (inside `exclusive`) and returns it. */
  private async addKey(id: string, account: AccountRecord, accountCreated: boolean, origin: { ip?: string; guildId?: string }): Promise<IssuedKey> {
    const now = this.now();
    const key = KEY_PREFIX + randomBytes(KEY_BYTES).toString('base64url');
    const hash = hashKey(key);
    const record: KeyRecord = { hash, account: id, createdAt: now, ...origin };
    // The key record first: an account never lists a key that cannot be found.
    await this.kv.set(`key:${hash}`, record);
    await this.kv.set(`account:${id}`, { ...account, keys: [...account.keys, hash] });
    const plan = PLANS[account.plan] ?? PLANS[DEFAULT_PLAN];
    return { key, keyId: hash.slice(0, 12), owner: ownerOf(account), plan, accountCreated, createdAt: now };
  }

  /** The key's owner and plan, or null for an unknown, revoked or malformed key. */
  async verify(key: string): Promise<ApiKeyInfo | null> {
    if (!looksLikeKey(key)) return null;
    const hash = hashKey(key);
    const now = this.now();
    const cached = this.cache.get(hash);
    if (cached && cached.until > now) return cached.info;
    const info = await this.lookup(hash);
    this.cache.set(hash, { info, until: now + this.cacheMs });
    return info;
  }

  private async lookup(hash: string): Promise<ApiKeyInfo | null> {
    const record = (await this.kv.get(`key:${hash}`)) as KeyRecord | undefined;
    if (!record || !timingSafeEqual(Buffer.from(record.hash, 'hex'), Buffer.from(hash, 'hex'))) return null;
    const account = (await this.kv.get(`account:${record.account}`)) as AccountRecord | undefined;
    if (!account || !account.keys.includes(hash)) return null;
    return {
      keyId: hash.slice(0, 12),
      owner: ownerOf(account),
      plan: PLANS[account.plan] ?? PLANS[DEFAULT_PLAN],
      createdAt: record.createdAt,
    };
  }

  /** The plan of a key, or null when the key is not valid. */
  async planOf(key: string): Promise<Plan | null> {
    return (await this.verify(key))?.plan ?? null;
  }

  /** Moves an account to another plan (operators). False when the email has no account. */
  async setPlan(email: string, plan: PlanName): Promise<boolean> {
    const id = accountId(email);
    return this.exclusive(id, async () => {
      const account = (await this.kv.get(`account:${id}`)) as AccountRecord | undefined;
      if (!account) return false;
      await this.kv.set(`account:${id}`, { ...account, plan });
      this.cache.clear();
      return true;
    });
  }

  /** Revokes one key. False when it was not a valid key. */
  async revoke(key: string): Promise<boolean> {
    if (!looksLikeKey(key)) return false;
    const hash = hashKey(key);
    const record = (await this.kv.get(`key:${hash}`)) as KeyRecord | undefined;
    if (!record) return false;
    await this.exclusive(record.account, async () => {
      const account = (await this.kv.get(`account:${record.account}`)) as AccountRecord | undefined;
      if (account) await this.kv.set(`account:${record.account}`, { ...account, keys: account.keys.filter((k) => k !== hash) });
      await this.kv.delete(`key:${hash}`);
    });
    this.cache.delete(hash);
    return true;
  }
}
