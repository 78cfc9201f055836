/**
 * Game accounts linked to Discord members, in keyv namespace 'links': a member may link several
 * accounts and picks one as the default that /player uses without a tag. Links belong to the
 * member, not to a server, so they follow them everywhere the bot is.
 *
 * Verified accounts live here too: `owner:<tag>` names the one member who proved the account is
 * theirs (by setting a profile icon the bot asked for), and nobody else may link that tag until
 * the owner unlinks it or an admin releases it; `challenge:<user>:<tag>` is a verification under
 * way. Both are durable: a restart never forgets who owns an account.
 */
import type Keyv from 'keyv';
import { z } from 'zod';
import { KeyedQueue } from './serial.ts';

export const MAX_LINKS = 10;

/**
 * The reason a linked account is pinned in the history store (`link:<member id>`): the poller keeps
 * it recorded, and automatic roles find through it whose account changed.
 */
export const LINK_PIN = 'link:';
export const linkPin = (userId: string): string => `${LINK_PIN}${userId}`;

const Linked = z.object({ tags: z.array(z.string()), default: z.string().optional() });
export type Linked = z.infer<typeof Linked>;

/** How long a member has to set the icon the bot asked for. */
export const CHALLENGE_MS = 10 * 60_000;

const Owner = z.object({ userId: z.string(), at: z.number() });
export type Owner = z.infer<typeof Owner>;

const Challenge = z.object({ icon: z.number().int(), issuedAt: z.number(), expiresAt: z.number() });
export type Challenge = z.infer<typeof Challenge>;

/** Another member verified this account: linking it is refused until an admin releases it. */
export class OwnedByOtherError extends Error {
  constructor(readonly tag: string) {
    super(`${tag} is verified by another member.`);
    this.name = 'OwnedByOtherError';
  }
}

export class TooManyLinksError extends Error {
  constructor() {
    super(`A member can link at most ${MAX_LINKS} accounts.`);
    this.name = 'TooManyLinksError';
  }
}

export class LinkStore {
  private readonly queue = new KeyedQueue();

  constructor(private readonly kv: Keyv) {}

  async get(userId: string): Promise<Linked> {
    const parsed = Linked.safeParse(await this.kv.get(`user:${userId}`));
    return parsed.success ? parsed.data : { tags: [] };
  }

  /** The tag /player uses for this member, if they linked one. */
  async defaultTag(userId: string): Promise<string | undefined> {
    const l = await this.get(userId);
    return l.default ?? l.tags[0];
  }

  /** The member who verified `tag`, if anyone did. */
  async owner(tag: string): Promise<Owner | undefined> {
    const parsed = Owner.safeParse(await this.kv.get(`owner:${tag}`));
    return parsed.success ? parsed.data : undefined;
  }

  /**
   * Whether `userId`'s link of `tag` counts where verification matters: an account verified by
   * someone counts only for them; an unverified one counts for whoever linked it, unless the
   * server requires verification.
   */
  async counts(userId: string, tag: string, required: boolean): Promise<boolean> {
    const owner = await this.owner(tag);
    return owner ? owner.userId === userId : !required;
  }

  async challenge(userId: string, tag: string): Promise<Challenge | undefined> {
    const parsed = Challenge.safeParse(await this.kv.get(`challenge:${userId}:${tag}`));
    return parsed.success ? parsed.data : undefined;
  }

  async setChallenge(userId: string, tag: string, c: Challenge): Promise<void> {
    // Kept a day past its end so that a late press can be told it expired, then dropped.
    await this.kv.set(`challenge:${userId}:${tag}`, c, CHALLENGE_MS + 24 * 3600_000);
  }

  /**
   * Records `userId` as the verified owner of `tag` and links it to them. Throws
   * OwnedByOtherError when another member verified it first, TooManyLinksError when they have
   * no room for it.
   */
  async verify(userId: string, tag: string, now: number): Promise<Linked> {
    return this.queue.run(`owner:${tag}`, async () => {
      const owner = await this.owner(tag);
      if (owner && owner.userId !== userId) throw new OwnedByOtherError(tag);
      const linked = await this.link(userId, tag, false);
      if (!owner) await this.kv.set(`owner:${tag}`, { userId, at: now } satisfies Owner);
      await this.kv.delete(`challenge:${userId}:${tag}`);
      return linked;
    });
  }

  /** Frees a verified account (an admin's decision): returns who owned it; their link is removed too. */
  async release(tag: string): Promise<Owner | undefined> {
    const owner = await this.queue.run(`owner:${tag}`, async () => {
      const o = await this.owner(tag);
      if (o) await this.kv.delete(`owner:${tag}`);
      return o;
    });
    if (owner) await this.unlink(owner.userId, tag);
    return owner;
  }

  private change(userId: string, fn: (l: Linked) => Linked): Promise<Linked> {
    return this.queue.run(userId, async () => {
      const next = fn(await this.get(userId));
      if (next.tags.length === 0) await this.kv.delete(`user:${userId}`);
      else await this.kv.set(`user:${userId}`, next);
      return next;
    });
  }

  /** Adds a tag (normalised, with `#`); `makeDefault` or a first link makes it the default. */
  async link(userId: string, tag: string, makeDefault: boolean): Promise<Linked> {
    const owner = await this.owner(tag);
    if (owner && owner.userId !== userId) throw new OwnedByOtherError(tag);
    return this.change(userId, (l) => {
      if (!l.tags.includes(tag)) {
        if (l.tags.length >= MAX_LINKS) throw new TooManyLinksError();
        l.tags.push(tag);
      }
      if (makeDefault || !l.default) l.default = tag;
      return l;
    });
  }

  /**
   * Removes one tag, or all of them without a tag. Returns the tags that were removed. An owner
   * unlinking a verified account gives it up: anyone may link and verify it again.
   */
  async unlink(userId: string, tag?: string): Promise<string[]> {
    let removed: string[] = [];
    await this.change(userId, (l) => {
      removed = tag ? l.tags.filter((t) => t === tag) : [...l.tags];
      l.tags = l.tags.filter((t) => !removed.includes(t));
      if (l.default && removed.includes(l.default)) l.default = l.tags[0];
      return l;
    });
    for (const t of removed) {
      await this.queue.run(`owner:${t}`, async () => {
        if ((await this.owner(t))?.userId === userId) await this.kv.delete(`owner:${t}`);
      });
    }
    return removed;
  }
}
