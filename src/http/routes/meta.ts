/**
 * The service's own documents: GET / (about), /healthz, /readyz, /metrics, /openapi.json (/docs: docs.ts).
 * The health routes are also a group of their own: what a worker or bot process serves on its port.
 */
import { z } from 'zod';
import { openApiOf } from '../docs.ts';
import { PROMETHEUS_CONTENT_TYPE } from '../metrics.ts';
import { API_VERSION, CREDIT, NOT_AFFILIATED, SERVICE_NAME } from '../openapi.ts';
import { defineRoute, json, raw, routeGroup } from '../route.ts';
import { Health, Readiness, ServiceInfo } from '../schemas.ts';

/** How long readiness waits for the game API before calling it unreachable. */
const READY_TIMEOUT_MS = 5000;

async function check(run: () => Promise<string | null>): Promise<{ ok: boolean; detail?: string }> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<string>((resolve) => {
    timer = setTimeout(() => resolve(`no answer within ${READY_TIMEOUT_MS / 1000} s`), READY_TIMEOUT_MS);
  });
  try {
    const problem = await Promise.race([run(), timeout]);
    return problem === null ? { ok: true } : { ok: false, detail: problem };
  } catch (e) {
    return { ok: false, detail: e instanceof Error ? e.message : String(e) };
  } finally {
    clearTimeout(timer);
  }
}

const about = defineRoute({
  method: 'GET',
  url: '/',
  operationId: 'about',
  summary: 'About this service',
  tags: ['Service'],
  apiKey: false,
  response: ServiceInfo,
  handler: async ({ runtime }) =>
    json({
      name: SERVICE_NAME,
      version: API_VERSION,
      serviceVersion: runtime.serviceVersion,
      description: 'Brawl Stars statistics: players, clubs, brawlers, rankings, events, maps, images and charts.',
      links: { docs: '/docs', openapi: '/openapi.json', health: '/healthz', ready: '/readyz', metrics: '/metrics', gameData: '/game' },
      credit: CREDIT,
      notice: NOT_AFFILIATED,
    }),
});

const health = defineRoute({
  method: 'GET',
  url: '/healthz',
  operationId: 'health',
  summary: 'Liveness',
  description: 'Answers while the process serves requests. Does not count against the rate limit.',
  tags: ['Service'],
  apiKey: false,
  rateLimit: 'peek',
  response: Health,
  handler: async ({ runtime, now }) =>
    json({
      status: 'ok',
      upstream: runtime.upstreamKind,
      cacheStore: runtime.core.stores.kind,
      durableStore: runtime.core.stores.durable.kind === 'postgres' ? 'postgres' : 'sqlite',
      uptimeSeconds: Math.floor((now() - runtime.startedAt) / 1000),
    }),
});

const ready = defineRoute({
  method: 'GET',
  url: '/readyz',
  operationId: 'ready',
  summary: 'Readiness',
  description:
    'Ready when the cache store answers, the game API (or the simulated world) answered within the cache lifetime, and ' +
    'in a cluster PostgreSQL and Redis answer, and in a process running the Discord gateway every shard is connected. ' +
    'Says which part of a cluster this process runs (role). ' +
    'Answers 503 otherwise. Does not count against the rate limit.',
  tags: ['Service'],
  apiKey: false,
  rateLimit: 'peek',
  response: Readiness,
  errors: { 503: 'Not ready: a store, PostgreSQL, Redis or the game API is unreachable.' },
  handler: async ({ core, runtime }) => {
    const checks: Record<string, Promise<{ ok: boolean; detail?: string }>> = {
      store: check(async () => ((await core.stores.ping()) ? null : `the ${core.stores.kind} cache or the ${core.stores.durable.kind} store of saved data does not answer`)),
      upstream: check(async () => {
        const f = await core.stats.brawlers();
        return f.stale ? `serving a stale copy (${f.staleReason ?? 'upstream failed'})` : null;
      }),
    };
    // The shared servers of a cluster, each by name, so an operator sees which one is down.
    if (core.stores.durable.kind === 'postgres') {
      checks.postgres = check(async () => ((await core.stores.ping('durable')) ? null : `PostgreSQL (${core.stores.durable.location}) does not answer`));
    }
    if (core.coordination.kind === 'redis') {
      checks.redis = check(async () => ((await core.coordination.ping()) ? null : 'Redis (REDIS_URL) does not answer'));
    }
    for (const [name, run] of Object.entries(runtime.readiness)) checks[name] = check(run);
    const results = Object.fromEntries(await Promise.all(Object.entries(checks).map(async ([name, p]) => [name, await p] as const)));
    const ok = Object.values(results).every((r) => r.ok);
    return json(
      {
        status: ok ? 'ready' : 'not ready',
        role: core.config.ROLE,
        checks: results,
        ...(ok ? {} : { detail: 'Not ready: see checks.' }),
      },
      ok ? 200 : 503,
    );
  },
});

const metrics = defineRoute({
  method: 'GET',
  url: '/metrics',
  operationId: 'metrics',
  summary: 'Prometheus metrics',
  description: 'Requests by route and status, latency, cache hits and misses, upstream calls by outcome.',
  tags: ['Service'],
  apiKey: false,
  rateLimit: 'peek',
  response: { schema: z.string(), contentType: PROMETHEUS_CONTENT_TYPE, description: 'Prometheus text format 0.0.4' },
  handler: async ({ runtime }) => raw(runtime.metrics.render(), PROMETHEUS_CONTENT_TYPE),
});

const openapi = defineRoute({
  method: 'GET',
  url: '/openapi.json',
  operationId: 'openapi',
  summary: 'OpenAPI document',
  tags: ['Service'],
  apiKey: false,
  hidden: true,
  response: z.unknown(),
  handler: async ({ runtime }) => raw(openApiOf(runtime).json, 'application/json; charset=utf-8', { maxAge: 300 }),
});

export default routeGroup('meta', [about, health, ready, metrics, openapi]);

/** All a worker or bot process serves: liveness, readiness and metrics for its orchestrator. */
export const healthRoutes = routeGroup('health', [health, ready, metrics]);
