/**
 * Historical quirks of the official API (reference/upstream-api.md §14) that a client must
 * tolerate, applied on demand to otherwise correct bodies (fault setting `quirkRate`):
 * battle log items without `battle`, events without `mode`, bots with power and trophies -1,
 * brawler names that are null, and top player rankings showing `trophies: 1`.
 */
type Json = any;

/** Returns a copy of `body` with the quirks that fit the path; `u` draws deterministic uniforms. */
export function applyQuirks(path: string, body: unknown, u: (k: number) => number): unknown {
  const copy: Json = structuredClone(body);
  if (/\/battlelog$/.test(path) && Array.isArray(copy?.items) && copy.items.length > 0) {
    const items: Json[] = copy.items;
    // API bug 2022-03-15: an item with no battle at all.
    delete items[Math.floor(u(1) * items.length)].battle;
    for (const item of items) {
      if (!item.battle) continue;
      // Since 2020-10 the event mode may be missing (it is "unknown" at other times).
      if (u(2) < 0.3) delete item.event.mode;
      const everyone: Json[] = [...(item.battle.players ?? []), ...(item.battle.teams ?? []).flat()];
      const someone = everyone[Math.floor(u(3) * everyone.length)];
      if (someone?.brawler) {
        // Bots in friendly games (2022): power and trophies -1; brawler names null (2024-06-26).
        someone.brawler.power = -1;
        someone.brawler.trophies = -1;
        someone.brawler.name = null;
      }
    }
    return copy;
  }
  if (/\/rankings\/[^/]+\/players$/.test(path) && Array.isArray(copy?.items)) {
    // 2023-12 to 2025: players above 100k trophies show trophies 1.
    for (const item of copy.items) if (item.trophies > 100_000) item.trophies = 1;
    return copy;
  }
  return copy;
}
