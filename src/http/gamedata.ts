/**
 * The CSV game-data files of GET /game: brawlers, star powers, gadgets, gears, hypercharges and
 * game modes, built from the official catalogue (/brawlers and /gamemodes through the core).
 * Files are rebuilt only when the catalogue changes (keyed by a hash of it); the time a version
 * was first seen is kept in keyv namespace 'gamedata', so `updatedAt` survives restarts.
 */
import { createHash } from 'node:crypto';
import type { Fetched, UpstreamReads } from '../core/types.ts';
import type { Keyv } from '../store/keyv.ts';
import type { Brawler, BrawlerList, GameModeList } from '../upstream/schemas.ts';

type Cell = string | number | null | undefined;

/** RFC 4180: CRLF line ends, fields quoted when they hold a comma, quote or line break. */
export function toCsv(header: string[], rows: Cell[][]): string {
  const cell = (v: Cell) => {
    const s = v === null || v === undefined ? '' : String(v);
    return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
  };
  return [header, ...rows].map((r) => r.map(cell).join(',')).join('\r\n') + '\r\n';
}

interface FileDef {
  name: string;
  description: string;
  header: string[];
  rows(brawlers: Brawler[], modes: GameModeList['items']): Cell[][];
}

const perBrawler =
  (pick: (b: Brawler) => { id: number; name: string }[] | undefined) =>
  (brawlers: Brawler[]): Cell[][] =>
    brawlers.flatMap((b) => (pick(b) ?? []).map((x) => [x.id, x.name, b.id, b.name]));

export const GAME_FILES: readonly FileDef[] = [
  {
    name: 'brawlers.csv',
    description: 'Every brawler with the number of star powers, gadgets, hypercharges and gears it has.',
    header: ['id', 'name', 'starPowers', 'gadgets', 'hyperCharges', 'gears'],
    rows: (brawlers) =>
      brawlers.map((b) => [b.id, b.name, b.starPowers.length, b.gadgets.length, b.hyperCharges?.length ?? 0, b.gears?.length ?? 0]),
  },
  {
    name: 'star-powers.csv',
    description: 'Star powers and the brawler each belongs to.',
    header: ['id', 'name', 'brawlerId', 'brawlerName'],
    rows: perBrawler((b) => b.starPowers),
  },
  {
    name: 'gadgets.csv',
    description: 'Gadgets and the brawler each belongs to.',
    header: ['id', 'name', 'brawlerId', 'brawlerName'],
    rows: perBrawler((b) => b.gadgets),
  },
  {
    name: 'hypercharges.csv',
    description: 'Hypercharges and the brawler each belongs to.',
    header: ['id', 'name', 'brawlerId', 'brawlerName'],
    rows: perBrawler((b) => b.hyperCharges),
  },
  {
    name: 'gears.csv',
    description: 'Gears each brawler can equip, with their maximum level (one row per brawler and gear).',
    header: ['id', 'name', 'level', 'brawlerId', 'brawlerName'],
    rows: (brawlers) => brawlers.flatMap((b) => (b.gears ?? []).map((g) => [g.id, g.name, g.level, b.id, b.name])),
  },
  {
    name: 'game-modes.csv',
    description: 'Game modes (name empty for modes the game has not released).',
    header: ['id', 'name'],
    rows: (_, modes) => modes.map((m) => [m.id, m.name]),
  },
];

export interface GameFile {
  name: string;
  description: string;
  rows: number;
  csv: string;
}

export interface GameFiles {
  /** sha256 of the catalogue the files were built from */
  hash: string;
  /** epoch ms when this catalogue version was first seen */
  updatedAt: number;
  files: GameFile[];
}

/** Pure: the catalogue in, every file out. */
export function buildGameFiles(brawlers: BrawlerList, modes: GameModeList): Omit<GameFiles, 'updatedAt'> {
  const sorted = [...brawlers.items].sort((a, b) => a.id - b.id);
  const sortedModes = [...modes.items].sort((a, b) => a.id - b.id);
  const hash = createHash('sha256').update(JSON.stringify([sorted, sortedModes])).digest('hex');
  const files = GAME_FILES.map((f) => {
    const rows = f.rows(sorted, sortedModes);
    return { name: f.name, description: f.description, rows: rows.length, csv: toCsv(f.header, rows) };
  });
  return { hash, files };
}

/** Combines the freshness of two reads: the older copy decides. */
function both<A, B, T>(a: Fetched<A>, b: Fetched<B>, data: T): Fetched<T> {
  const stale = a.stale || b.stale;
  const reason = a.staleReason ?? b.staleReason;
  return {
    data,
    fetchedAt: Math.min(a.fetchedAt, b.fetchedAt),
    expiresAt: Math.min(a.expiresAt, b.expiresAt),
    stale,
    ageSeconds: Math.max(a.ageSeconds, b.ageSeconds),
    ...(stale && reason ? { staleReason: reason } : {}),
  };
}

export class GameData {
  private current: GameFiles | undefined;
  private building: Promise<GameFiles> | undefined;
  /** the catalogue objects `current` was built from: the core hands out the same ones while cached */
  private builtFrom: [unknown, unknown] | undefined;

  constructor(
    private readonly stats: Pick<UpstreamReads, 'brawlers' | 'gameModes'>,
    private readonly kv: Keyv,
    private readonly now: () => number = Date.now,
  ) {}

  /** The files for the current catalogue; the same object while the catalogue is unchanged. */
  async files(): Promise<Fetched<GameFiles>> {
    const [brawlers, modes] = await Promise.all([this.stats.brawlers(), this.stats.gameModes()]);
    if (this.current && this.builtFrom?.[0] === brawlers.data && this.builtFrom[1] === modes.data) {
      return both(brawlers, modes, this.current);
    }
    const built = buildGameFiles(brawlers.data, modes.data);
    if (this.current?.hash !== built.hash) {
      this.building ??= this.settle(built).finally(() => {
        this.building = undefined;
      });
      this.current = await this.building;
    }
    this.builtFrom = [brawlers.data, modes.data];
    return both(brawlers, modes, this.current!);
  }

  private async settle(built: Omit<GameFiles, 'updatedAt'>): Promise<GameFiles> {
    let updatedAt = this.now();
    try {
      const seen = (await this.kv.get('current')) as { hash: string; updatedAt: number } | undefined;
      if (seen?.hash === built.hash) updatedAt = seen.updatedAt;
      else await this.kv.set('current', { hash: built.hash, updatedAt });
    } catch {
      // The date is a courtesy: serve the files even when the store is unreachable.
    }
    return { ...built, updatedAt };
  }
}
