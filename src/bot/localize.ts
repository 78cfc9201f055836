/**
 * Command definitions in every language: descriptions and choice names come from the catalogue
 * (English the source) with Discord's `*_localizations` for the others. Command and option names
 * stay English so members can tell each other what to type.
 */
import { SOURCE, localizations, translate, type MessageValues } from '../i18n/index.ts';

/** `description` and `description_localizations` of the catalogue message `key`. */
export function described(key: string): { description: string; description_localizations: Record<string, string> } {
  return { description: translate(SOURCE, key), description_localizations: localizations(key) };
}

/** A choice whose shown name is the catalogue message `key`. */
export function choice<V extends string | number>(
  key: string,
  value: V,
  values?: MessageValues,
): { name: string; name_localizations: Record<string, string>; value: V } {
  return { name: translate(SOURCE, key, values), name_localizations: localizations(key, values), value };
}
