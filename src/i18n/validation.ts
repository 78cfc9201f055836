/**
 * Zod's messages in the bot's languages. Apart from index.ts, which the render worker loads for
 * its words: the worker validates nothing and does not load zod (test/render-worker-imports.test.ts).
 */
import { z } from 'zod';
import type { Language } from './index.ts';

/**
 * Zod's own messages in each language, for the one problem a reply quotes when a command's options
 * do not validate ("Check the options: limit — …"); zod ships these translations, per parse.
 */
const ZOD_LOCALES: Record<Language, () => { localeError: z.core.$ZodErrorMap }> = {
  'en-US': z.locales.en,
  'en-GB': z.locales.en,
  'es-ES': z.locales.es,
  'es-419': z.locales.es,
  'pt-BR': z.locales.ptBR,
  fr: z.locales.fr,
  de: z.locales.de,
  it: z.locales.it,
  ru: z.locales.ru,
  tr: z.locales.tr,
  ko: z.locales.ko,
  ja: z.locales.ja,
};
const zodErrorMaps = new Map<Language, z.core.$ZodErrorMap>();

/** The error map that makes zod describe a validation problem in `lang`. */
export function validationErrors(lang: Language): z.core.$ZodErrorMap {
  let map = zodErrorMaps.get(lang);
  if (!map) {
    map = ZOD_LOCALES[lang]().localeError;
    zodErrorMaps.set(lang, map);
  }
  return map;
}
