/**
 * Words, numbers and dates for the reader's locale. Words come from the language's catalogue
 * (src/i18n); dates and times go out as Discord timestamp markup (`<t:1700000000:R>`), which every
 * Discord client renders in the reader's own language and time zone; numbers are formatted here
 * with Intl for the interaction's locale.
 */
import { languageOf, translate, type Language, type MessageValues } from '../i18n/index.ts';

export interface Format {
  readonly locale: string;
  /** the catalogue the words come from */
  readonly lang: Language;
  /** one message of the catalogue, e.g. t('player.field.trophies') */
  t(key: string, values?: MessageValues): string;
  /** 12,345 / 12.345 / 12 345 */
  int(n: number): string;
  /** a list joined the language's way: "a, b and c" */
  list(items: string[]): string;
  /** signed: +12 / −3 */
  signed(n: number): string;
  /** 0.534 → 53.4% */
  pct(fraction: number, digits?: number): string;
  /** a short "12 minutes" style duration */
  duration(seconds: number): string;
  /** Discord markup: absolute date and time */
  when(ms: number): string;
  /** Discord markup: relative time ("in 2 hours", "5 minutes ago") */
  relative(ms: number): string;
  /** Discord markup: date only */
  date(ms: number): string;
}

const cache = new Map<string, Format>();

/** Discord's locale names are BCP 47 tags Intl knows; anything else falls back to en-US. */
function supported(locale: string | undefined): string {
  if (!locale) return 'en-US';
  try {
    return Intl.NumberFormat.supportedLocalesOf([locale]).length ? locale : 'en-US';
  } catch {
    return 'en-US';
  }
}

export function format(locale?: string): Format {
  const loc = supported(locale);
  const lang = languageOf(locale);
  const hit = cache.get(loc);
  if (hit) return hit;
  const int = new Intl.NumberFormat(loc, { maximumFractionDigits: 0 });
  const signed = new Intl.NumberFormat(loc, { maximumFractionDigits: 0, signDisplay: 'exceptZero' });
  const pcts = new Map<number, Intl.NumberFormat>();
  const units = (['day', 'hour', 'minute', 'second'] as const).map(
    (unit) => [unit, new Intl.NumberFormat(loc, { style: 'unit', unit, unitDisplay: 'long', maximumFractionDigits: 0 })] as const,
  );
  const list = new Intl.ListFormat(loc, { style: 'long', type: 'conjunction' });
  const t = (ms: number, style: string) => `<t:${Math.floor(ms / 1000)}:${style}>`;
  const f: Format = {
    locale: loc,
    lang,
    t: (key, values) => translate(lang, key, values),
    int: (n) => int.format(n),
    list: (items) => list.format(items),
    signed: (n) => signed.format(n),
    pct: (x, digits = 1) => {
      let nf = pcts.get(digits);
      if (!nf) {
        nf = new Intl.NumberFormat(loc, { style: 'percent', minimumFractionDigits: digits, maximumFractionDigits: digits });
        pcts.set(digits, nf);
      }
      return nf.format(x);
    },
    duration: (seconds) => {
      const s = Math.max(0, Math.round(seconds));
      const sizes = { day: 86_400, hour: 3600, minute: 60, second: 1 } as const;
      for (const [unit, nf] of units) if (s >= sizes[unit] || unit === 'second') return nf.format(Math.floor(s / sizes[unit]));
      return '';
    },
    when: (ms) => t(ms, 'f'),
    relative: (ms) => t(ms, 'R'),
    date: (ms) => t(ms, 'D'),
  };
  cache.set(loc, f);
  return f;
}
