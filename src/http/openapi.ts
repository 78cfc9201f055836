/**
 * The OpenAPI 3.1.0 document, generated from the route specs: the zod schemas that validate
 * parameters and describe bodies are turned into JSON Schema by zod itself (z.toJSONSchema), so
 * there is no hand-kept copy to drift.
 */
import { z } from 'zod';
import * as upstream from '../upstream/schemas.ts';
import { responseSpec, type RouteDef } from './route.ts';
import * as own from './schemas.ts';

export const API_VERSION = '1.2.0';
export const SERVICE_NAME = 'Starr Stats';
export const NOT_AFFILIATED =
  'Starr Stats is a fan project. It is not affiliated with, endorsed, sponsored or specifically approved by Supercell, ' +
  "and Supercell is not responsible for it. For more information see Supercell's Fan Content Policy: " +
  'www.supercell.com/fan-content-policy.';
export const CREDIT =
  'Statistics collected from the official Brawl Stars API by Starr Stats. If you publish them, please credit "Starr Stats".';

/** Tag order and descriptions, following the interface's sections. */
export const TAGS: { name: string; description: string }[] = [
  { name: 'Utility', description: 'API keys.' },
  { name: 'Brawlers', description: 'The brawler catalogue.' },
  { name: 'Players', description: 'Player profiles, battle logs, history, images and charts.' },
  { name: 'Rankings', description: 'Global and country rankings of players, clubs and brawlers.' },
  { name: 'Game data', description: 'CSV files built from the official catalogue.' },
  { name: 'Events and maps', description: 'Game events and maps.' },
  { name: 'Clubs', description: 'Club profiles, history, images and charts.' },
  { name: 'Service', description: 'Service information, health and metrics (not part of the statistics interface).' },
];

type Json = Record<string, unknown>;

const MAX = Number.MAX_SAFE_INTEGER;

/** zod writes z.int()'s safe-integer range into every integer; it says nothing to a reader. */
function tidy(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(tidy);
  if (node === null || typeof node !== 'object') return node;
  const out: Json = {};
  for (const [k, v] of Object.entries(node as Json)) {
    if (k === '$schema' || k === '$id') continue;
    if ((k === 'minimum' && v === -MAX) || (k === 'maximum' && v === MAX)) continue;
    out[k] = tidy(v);
  }
  return out;
}

/**
 * A transform's output type is unknown to zod, so it is documented by its input side; a transform
 * from a nullable value (a null brawler name becoming '') documents the non-null type it yields.
 * Metadata on the transform itself (description, examples) is kept.
 */
function describeTransforms(ctx: { zodSchema: z.core.$ZodType; jsonSchema: z.core.JSONSchema.BaseSchema }) {
  const def = ctx.zodSchema._zod.def as { type: string; in?: z.ZodType; out?: z.core.$ZodType };
  if (def.type === 'pipe' && def.out?._zod.def.type === 'transform' && def.in) {
    const inDef = def.in._zod.def as { type: string; innerType?: z.ZodType };
    const source = inDef.type === 'nullable' && inDef.innerType ? inDef.innerType : def.in;
    const input = tidy(z.toJSONSchema(source, { io: 'input', unrepresentable: 'any' })) as Json;
    const own = ctx.jsonSchema as Json;
    const kept = Object.fromEntries(
      ['description', 'examples', 'format', 'title', 'default'].filter((k) => own[k] !== undefined).map((k) => [k, own[k]]),
    );
    for (const k of Object.keys(own)) delete own[k];
    Object.assign(own, input, kept);
  }
}

const idOf = (s: z.ZodType): string | undefined => (z.globalRegistry.get(s) as { id?: string } | undefined)?.id;

function inputSchema(s: z.ZodType): Json {
  return tidy(z.toJSONSchema(s, { io: 'input', unrepresentable: 'any', override: describeTransforms })) as Json;
}

const title = (name: string) => name.replace(/_/g, ' ').replace(/([a-z])([A-Z])/g, '$1 $2').replace(/^./, (c) => c.toUpperCase());

function parameter(name: string, where: 'path' | 'query', schema: z.ZodType): Json {
  const { description, ...rest } = inputSchema(schema);
  const optional = schema.safeParse(undefined).success;
  return {
    name,
    in: where,
    required: where === 'path' || !optional,
    ...(description ? { description } : {}),
    schema: { ...rest, title: title(name) },
  };
}

const rateHeaders: Json = {
  'RateLimit-Limit': { $ref: '#/components/headers/RateLimit-Limit' },
  'RateLimit-Remaining': { $ref: '#/components/headers/RateLimit-Remaining' },
  'RateLimit-Reset': { $ref: '#/components/headers/RateLimit-Reset' },
};

