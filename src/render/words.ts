/**
 * The words on a picture, in the language of whoever asked: catalogue messages (src/i18n) under
 * `pic.*`, and month names from Intl. Rendering is synchronous and one picture at a time per
 * worker, so the labels of the picture being drawn are remembered here: a label the drawing code
 * had to cut to fit its box is an overflow, which the tests look for in every language.
 */
import { SOURCE, translate, type Language, type MessageValues } from '../i18n/index.ts';

export interface Words {
  readonly lang: Language;
  /** a catalogue message */
  t(key: string, values?: MessageValues): string;
  /**
   * a message inside a brawler's tile (its trophies, rank, record): drawn like the brawler's name,
   * shortened when the tile is narrow, so it is not a label the overflow check holds to its box
   */
  tile(key: string, values?: MessageValues): string;
  /** a message in capitals, the language's way (Turkish i → İ) */
  upper(key: string, values?: MessageValues): string;
  /** "3 Jun", "Jun 26" or "June 2026" in the language (UTC) */
  date(ms: number, style: 'day' | 'dayMonth' | 'monthYear' | 'shortMonthYear'): string;
}

const labels = new Set<string>();
const overflows: string[] = [];

const dateFormats = new Map<string, Intl.DateTimeFormat>();
const STYLES: Record<Parameters<Words['date']>[1], Intl.DateTimeFormatOptions> = {
  day: { day: 'numeric', month: 'short', year: 'numeric', timeZone: 'UTC' },
  dayMonth: { day: 'numeric', month: 'short', timeZone: 'UTC' },
  monthYear: { month: 'long', year: 'numeric', timeZone: 'UTC' },
  shortMonthYear: { month: 'short', year: '2-digit', timeZone: 'UTC' },
};

export function wordsFor(lang: Language = SOURCE): Words {
  const t = (key: string, values?: MessageValues) => {
    const s = translate(lang, key, values);
    labels.add(s);
    labels.add(s.toUpperCase());
    return s;
  };
  return {
    lang,
    t,
    tile: (key, values) => translate(lang, key, values),
    upper: (key, values) => {
      const s = t(key, values).toLocaleUpperCase(lang);
      labels.add(s);
      return s;
    },
    date: (ms, style) => {
      const id = `${lang} ${style}`;
      let f = dateFormats.get(id);
      if (!f) {
        f = new Intl.DateTimeFormat(lang, STYLES[style]);
        dateFormats.set(id, f);
      }
      return f.format(ms);
    },
  };
}

/** Starts a picture: forgets the labels and overflows of the previous one. */
export function startPicture(): void {
  labels.clear();
  overflows.length = 0;
}

/** Called by the text drawing code when `text` did not fit at its smallest size and was cut. */
export function noteCut(text: string): void {
  if (labels.has(text)) overflows.push(text);
}

/** Labels of the last picture that did not fit their boxes. */
export function labelOverflows(): readonly string[] {
  return [...overflows];
}
