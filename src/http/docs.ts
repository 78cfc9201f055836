/**
 * The OpenAPI document of the running server and /docs, its interactive reference.
 *
 * /docs is Swagger UI as FastAPI services serve it, with "Try it out", from @fastify/swagger-ui's
 * own copy of swagger-ui-dist: no CDN, works offline. @fastify/swagger holds the document in
 * static mode, so /openapi.json, /docs/json and the page show one and the same object, built by
 * openapi.ts from the route specs. "Try it out" calls this server from the browser, which the
 * CORS headers of every answer allow.
 */
import fastifySwagger from '@fastify/swagger';
import fastifySwaggerUi from '@fastify/swagger-ui';
import type { FastifyPluginAsync } from 'fastify';
import { buildOpenApi, SERVICE_NAME } from './openapi.ts';
import type { HttpRuntime } from './route.ts';

export const DOCS_PREFIX = '/docs';

const documents = new WeakMap<HttpRuntime, { doc: Record<string, unknown>; json: string }>();

/** The document of every route registered so far, built once per server. */
export function openApiOf(rt: HttpRuntime): { doc: Record<string, unknown>; json: string } {
  let d = documents.get(rt);
  if (!d) {
    const doc = buildOpenApi(rt.routes, {
      serviceVersion: rt.serviceVersion,
      rateLimitFree: rt.core.config.RATE_LIMIT_FREE,
      rateLimitKey: rt.core.config.RATE_LIMIT_KEY,
    }) as unknown as Record<string, unknown>;
    d = { doc, json: JSON.stringify(doc) };
    documents.set(rt, d);
  }
  return d;
}

/**
 * Registered after every route group (server.ts), so the document it builds lists them all.
 * The page and its scripts are checked against the client's rate limit but not counted: reading
 * the reference costs nothing, the calls made with "Try it out" count as usual.
 */
export const docs: FastifyPluginAsync = async (app) => {
  app.addHook('onRoute', (route) => {
    route.config = { ...(route.config as object | undefined), rateLimit: 'peek' } as typeof route.config;
  });
  await app.register(fastifySwagger, { mode: 'static', specification: { document: openApiOf(app.starr).doc as never } });
  await app.register(fastifySwaggerUi, {
    routePrefix: DOCS_PREFIX,
    // no logo of another project over this one's reference
    logo: null as never,
    theme: { title: `${SERVICE_NAME} API reference` },
    uiConfig: {
      // the page without Swagger's top bar, whose box invites loading some other document
      layout: 'BaseLayout',
      // every endpoint listed on arrival, grouped by the interface's sections
      docExpansion: 'list',
      deepLinking: true,
      displayRequestDuration: true,
      filter: true,
      defaultModelsExpandDepth: 1,
      defaultModelExpandDepth: 2,
    },
  });
};
