/**
 * GET /players/{tag}/image, /clubs/{tag}/image, /players/{tag}/chart, /clubs/{tag}/chart → image/png.
 */
import { LANGUAGES, languageOf } from '../../i18n/index.ts';
import { z } from 'zod';
import type { IncomingHttpHeaders } from 'node:http';
import type { ChartRange, Conditional, ImageResult } from '../../core/images.ts';
import type { Core } from '../../core/index.ts';
import {
  CLUB_CHART_OPTIONS,
  CLUB_IMAGE_OPTIONS,
  describeOptions,
  optionsOf,
  PLAYER_CHART_OPTIONS,
  PLAYER_IMAGE_OPTIONS,
} from '../../render/catalogue.ts';
import { QUALITY_SCALE, type Quality } from '../../render/draw.ts';
import { RenderBusyError } from '../../render/pool.ts';
import { tagParam } from '../params.ts';
import { errors, pydanticCheck, RequestValidationError } from '../pydantic.ts';
import { defineRoute, freshnessHeaders, HttpError, raw, routeGroup } from '../route.ts';

// ------------------------------------------------------------------ dates

/**
 * `DD.MM.YY` or `DD.MM.YYYY` → epoch ms of that day's start (UTC); null for anything else,
 * including days that do not exist (31.02.25). Two-digit years are 20YY.
 */
export function parseChartDate(s: string): number | null {
  const m = /^(\d{2})\.(\d{2})\.(\d{2}|\d{4})$/.exec(s.trim());
  if (!m) return null;
  const day = Number(m[1]);
  const month = Number(m[2]);
  const year = m[3]!.length === 2 ? 2000 + Number(m[3]) : Number(m[3]);
  const ms = Date.UTC(year, month - 1, day);
  const d = new Date(ms);
  if (d.getUTCFullYear() !== year || d.getUTCMonth() !== month - 1 || d.getUTCDate() !== day) return null;
  return ms;
}

const DAY = 86_400_000;

const chartDate = (which: 'from' | 'to') =>
  z
    .string()
    .check(
      pydanticCheck<string>((v) =>
        parseChartDate(v) === null ? errors.value(`${which} must be a date written DD.MM.YY or DD.MM.YYYY, such as 01.11.25`) : null,
      ),
    )
    .optional()
    .meta({
      description:
        which === 'from'
          ? 'First day of the chart (UTC), DD.MM.YY or DD.MM.YYYY. Default: the first recording, at most 365 days back.'
          : 'Last day of the chart (UTC, included), DD.MM.YY or DD.MM.YYYY. Default: now.',
      examples: [which === 'from' ? '01.10.25' : '23.11.2025'],
    });

/** from/to strings → an inclusive window; 422 when from is after to. */
export function chartRange(query: { from?: string | undefined; to?: string | undefined }): ChartRange {
  const from = query.from === undefined ? undefined : parseChartDate(query.from)!;
  const toDay = query.to === undefined ? undefined : parseChartDate(query.to)!;
  if (from !== undefined && toDay !== undefined && from > toDay) {
    throw new RequestValidationError([
      { ...errors.value('from must not be after to'), loc: ['query', 'from'], input: query.from },
    ]);
  }
  return {
    ...(from !== undefined ? { from } : {}),
    ...(toDay !== undefined ? { to: toDay + DAY - 1 } : {}),
  };
}

// ------------------------------------------------------------------ parameters

const option = (table: Record<number, { title: string; description: string }>, def: number) => {
  const values = optionsOf(table) as [number, ...number[]];
  return z
    .literal(values)
    .default(def as (typeof values)[number])
    .meta({ description: `Which picture (default ${def}):\n${describeOptions(table)}` });
};

const quality = z
  .enum(Object.keys(QUALITY_SCALE) as [Quality, ...Quality[]])
  .default('high')
  .meta({ description: 'Resolution: low (half size), medium (three quarters) or high (full size).' });

/**
 * The language of the picture's labels. Any text is accepted: a language the pictures do not speak
 * (or a region of one they do, like es-MX) gets the nearest one, else English, never an error.
 */
const lang = z
  .string()
  .optional()
  .transform((v) => languageOf(v))
  .meta({
    description:
      `Language of the labels on the picture (default en-US): ${LANGUAGES.join(', ')}. Another language tag gets the nearest of ` +
      'these (es-MX → es-419), else English. Names from the game (players, clubs, brawlers) are shown as they are.',
  });

const png = {
  schema: z.string().meta({ format: 'binary' }),
  contentType: 'image/png',
  description:
    'A PNG picture. Sizes at quality high are listed with each option; low and medium scale them by 0.5 and 0.75.',
};

