/**
 * Component state: the action behind a button or select menu, kept in keyv under a short id that
 * becomes the component's custom_id. Ids are derived from the content, so re-rendering the same
 * view gives the same ids and writes nothing new; state survives restarts and is shared by every
 * process that uses the same store.
 */
import { createHash } from 'node:crypto';
import type Keyv from 'keyv';
import { z } from 'zod';
import type { ViewAction } from './view.ts';

const PREFIX = 's:';
/** Components of a message stay usable this long after it was last rendered. */
export const COMPONENT_TTL_MS = 90 * 24 * 3600_000;

const Scalar = z.union([z.string(), z.number(), z.boolean()]);
const Stored = z.array(
  z.object({ command: z.string(), args: z.record(z.string(), Scalar) }),
);

export class ComponentStore {
  /** ids written recently by this process: saves a store round trip when a view is shown again */
  private readonly recent = new Map<string, number>();

  constructor(
    private readonly kv: Keyv,
    private readonly now: () => number = Date.now,
    private readonly ttlMs = COMPONENT_TTL_MS,
  ) {}

  static isOurs(customId: string): boolean {
    return customId.startsWith(PREFIX);
  }

  /** Stores the actions of one component (one for a button, one per option for a select). */
  async save(actions: ViewAction[]): Promise<string> {
    const json = JSON.stringify(actions);
    const id = PREFIX + createHash('sha256').update(json).digest('base64url').slice(0, 22);
    const t = this.now();
    const last = this.recent.get(id);
    // Rewrite at most daily: that refreshes the TTL of components that are still in use.
    if (last === undefined || t - last > 24 * 3600_000) {
      await this.kv.set(id, json, this.ttlMs);
      this.recent.set(id, t);
      if (this.recent.size > 10_000) this.recent.delete(this.recent.keys().next().value!);
    }
    return id;
  }

  /** The actions behind a custom id; undefined when it expired or was never ours. */
  async load(customId: string): Promise<ViewAction[] | undefined> {
    if (!ComponentStore.isOurs(customId)) return undefined;
    const raw = await this.kv.get<string>(customId.replace(/~\d+$/, ''));
    if (typeof raw !== 'string') return undefined;
    try {
      const parsed = Stored.safeParse(JSON.parse(raw));
      return parsed.success ? parsed.data : undefined;
    } catch {
      return undefined;
    }
  }
}
