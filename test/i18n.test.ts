/**
 * The bot's languages: every catalogue against the English source (same keys, same placeholders,
 * valid ICU that formats), no key that nothing uses, the language a Discord locale maps to, and
 * every command and view answered in every language within Discord's limits.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IntlMessageFormat } from 'intl-messageformat';
import { LANGUAGES, SOURCE, catalogue, languageOf, translate, type Language } from '../src/i18n/index.ts';
import { format } from '../src/bot/format.ts';
import { fileSize } from '../src/bot/fit.ts';
import { runLocal, type LocalUser } from '../src/bot/local.ts';
import { Router } from '../src/bot/router.ts';
import { createBotServices, type BotServices } from '../src/bot/services.ts';
import { checkCommandSet, checkMessage, describeProblems } from '../src/bot/limits.ts';
import { startWorld, type TestWorld } from './support/world.ts';

const ROOT = join(import.meta.dirname, '..');

/** Argument names of a message and, for plurals and selects, the names inside their branches. */
function argumentsOf(message: string, lang: string): string[] {
  const names = new Set<string>();
  const walk = (nodes: unknown[]) => {
    for (const n of nodes as { type: number; value?: string; options?: Record<string, { value: unknown[] }> }[]) {
      if (n.type >= 1 && n.type <= 6 && typeof n.value === 'string') names.add(n.value);
      for (const o of Object.values(n.options ?? {})) walk(o.value);
    }
  };
  walk(new IntlMessageFormat(message, lang, undefined, { ignoreTag: true }).getAst());
  return [...names].sort();
}

/** Values for every argument: numbers where a plural or number needs one, text elsewhere. */
function sampleValues(message: string, lang: string, n: number): Record<string, string | number> {
  return Object.fromEntries(argumentsOf(message, lang).map((a) => [a, /^(n|max|min|battles|gadgets|starPowers|gears|hypercharges|level|rank|keyed)$/.test(a) ? n : `‹${a}›`]));
}

