// Builds what `starr` runs: src/cli.ts, the render worker and the bot's commands/ bundled by esbuild
// into .build/<fingerprint>/ (git-ignored), node_modules left external. Running the bundle instead of
// the TypeScript sources through tsx spares each process tsx's loader thread and its caches of
// transformed sources (README, Development). Plain JavaScript: it runs before anything can load
// TypeScript.
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const SELF = fileURLToPath(import.meta.url);

/** Finished builds kept besides the newest: a service still running may load a lazy chunk of one. */
const KEEP_OLD = 2;

/** Every file under `dir`, depth first, in name order. */
function filesUnder(dir) {
  const out = [];
  for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...filesUnder(path));
    else out.push(path);
  }
  return out;
}

/**
 * What a build depends on: the path, mtime and size of every source (src/, commands/), of the lock
 * file, package.json and tsconfig.json (esbuild reads both) and of this script, and the project's own
 * place (the bundle holds absolute paths). Cheap to compute at each start (a stat per file, no reads).
 */
export function fingerprint(root = ROOT) {
  const h = createHash('sha256');
  h.update(`${root}\0`);
  const settings = ['package-lock.json', 'package.json', 'tsconfig.json'].map((f) => join(root, f));
  const inputs = [...filesUnder(join(root, 'src')), ...filesUnder(join(root, 'commands')), ...settings, SELF];
  for (const path of inputs) {
    let s;
    try {
      s = statSync(path);
    } catch {
      h.update(`${path}\0-\0`);
      continue;
    }
    h.update(`${path}\0${s.mtimeMs}\0${s.size}\0`);
  }
  return h.digest('hex').slice(0, 16);
}

/**
 * Code that finds files next to itself (fonts, messages, package.json, the commands folder) reads
 * import.meta.url: each module gets its own source file's URL, so it finds them from the bundle too.
 */
function sourceUrls(root) {
  const src = join(root, 'src');
  const commands = join(root, 'commands');
  return {
    name: 'starr-source-urls',
    setup(build) {
      build.onLoad({ filter: /\.ts$/ }, (args) => {
        if (!args.path.startsWith(src) && !args.path.startsWith(commands)) return undefined;
        const text = readFileSync(args.path, 'utf8');
        if (!text.includes('import.meta')) return undefined;
        const url = pathToFileURL(args.path).href;
        const contents = text
          .replaceAll('import.meta.url', JSON.stringify(url))
          .replaceAll('import.meta.filename', JSON.stringify(args.path))
          .replaceAll('import.meta.dirname', JSON.stringify(dirname(args.path)));
        return { contents, loader: 'ts' };
      });
    },
  };
}

/**
 * The directory of an up-to-date build (built now if there is none). Written in a temporary
 * directory renamed into place, so a reader never sees half a build; two processes starting at once
 * both build, the first rename wins and the other uses its build. Throws when it cannot build
 * (esbuild missing, a syntax error): the caller runs the sources through tsx instead.
 */
export async function ensureBuilt(root = ROOT) {
  const base = join(root, '.build');
  const id = fingerprint(root);
  const dir = join(base, id);
  if (existsSync(join(dir, 'cli.js'))) return dir;

  const esbuild = await import('esbuild');
  mkdirSync(base, { recursive: true });
  const tmp = join(base, `tmp-${id}-${process.pid}-${Math.random().toString(36).slice(2, 8)}`);
  try {
    const commands = readdirSync(join(root, 'commands')).filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts'));
    await esbuild.build({
      absWorkingDir: root,
      entryPoints: {
        cli: join(root, 'src/cli.ts'),
        'render-worker-main': join(root, 'src/render/worker-main.ts'),
        ...Object.fromEntries(commands.map((f) => [`commands/${f.replace(/\.ts$/, '')}`, join(root, 'commands', f)])),
      },
      outdir: tmp,
      bundle: true,
      splitting: true,
      format: 'esm',
      platform: 'node',
      target: 'node20.18',
      packages: 'external',
      chunkNames: 'chunks/[name]-[hash]',
      // stack traces point at src/ (bin/starr.js turns source maps on); the sources stay where they are
      sourcemap: 'linked',
      sourcesContent: false,
      keepNames: true,
      define: { STARR_BUNDLE_URL: JSON.stringify(pathToFileURL(dir).href + '/') },
      plugins: [sourceUrls(root)],
      logLevel: 'silent',
    });
    // A worker thread has source maps off whatever its parent set: its entry turns them on first.
    writeFileSync(join(tmp, 'render-worker.js'), "process.setSourceMapsEnabled(true);\nawait import('./render-worker-main.js');\n");
    try {
      renameSync(tmp, dir);
    } catch (e) {
      // another process renamed its build of the same sources first
      if (!existsSync(join(dir, 'cli.js'))) throw e;
      rmSync(tmp, { recursive: true, force: true });
    }
  } catch (e) {
    rmSync(tmp, { recursive: true, force: true });
    throw e;
  }
  prune(base, id);
  return dir;
}

/** Removes old builds (all but the newest KEEP_OLD besides `current`) and abandoned temporaries. */
function prune(base, current) {
  const now = Date.now();
  const builds = [];
  for (const name of readdirSync(base)) {
    if (name === current) continue;
    const path = join(base, name);
    let mtime;
    try {
      mtime = statSync(path).mtimeMs;
    } catch {
      continue;
    }
    if (name.startsWith('tmp-')) {
      if (now - mtime > 10 * 60_000) rmSync(path, { recursive: true, force: true });
    } else builds.push({ path, mtime });
  }
  builds.sort((a, b) => b.mtime - a.mtime);
  for (const b of builds.slice(KEEP_OLD)) rmSync(b.path, { recursive: true, force: true });
}

/** `node bin/build.js`: builds (if needed) and prints the directory, relative to the project. */
if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  console.log(relative(process.cwd(), await ensureBuilt()));
}