const cacheHeaders: Json = {
  'Cache-Control': { $ref: '#/components/headers/Cache-Control' },
  ETag: { $ref: '#/components/headers/ETag' },
  Age: { $ref: '#/components/headers/Age' },
  Warning: { $ref: '#/components/headers/Warning' },
  'X-Cache': { $ref: '#/components/headers/X-Cache' },
  'X-Stale-Reason': { $ref: '#/components/headers/X-Stale-Reason' },
};

const jsonContent = (ref: string) => ({ 'application/json': { schema: { $ref: `#/components/schemas/${ref}` } } });

function errorResponse(description: string, extraHeaders: Json = {}): Json {
  return { description, headers: { ...rateHeaders, ...extraHeaders }, content: jsonContent('HTTPError') };
}

export interface OpenApiOptions {
  serviceVersion: string;
  rateLimitFree: number;
  rateLimitKey: number;
}

export function buildOpenApi(defs: RouteDef[], opts: OpenApiOptions): Json {
  const registry = z.registry<{ id: string }>();
  const named = new Map<z.ZodType, string>();
  const name = (s: z.ZodType, id: string) => {
    if (!named.has(s) && ![...named.values()].includes(id)) {
      named.set(s, id);
      registry.add(s, { id });
    }
    return named.get(s)!;
  };
  for (const [k, v] of Object.entries(upstream)) if (v instanceof z.ZodType) name(v, k);
  for (const v of Object.values(own)) if (v instanceof z.ZodType) name(v, idOf(v)!);

  const visible = defs.filter((d) => !d.spec.hidden);
  const bodies = new Map<RouteDef, { ref?: string; inline?: z.ZodType; contentType: string; description: string }>();
  for (const d of visible) {
    const r = responseSpec(d.spec.response);
    const contentType = r.contentType ?? 'application/json';
    const known = named.get(r.schema) ?? idOf(r.schema);
    const isObject = contentType.includes('json');
    const ref = isObject ? (known ? name(r.schema, known) : name(r.schema, `${title(d.spec.operationId).replace(/ /g, '')}Response`)) : undefined;
    bodies.set(d, {
      ...(ref ? { ref } : { inline: r.schema }),
      contentType,
      description: r.description ?? 'Successful Response',
    });
  }

  const generated = z.toJSONSchema(registry, {
    io: 'output',
    unrepresentable: 'any',
    uri: (id) => `#/components/schemas/${id}`,
    override: describeTransforms,
  });

  const paths: Record<string, Json> = {};
  for (const d of visible) {
    const { spec } = d;
    const body = bodies.get(d)!;
    const path = spec.url.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
    const parameters = [
      ...Object.entries(d.params).map(([n, s]) => parameter(n, 'path', s)),
      ...Object.entries(d.query).map(([n, s]) => parameter(n, 'query', s)),
    ];
    const okHeaders = { ...rateHeaders, ...(spec.cacheable ? cacheHeaders : {}) };
    const responses: Record<string, Json> = {
      200: {
        description: body.description,
        headers: okHeaders,
        content: {
          [body.contentType]: { schema: body.ref ? { $ref: `#/components/schemas/${body.ref}` } : inputSchema(body.inline!) },
        },
      },
    };
    if (spec.cacheable) {
      responses[304] = { description: 'Not Modified: the ETag given in If-None-Match is still current.', headers: okHeaders };
    }
    const acceptsKey = spec.apiKey ?? true;
    if (acceptsKey) responses[401] = errorResponse('Invalid API key.');
    if (spec.premium) responses[403] = errorResponse("The API key's plan does not include premium endpoints.");
    if (spec.notFound) responses[404] = errorResponse(spec.notFound);
    if (parameters.length > 0) {
      responses[422] = {
        description:
          'Validation Error: a parameter is missing, of the wrong type or out of bounds. Every problem is listed, path ' +
          'parameters first, with pydantic v2 error types and messages.',
        headers: rateHeaders,
        content: jsonContent('HTTPValidationError'),
      };
    }
    responses[429] = errorResponse('Rate limit exceeded.', { 'Retry-After': { $ref: '#/components/headers/Retry-After' } });
    if (spec.cacheable) {
      responses[503] = errorResponse('The game API is down (or in maintenance) and no cached copy exists.', {
        'Retry-After': { $ref: '#/components/headers/Retry-After' },
      });
    }
    for (const [status, description] of Object.entries(spec.errors ?? {})) responses[status] = errorResponse(description);

    const premiumNote = spec.premium ? ' Premium: requires an API key whose plan includes premium endpoints.' : '';
    paths[path] ??= {};
    paths[path]![spec.method.toLowerCase()] = {
      tags: spec.tags,
      summary: spec.summary,
      ...(spec.description || premiumNote ? { description: `${spec.description ?? ''}${premiumNote}`.trim() } : {}),
      operationId: spec.operationId,
      ...(parameters.length > 0 ? { parameters } : {}),
      responses,
      ...(acceptsKey ? { security: spec.premium ? [{ APIKeyQuery: [] }] : [{}, { APIKeyQuery: [] }] } : {}),
    };
  }

  const allSchemas = tidy(generated.schemas) as Record<string, Json>;
  // Only what the paths reach (directly or through other schemas) goes into components.
  const used = new Set<string>(['HTTPError', 'HTTPValidationError']);
  const walk = (node: unknown) => {
    if (Array.isArray(node)) node.forEach(walk);
    else if (node && typeof node === 'object') {
      for (const [k, v] of Object.entries(node as Json)) {
        if (k === '$ref' && typeof v === 'string' && v.startsWith('#/components/schemas/')) {
          const id = v.slice('#/components/schemas/'.length);
          if (!used.has(id)) {
            used.add(id);
            walk(allSchemas[id]);
          }
        } else walk(v);
      }
    }
  };
  walk(paths);
  walk(allSchemas.HTTPValidationError);
  const schemas = Object.fromEntries(Object.entries(allSchemas).filter(([id]) => used.has(id)).sort(([a], [b]) => a.localeCompare(b)));

  const usedTags = new Set(visible.flatMap((d) => d.spec.tags));
  return {
    openapi: '3.1.0',
    info: {
      title: SERVICE_NAME,
      version: API_VERSION,
      summary: 'Brawl Stars statistics: players, clubs, brawlers, rankings, events, maps, images and charts.',
      description: [
        'A read-only statistics service for Brawl Stars. Statistics are collected by polling the official game API, so ' +
          'they can be incomplete or lag behind the game. Responses are largely cached for about 120 seconds.',
        `Free use needs no key and is limited to ${opts.rateLimitFree} requests per minute per client IP. With an API key ` +
          `(POST /generate-api-keys) the limit is ${opts.rateLimitKey} requests per minute per key; premium endpoints ` +
          'require one. Every response carries RateLimit-Limit, RateLimit-Remaining and RateLimit-Reset.',
        'Tags go in paths with or without their leading # (written %23), in any case.',
        CREDIT,
        NOT_AFFILIATED,
      ].join('\n\n'),
      license: { name: 'MIT', identifier: 'MIT' },
      'x-service-version': opts.serviceVersion,
    },
    servers: [{ url: '/' }],
    tags: TAGS.filter((t) => usedTags.has(t.name)),
    paths,
    components: {
      schemas,
      securitySchemes: {
        APIKeyQuery: {
          type: 'apiKey',
          in: 'query',
          name: 'api_key',
          description: 'An API key from POST /generate-api-keys.',
        },
      },
      headers: {
        'RateLimit-Limit': { description: 'Requests allowed per window (one minute).', schema: { type: 'integer' } },
        'RateLimit-Remaining': { description: 'Requests left in the current window.', schema: { type: 'integer' } },
        'RateLimit-Reset': { description: 'Seconds until the window resets.', schema: { type: 'integer' } },
        'Retry-After': { description: 'Seconds to wait before trying again.', schema: { type: 'integer' } },
        'Cache-Control': { description: 'public, max-age=<seconds this copy stays fresh>', schema: { type: 'string' } },
        ETag: { description: 'Entity tag of the body; send it back in If-None-Match for a 304.', schema: { type: 'string' } },
        Age: { description: 'Seconds since the data came from the game API.', schema: { type: 'integer' } },
        Warning: {
          description:
            '110 - "Response is Stale" when the game API failed or did not answer within 1 s and the last good copy is served ' +
            '(or a picture of the previous copy while the refreshed one is drawn).',
          schema: { type: 'string' },
        },
        'X-Cache': { description: 'STALE when the copy is past its freshness (see Warning).', schema: { type: 'string' } },
        'X-Stale-Reason': {
          description:
            'Why a stale copy was served: maintenance, throttled, unavailable, malformed_response, or slow (no answer within 1 s); ' +
            'for a picture, also drawing (the picture of the previous copy, while the refreshed one is drawn).',
          schema: { type: 'string' },
        },
      },
    },
  };
}