/**
 * The client's If-None-Match, handed to the picture service so a match is answered without drawing,
 * and how long a client waits for a new drawing when the picture of an older copy is kept
 * (PICTURE_STALE_WAIT_MS; then answered that one, `X-Stale-Reason: drawing`).
 */
const conditional = (headers: IncomingHttpHeaders, core: Core): Conditional => ({
  ifNoneMatch: headers['if-none-match'],
  staleAfterMs: core.config.PICTURE_STALE_WAIT_MS,
});

async function reply(work: Promise<ImageResult>) {
  try {
    const r = await work;
    // `again`: the fast path answers the next hit from the picture cache without this handler (hotAnswer)
    return raw(r.png, 'image/png', {
      maxAge: r.maxAge,
      etag: r.etag,
      cache: r.freshness.stale ? 'stale' : r.cached ? 'hit' : 'miss',
      headers: freshnessHeaders(r.freshness),
      again: r.again,
    });
  } catch (e) {
    if (e instanceof RenderBusyError) {
      throw new HttpError(503, e.message, { 'retry-after': String(e.retryAfterSeconds) });
    }
    throw e;
  }
}

const sizes = (table: Record<number, { size: { width: number; height: number } }>) =>
  Object.entries(table)
    .map(([k, v]) => `${k}: ${v.size.width}×${v.size.height}`)
    .join(', ');

export default routeGroup('images', [
  defineRoute({
    method: 'GET',
    url: '/players/:tag/image',
    operationId: 'getPlayerImage',
    summary: 'Player image (PNG)',
    description:
      `A picture of the player. Sizes at quality high: ${sizes(PLAYER_IMAGE_OPTIONS)}. Pictures that need ` +
      'recorded history (6, 10, 13, 14) say on the picture when too little is recorded yet.',
    tags: ['Players'],
    params: { tag: tagParam },
    query: { option: option(PLAYER_IMAGE_OPTIONS, 1), quality, lang },
    // Caching and stale headers like the JSON it is drawn from (Age, X-Cache, Warning; ETag, 304).
    cacheable: true,
    response: png,
    notFound: 'Player not found',
    handler: async ({ core, params, query, headers }) =>
      reply(core.images.playerImage(params.tag, query.option, query.quality, conditional(headers, core), query.lang)),
  }),
  defineRoute({
    method: 'GET',
    url: '/players/:tag/chart',
    operationId: 'getPlayerChart',
    summary: 'Player chart (PNG)',
    description:
      'A chart of what Starr Stats recorded about the player, 1200×675. A player is recorded while people look them ' +
      'up; with too little history the picture says so.',
    tags: ['Players'],
    params: { tag: tagParam },
    query: { option: option(PLAYER_CHART_OPTIONS, 1), from: chartDate('from'), to: chartDate('to'), lang },
    // Caching and stale headers like the JSON it is drawn from (Age, X-Cache, Warning; ETag, 304).
    cacheable: true,
    response: png,
    notFound: 'Player not found',
    handler: async ({ core, params, query, headers }) =>
      reply(core.images.playerChart(params.tag, query.option, chartRange(query), 'high', conditional(headers, core), query.lang)),
  }),
  defineRoute({
    method: 'GET',
    url: '/clubs/:tag/image',
    operationId: 'getClubImage',
    summary: 'Club image (PNG)',
    description: `A picture of the club. Sizes at quality high: ${sizes(CLUB_IMAGE_OPTIONS)}.`,
    tags: ['Clubs'],
    params: { tag: tagParam },
    query: { option: option(CLUB_IMAGE_OPTIONS, 2), quality, lang },
    // Caching and stale headers like the JSON it is drawn from (Age, X-Cache, Warning; ETag, 304).
    cacheable: true,
    response: png,
    notFound: 'Club not found',
    handler: async ({ core, params, query, headers }) =>
      reply(core.images.clubImage(params.tag, query.option, query.quality, conditional(headers, core), query.lang)),
  }),
  defineRoute({
    method: 'GET',
    url: '/clubs/:tag/chart',
    operationId: 'getClubChart',
    summary: 'Club chart (PNG)',
    description: 'A chart of what Starr Stats recorded about the club, 1200×675; with too little history the picture says so.',
    tags: ['Clubs'],
    params: { tag: tagParam },
    query: { option: option(CLUB_CHART_OPTIONS, 1), from: chartDate('from'), to: chartDate('to'), lang },
    // Caching and stale headers like the JSON it is drawn from (Age, X-Cache, Warning; ETag, 304).
    cacheable: true,
    response: png,
    notFound: 'Club not found',
    handler: async ({ core, params, query, headers }) =>
      reply(core.images.clubChart(params.tag, query.option, chartRange(query), 'high', conditional(headers, core), query.lang)),
  }),
]);