describe('catalogues', () => {
  const source = catalogue(SOURCE);

  it('has one file per language, and nothing else, in one folder', () => {
    const files = readdirSync(join(ROOT, 'src/i18n/messages')).sort();
    expect(files).toEqual(LANGUAGES.map((l) => `${l}.json`).sort());
    expect(LANGUAGES.length).toBeGreaterThanOrEqual(10);
  });

  it.each(LANGUAGES.filter((l) => l !== SOURCE))('%s has every key of English and no other', (lang) => {
    expect(Object.keys(catalogue(lang)).sort()).toEqual(Object.keys(source).sort());
  });

  it.each(LANGUAGES)('%s: every message is valid ICU with the placeholders of the English one, and formats', (lang) => {
    const problems: string[] = [];
    for (const [key, text] of Object.entries(catalogue(lang))) {
      try {
        const mine = argumentsOf(text, lang);
        const theirs = argumentsOf(source[key]!, SOURCE);
        if (mine.join() !== theirs.join()) problems.push(`${key}: {${mine.join(', ')}} where English has {${theirs.join(', ')}}`);
        for (const n of [0, 1, 2, 5, 21, 1000]) {
          const out = translate(lang, key, sampleValues(source[key]!, SOURCE, n));
          if (!out.trim() || /\{|\}/.test(out.replace(/`[^`]*`/g, ''))) problems.push(`${key}: formats to "${out}"`);
        }
      } catch (e) {
        problems.push(`${key}: ${(e as Error).message}`);
      }
    }
    expect(problems).toEqual([]);
  });

  it('is translated: a language repeats English only where the words are the same in it', () => {
    for (const lang of LANGUAGES.filter((l) => !l.startsWith('en'))) {
      const same = Object.keys(source).filter((k) => catalogue(lang)[k] === source[k] && /[a-z]{4,} [a-z]{4,}/i.test(source[k]!));
      expect(same, lang).toEqual([]);
    }
  });

  it('uses CLDR plural rules: Russian one/few/many, none in Korean and Japanese', () => {
    const ru = (n: number) => translate('ru', 'ranks.line', { rank: 3, n });
    expect([ru(1), ru(3), ru(5), ru(21), ru(22), ru(11)]).toEqual([
      'Ранг **3** · 1 боец',
      'Ранг **3** · 3 бойца',
      'Ранг **3** · 5 бойцов',
      'Ранг **3** · 21 боец',
      'Ранг **3** · 22 бойца',
      'Ранг **3** · 11 бойцов',
    ]);
    expect(translate('en-US', 'ranks.line', { rank: 3, n: 1 })).toBe('Rank **3** · 1 brawler');
    expect(translate('ko', 'ranks.line', { rank: 3, n: 1 })).toBe('랭크 **3** · 브롤러 1개');
    expect(translate('ja', 'interval.hours', { n: 3 })).toBe('3時間');
  });

  it('uses every key: each is named in the code, or under a prefix the code completes', () => {
    const sources: string[] = [];
    const walk = (dir: string) => {
      for (const f of readdirSync(dir)) {
        const p = join(dir, f);
        if (statSync(p).isDirectory()) walk(p);
        else if (f.endsWith('.ts')) sources.push(readFileSync(p, 'utf8'));
      }
    };
    walk(join(ROOT, 'src'));
    walk(join(ROOT, 'commands'));
    const code = sources.join('\n');
    // Keys written out ('player.trophies'), and the parts of keys built in code (`view.${command}.${view}`).
    const literals = new Set([...code.matchAll(/['"`]([a-z][A-Za-z0-9]*(?:\.[A-Za-z0-9_]+)*)['"`]/g)].map((m) => m[1]!));
    const prefixes = [...code.matchAll(/`([a-z][A-Za-z0-9.]*\.)\$\{/g)].map((m) => m[1]!);
    const used = (key: string) =>
      literals.has(key) ||
      literals.has(key.replace(/\.(title|body)$/, '')) ||
      prefixes.some((p) => key.startsWith(p) && /^[A-Za-z0-9_]+(\.[A-Za-z0-9_]+)?(\.hint)?$/.test(key.slice(p.length)));
    expect(Object.keys(source).filter((k) => !used(k))).toEqual([]);
  });
});

describe('languages of Discord locales', () => {
  it('maps each Discord locale to its catalogue and the rest to the nearest, else English', () => {
    for (const l of LANGUAGES) expect(languageOf(l)).toBe(l);
    expect(languageOf('es-MX')).toBe('es-419');
    expect(languageOf('pt-PT')).toBe('pt-BR');
    expect(languageOf('en-AU')).toBe('en-GB');
    expect(languageOf('fr-CA')).toBe('fr');
    expect(languageOf('zh-CN')).toBe('en-US');
    expect(languageOf('not a locale')).toBe('en-US');
    expect(languageOf(undefined)).toBe('en-US');
  });

  it("writes small files in KB and large ones in MB, in the reader's number format", () => {
    expect(fileSize(300 * 1024, 'en-US')).toBe('300 kB');
    expect(fileSize(0.3 * 1024 * 1024, 'en-US')).not.toContain('0.0');
    expect(fileSize(8 * 1024 * 1024, 'en-US')).toBe('8 MB');
    expect(fileSize(1.5 * 1024 * 1024, 'de')).toBe('1,5 MB');
  });

  it("formats lists and plurals in the reader's language", () => {
    expect(format('fr').list(['a', 'b', 'c'])).toBe('a, b et c');
    expect(format('ja').t('interval.minutes', { n: 30 })).toBe('30分');
    expect(format('es-MX').t('button.refresh')).toBe('Actualizar');
  });
});

describe('every command and view in every language', () => {
  let w: TestWorld;
  let services: BotServices;
  let router: Router;

  beforeAll(async () => {
    w = await startWorld({ startMs: Date.UTC(2026, 5, 1), players: 300, clubs: 30 });
    services = await createBotServices(w.core, { now: w.now });
    router = new Router(w.core, services, { deferAfterMs: 2500 });
  });

  afterAll(async () => {
    await w?.close();
  });

  it('keeps every localised command definition within Discord limits', () => {
    expect(describeProblems(checkCommandSet(services.commands.definitions()))).toBe('');
    const player = services.commands.get('player')!.definition;
    expect(Object.keys(player.description_localizations ?? {}).sort()).toEqual(LANGUAGES.filter((l) => l !== SOURCE).sort());
    expect(player.options!.map((o) => o.name)).toEqual(['tag', 'view', 'member']);
  });

  /** The player and club with the longest names in the simulated world. */
  function longest(kind: 'player' | 'club'): string {
    let best = { tag: '', len: -1 };
    for (let i = 0; i < (kind === 'player' ? 300 : 30); i++) {
      const tag = kind === 'player' ? w.sim.world.playerTag(i) : w.sim.world.clubTag(i);
      const body = (kind === 'player' ? w.sim.world.player(tag, w.now()) : w.sim.world.club(tag, w.now())) as { name: string } | null;
      if (body && [...body.name].length > best.len) best = { tag, len: [...body.name].length };
    }
    return best.tag;
  }

  it.each(LANGUAGES)('%s: every answer is a message Discord accepts, in that language', async (lang: Language) => {
    const player = longest('player');
    const club = longest('club');
    const runs = [
      ...['profile', 'brawlers', 'battlelog', 'ranks', 'season', 'charts', 'log', 'push'].map((v) => `/player tag:${player} view:${v}`),
      ...['overview', 'members', 'trophies', 'membership', 'log'].map((v) => `/club show tag:${club} view:${v}`),
      `/club activity tag:${club}`,
      '/settings activity min_gain:200 idle_days:3',
      '/ranking type:players',
      '/ranking type:clubs country:DE',
      '/ranking type:brawler brawler:16000000',
      '/brawler name:16000000',
      '/brawler name:16000000 view:build',
      '/events',
      '/map name:Nowhere',
      '/help',
      '/help command:settings',
      '/about',
      `/link tag:${player}`,
      '/unlink',
      '/settings apikey status',
      '/leaderboard list',
      '/player tag:#NOPE',
    ];
    // One member per run: the commands' cooldowns would answer a second run "slow down".
    let runsSoFar = 0;
    const user = (): LocalUser => ({ userId: `u-${lang}-${runsSoFar++}`, guildId: `g-${lang}`, locale: lang, manager: true });
    const problems: string[] = [];
    for (const text of runs) {
      const r = await runLocal(router, services, text, user());
      const title = r.last?.body.embeds[0]?.title ?? '';
      if (title === translate(lang, 'error.cooldown.title')) problems.push(`${text}: answered by the cooldown`);
      for (const msg of r.messages) {
        const p = describeProblems(checkMessage(msg.body, { files: msg.files.map((f) => ({ name: f.name, size: f.data.length })) }));
        if (p) problems.push(`${text}: ${p}`);
      }
      if (!r.messages.length) problems.push(`${text}: no answer`);
    }
    expect(problems).toEqual([]);
    const profile = await runLocal(router, services, `/player tag:${player}`, user());
    expect(profile.last!.body.embeds[0]!.title, JSON.stringify(profile.last!.body.embeds[0])).toContain(player);
    const field = profile.last!.body.embeds[0]!.fields![0]!.name;
    expect(field).toBe(`🏆 ${translate(lang, 'player.trophies')}`);
  });
});

describe('picture labels in every language', () => {
  it.each(LANGUAGES)('%s: no label is cut to fit its box, on any picture', async (lang: Language) => {
    const { referenceCases } = await import('./fixtures/render/cases.ts');
    const { renderCanvas } = await import('../src/render/index.ts');
    const { labelOverflows } = await import('../src/render/words.ts');
    // The English reference pictures (every option, with and without history), redrawn in `lang`.
    const cases = (await referenceCases()).filter((c) => !/-(ru|ja)-/.test(c.name) && !c.name.endsWith('-high'));
    const cut: string[] = [];
    for (const c of cases) {
      renderCanvas({ ...c.job, lang });
      for (const label of labelOverflows()) cut.push(`${c.name}: ${label}`);
    }
    expect(cut).toEqual([]);
  }, 120_000);

  it('notices a label that does not fit (the check can fail)', async () => {
    const { drawText, makeCanvas } = await import('../src/render/draw.ts');
    const { labelOverflows, startPicture, wordsFor } = await import('../src/render/words.ts');
    const { ctx } = makeCanvas(200, 50, 'low');
    startPicture();
    const label = wordsFor('de').t('pic.chart.noBattles');
    drawText(ctx, label, 0, 30, { size: 20, maxWidth: 100, minSize: 18 });
    expect(labelOverflows()).toEqual([label]);
  });
});
