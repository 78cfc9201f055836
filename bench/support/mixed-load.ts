/**
 * bench:memory's mixed load, shared with bench:heap (`--load`): `clients` clients asking, one
 * request after another, for players drawn from a Zipf distribution (s = 1) over `tags` tags of the
 * simulated world `npm start` runs by default (SIM_SEED starr, 5,000 players, 500 clubs): 95 % JSON
 * (profile 70 %, battle log 25 %), 5 % pictures (the profile card, or brawler grids 4/8/9). The
 * sequence of paths is deterministic, so runs compare.
 */
import { Agent, request } from 'undici';
import { World } from '../../src/sim/world.ts';

export interface MixedLoad {
  /** requests answered (or failed) so far */
  readonly done: number;
  /** how many answers of each status (0: the request failed) */
  readonly statuses: Map<number, number>;
  /** asks the clients to stop after their current request, and waits for them and the connections */
  stop(): Promise<void>;
}

export function mixedLoad(base: string, opts: { clients: number; tags: number }): MixedLoad {
  const { clients, tags: tagCount } = opts;
  if (!(Number.isInteger(clients) && clients > 0)) throw new Error(`clients must be a positive whole number, not ${clients}`);
  if (!(Number.isInteger(tagCount) && tagCount > 0 && tagCount <= 5000)) throw new Error(`tags must be a whole number from 1 to 5,000, not ${tagCount}`);
  const world = new World({ seed: 'starr', players: 5000, clubs: 500 });
  const tags = Array.from({ length: tagCount }, (_, i) => encodeURIComponent(world.playerTag(i)));
  const cdf: number[] = [];
  let total = 0;
  for (let i = 1; i <= tagCount; i++) cdf.push((total += 1 / i));
  let seed = 42;
  const random = () => ((seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31);
  function zipfTag(): string {
    const u = random() * total;
    let lo = 0;
    let hi = cdf.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (cdf[mid]! < u) lo = mid + 1;
      else hi = mid;
    }
    return tags[lo]!;
  }
  function nextPath(): string {
    const tag = zipfTag();
    const r = random();
    if (r < 0.05) {
      const option = [1, 1, 4, 8, 9][Math.floor(random() * 5)]!;
      return `/players/${tag}/image?option=${option}`;
    }
    return r < 0.3 ? `/players/${tag}/battlelog` : `/players/${tag}`;
  }

  const dispatcher = new Agent({ connections: clients, pipelining: 1 });
  const statuses = new Map<number, number>();
  let done = 0;
  let stopping = false;
  async function client(): Promise<void> {
    while (!stopping) {
      try {
        const r = await request(`${base}${nextPath()}`, { dispatcher });
        await r.body.dump();
        statuses.set(r.statusCode, (statuses.get(r.statusCode) ?? 0) + 1);
      } catch {
        statuses.set(0, (statuses.get(0) ?? 0) + 1);
      }
      done++;
    }
  }
  const loops = Array.from({ length: clients }, () => client());
  return {
    get done() {
      return done;
    },
    statuses,
    async stop() {
      stopping = true;
      await Promise.all(loops);
      await dispatcher.close();
    },
  };
}
