/**
 * Ranking regions: 'global' or an officially assigned ISO 3166-1 alpha-2 country code, in any
 * case. The code list is data (data/iso3166-1-alpha2.json, 249 codes with English names).
 */
import countries from './data/iso3166-1-alpha2.json' with { type: 'json' };

export interface Country {
  code: string;
  name: string;
}

export const COUNTRIES: readonly Country[] = countries;
const BY_CODE = new Map(COUNTRIES.map((c) => [c.code, c]));

/** 'global', or the upper-case country code; null when the input is neither. */
export function parseRegion(input: string): string | null {
  if (input.toLowerCase() === 'global') return 'global';
  const code = input.toUpperCase();
  return BY_CODE.has(code) ? code : null;
}

export function countryName(code: string): string | undefined {
  return BY_CODE.get(code.toUpperCase())?.name;
}
