/**
 * The drawing code's revision: a digest of the sources under src/render (and the lock file, which
 * pins the fonts, canvas and chart library), read once. Part of every picture's key and ETag, so a
 * deploy that changes how pictures look never answers 304 for a picture drawn the old way.
 */
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

let revision: string | undefined;

function addTree(h: ReturnType<typeof createHash>, dir: string): void {
  for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) addTree(h, path);
    else {
      h.update(`${entry.name}\0`);
      h.update(readFileSync(path));
    }
  }
}

export function renderRevision(): string {
  if (revision === undefined) {
    const h = createHash('sha256');
    const here = fileURLToPath(new URL('.', import.meta.url));
    addTree(h, here);
    try {
      h.update(readFileSync(join(here, '../../package-lock.json')));
    } catch {
      // installed without a lock file: the sources alone
    }
    revision = h.digest('base64url').slice(0, 16);
  }
  return revision;
}
