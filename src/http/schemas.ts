/**
 * zod schemas of the HTTP API's own bodies (errors, ranking envelopes, game files, keys, service
 * documents). Bodies that mirror the official API (player, club, battle log, brawler) use the
 * upstream schemas of src/upstream/schemas.ts unchanged. Every schema here is named in the
 * OpenAPI document by its `id`.
 */
import { z } from 'zod';
import { ROLES } from '../config.ts';
import { ClubRankingItem, PlayerRankingItem } from '../upstream/schemas.ts';

export const ValidationError = z
  .object({
    loc: z.array(z.union([z.string(), z.int()])).meta({ description: 'Where the fault is, e.g. ["query", "limit"]' }),
    msg: z.string().meta({ description: 'Message' }),
    type: z.string().meta({ description: 'Error type (pydantic v2 names: missing, int_parsing, greater_than_equal, ...)' }),
    input: z.unknown().optional().meta({ description: 'The value received (null when missing)' }),
    ctx: z.record(z.string(), z.unknown()).optional().meta({ description: 'Context, e.g. {"ge": 1}' }),
  })
  .meta({ id: 'ValidationError' });

export const HTTPValidationError = z
  .object({ detail: z.array(ValidationError).optional() })
  .meta({ id: 'HTTPValidationError', description: 'Every problem of the request, path parameters first.' });

export const HTTPError = z
  .object({ detail: z.string().meta({ description: 'What went wrong, in one sentence' }) })
  .meta({ id: 'HTTPError' });

function rankingEnvelope<T extends z.ZodType>(id: string, item: T, what: string) {
  return z
    .object({
      region: z.string().meta({ description: "Country code requested (upper case), or 'global'" }),
      timestamp: z.int().meta({ description: 'Unix time in seconds when the ranking was fetched' }),
      items: z.array(item).meta({ description: `${what} in rank order` }),
    })
    .meta({ id });
}

export const ClubRankingResponse = rankingEnvelope('ClubRankingResponse', ClubRankingItem, 'Ranked clubs');
export const PlayerRankingResponse = rankingEnvelope('PlayerRankingResponse', PlayerRankingItem, 'Ranked players');
export const BrawlerRankingResponse = rankingEnvelope(
  'BrawlerRankingResponse',
  PlayerRankingItem,
  "Ranked players (trophies are the brawler's)",
);

export const GameFile = z
  .object({
    name: z.string().meta({ description: 'File name, e.g. brawlers.csv' }),
    url: z.string().meta({ description: 'Path of the file under the base URL' }),
    rows: z.int().meta({ description: 'Data rows (the header row not counted)' }),
    updatedAt: z.string().meta({ description: 'When the file last changed (ISO 8601)' }),
    description: z.string(),
  })
  .meta({ id: 'GameFile' });

export const GameFileList = z
  .object({ items: z.array(GameFile) })
  .meta({ id: 'GameFileList', description: 'CSV game-data files built from the official catalogue' });

export const ApiKeyIssued = z
  .object({
    api_key: z.string().meta({ description: 'The key. It is shown once: store it now.' }),
    keyId: z.string().meta({ description: 'Short public id of the key (safe to log)' }),
    email: z.string(),
    plan: z.string().meta({ description: 'Plan of the account: developer (premium endpoints) or basic' }),
    premium: z.boolean().meta({ description: 'Whether the plan includes premium endpoints' }),
    rateLimit: z.object({ requests: z.int(), windowSeconds: z.int() }),
    accountCreated: z.boolean().meta({ description: 'True when this request created the account' }),
    createdAt: z.string(),
  })
  .meta({ id: 'ApiKeyIssued' });

export const ServiceInfo = z
  .object({
    name: z.string(),
    version: z.string().meta({ description: 'Version of the interface (OpenAPI info.version)' }),
    serviceVersion: z.string(),
    description: z.string(),
    links: z.record(z.string(), z.string()),
    credit: z.string(),
    notice: z.string(),
  })
  .meta({ id: 'ServiceInfo' });

export const Health = z
  .object({
    status: z.literal('ok'),
    upstream: z.enum(['official', 'simulated']),
    cacheStore: z.enum(['sqlite', 'redis']),
    /** where API keys, settings, links and boards live */
    durableStore: z.enum(['sqlite', 'postgres']),
    uptimeSeconds: z.int(),
  })
  .meta({ id: 'Health' });

export const Readiness = z
  .object({
    status: z.enum(['ready', 'not ready']),
    /** the part of a cluster this process runs (ROLE); `all` in one process */
    role: z.enum(ROLES),
    /** store and upstream always; postgres and redis when the process uses them */
    checks: z.record(z.string(), z.object({ ok: z.boolean(), detail: z.string().optional() })),
  })
  .meta({ id: 'Readiness' });
