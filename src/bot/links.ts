/**
 * Game accounts linked to Discord members, in keyv namespace 'links': a member may link several
 * accounts and picks one as the default that /player uses without a tag. Links belong to the
 * member, not to a server, so they follow them everywhere the bot is.
 */
import type Keyv from 'keyv';
import { z } from 'zod';
import { KeyedQueue } from './serial.ts';

export const MAX_LINKS = 10;

const Linked = z.object({ tags: z.array(z.string()), default: z.string().optional() });
export type Linked = z.infer<typeof Linked>;

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
    return this.change(userId, (l) => {
      if (!l.tags.includes(tag)) {
        if (l.tags.length >= MAX_LINKS) throw new TooManyLinksError();
        l.tags.push(tag);
      }
      if (makeDefault || !l.default) l.default = tag;
      return l;
    });
  }

  /** Removes one tag, or all of them without a tag. Returns the tags that were removed. */
  async unlink(userId: string, tag?: string): Promise<string[]> {
    let removed: string[] = [];
    await this.change(userId, (l) => {
      removed = tag ? l.tags.filter((t) => t === tag) : [...l.tags];
      l.tags = l.tags.filter((t) => !removed.includes(t));
      if (l.default && removed.includes(l.default)) l.default = l.tags[0];
      return l;
    });
    return removed;
  }
}
