/**
 * The bot's languages: one ICU MessageFormat catalogue per language in messages/, keyed by
 * meaning, English (en-US) the source. Messages are compiled with FormatJS intl-messageformat
 * (CLDR plural rules: Russian one/few/many, none in Korean and Japanese) once per language and key,
 * then reused: a compiled message formats in microseconds, compiling one costs ~50 µs.
 *
 * Names from the game's API (brawlers, maps, modes, players, clubs) are never translated; they
 * arrive as placeholder values.
 */
import { readFileSync } from 'node:fs';
import { IntlMessageFormat } from 'intl-messageformat';

/** The languages the bot speaks, as Discord names them (its `locale` and `guild_locale`). */
export const LANGUAGES = ['en-US', 'en-GB', 'es-ES', 'es-419', 'pt-BR', 'fr', 'de', 'it', 'ru', 'tr', 'ko', 'ja'] as const;
export type Language = (typeof LANGUAGES)[number];
export const SOURCE: Language = 'en-US';

/** Each language's name in itself, for `/settings language`. */
export const LANGUAGE_NAMES: Record<Language, string> = {
  'en-US': 'English (US)',
  'en-GB': 'English (UK)',
  'es-ES': 'Español (España)',
  'es-419': 'Español (Latinoamérica)',
  'pt-BR': 'Português (Brasil)',
  fr: 'Français',
  de: 'Deutsch',
  it: 'Italiano',
  ru: 'Русский',
  tr: 'Türkçe',
  ko: '한국어',
  ja: '日本語',
};

export type Catalogue = Record<string, string>;

function load(lang: Language): Catalogue {
  return JSON.parse(readFileSync(new URL(`./messages/${lang}.json`, import.meta.url), 'utf8')) as Catalogue;
}

const catalogues = new Map<Language, Catalogue>();

/** The raw catalogue of a language (tests check them against the source). */
export function catalogue(lang: Language): Catalogue {
  let c = catalogues.get(lang);
  if (!c) {
    c = load(lang);
    catalogues.set(lang, c);
  }
  return c;
}

const isLanguage = (s: string): s is Language => (LANGUAGES as readonly string[]).includes(s);

/**
 * The language for a Discord locale or a BCP 47 tag: an exact match, else the same language
 * (es-MX → es-419, pt-PT → pt-BR, en-AU → en-GB, fr-CA → fr), else English. Never throws: an
 * unknown language is answered in English.
 */
export function languageOf(tag: string | null | undefined): Language {
  if (!tag) return SOURCE;
  if (isLanguage(tag)) return tag;
  const lower = tag.toLowerCase();
  const exact = LANGUAGES.find((l) => l.toLowerCase() === lower);
  if (exact) return exact;
  const base = lower.split(/[-_]/)[0]!;
  if (base === 'en') return /^en[-_](us|ca|ph)$/i.test(tag) ? 'en-US' : lower === 'en' ? 'en-US' : 'en-GB';
  if (base === 'es') return lower === 'es' ? 'es-ES' : 'es-419';
  if (base === 'pt') return 'pt-BR';
  return LANGUAGES.find((l) => l === base) ?? SOURCE;
}

export type MessageValues = Record<string, string | number | Date>;

export class MissingMessageError extends Error {
  override name = 'MissingMessageError';
}

/**
 * Messages compiled so far, kept: those the bot's replies have formatted, in the languages asked
 * for. A compiled message holds its parsed form and its formatters.
 */
const compiled = new Map<string, IntlMessageFormat>();

/** `key` in `lang` compiled (a key missing from a translation falls back to English). */
function compile(lang: Language, key: string): IntlMessageFormat {
  const text = catalogue(lang)[key] ?? catalogue(SOURCE)[key];
  if (text === undefined) throw new MissingMessageError(`no message "${key}"`);
  return new IntlMessageFormat(text, lang, undefined, { ignoreTag: true });
}

/** One message in one language; a key missing from a translation falls back to English. */
export function translate(lang: Language, key: string, values?: MessageValues): string {
  const id = `${lang}\u0000${key}`;
  let m = compiled.get(id);
  if (!m) {
    m = compile(lang, key);
    compiled.set(id, m);
  }
  return String(m.format(values));
}

/**
 * Loads every catalogue and compiles each message of `langs` once, so the first reply in a language
 * does not pay for loading the parser's and formatters' code: the first message compiled in a
 * process took 120 ms on the 2-core machine under load, each further one ~0.2 ms. The compiled
 * messages are not kept: a reply compiles (and keeps) those it uses. Kept, English's 732 held
 * 2.6 MB of the heap of a process that may never answer an interaction (`npm run bench:heap`).
 */
export function warmLanguages(langs: readonly Language[] = [SOURCE]): void {
  for (const l of LANGUAGES) catalogue(l);
  for (const l of langs) for (const key of Object.keys(catalogue(l))) compile(l, key);
}

/**
 * A message in every language but English, as Discord's `*_localizations` objects take them: the
 * commands' descriptions and choices, made once when the commands are defined, so compiled for that
 * and not kept (11 languages of every description, 1.7 MB of the heap kept otherwise).
 */
export function localizations(key: string, values?: MessageValues): Record<string, string> {
  const out: Record<string, string> = {};
  for (const l of LANGUAGES) if (l !== SOURCE) out[l] = String(compile(l, key).format(values));
  return out;
}
