/**
 * Player profile icons (ids 28000000+, reference/upstream-api.md §12). The base icons are the
 * ones every account has from its first day: Brawlify's /icons lists 28000000 as `base1` with
 * `requiredTotalTrophies: 0`, no brawler and not a reward, and the next base icons after it.
 * Account verification asks for one of them, so nobody is asked for an icon they cannot set.
 */
export const PROFILE_ICON_FIRST = 28000000;
/** the last id the captured fixtures show */
export const PROFILE_ICON_LAST = 28000933;

export const BASE_PROFILE_ICONS: readonly number[] = [28000000, 28000001, 28000002];

/** Where the picture of an icon is (Brawlify's CDN, as the rest of the game art). */
export function profileIconUrl(id: number): string {
  return `https://cdn.brawlify.com/profile-icons/regular/${id}.png`;
}
