/**
 * Where the running code was bundled to, when `starr` runs the build of bin/build.js (esbuild
 * defines STARR_BUNDLE_URL there: the build directory's URL, with a trailing slash), or null when it
 * runs the TypeScript sources (tsx, vitest). Only what has its own entry in the build looks here:
 * the render worker and the bot's commands.
 */
declare const STARR_BUNDLE_URL: string | undefined;

export const BUNDLE_URL: string | null = typeof STARR_BUNDLE_URL === 'string' ? STARR_BUNDLE_URL : null;
