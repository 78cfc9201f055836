/**
 * Shutting the HTTP server down (what SIGTERM does): a request it accepted before is answered in
 * full, and the connection it came on is closed after that answer, so a client's keep-alive does
 * not hold the process for the keep-alive timeout.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createHttpServer } from '../src/http/server.ts';
import { startWorld, type TestWorld } from './support/world.ts';

let w: TestWorld;

beforeAll(async () => {
  w = await startWorld({ env: { RATE_LIMIT_FREE: '1000' } });
});
afterAll(async () => {
  w.sim.faults.set({ hang: false, match: '' });
  await w?.close();
});

it('answers a request under way when closed, with Connection: close, and the close completes', async () => {
  const app = createHttpServer(w.core);
  await app.listen({ port: 0, host: '127.0.0.1' });
  const url = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`;
  const tag = encodeURIComponent(w.sim.world.clubTag(3));
  // a request on a kept-alive connection first: idle when the close begins
  expect((await fetch(`${url}/healthz`)).status).toBe(200);

  w.sim.faults.set({ hang: true, match: '/clubs/' });
  const underWay = fetch(`${url}/clubs/${tag}`);
  await w.sim.log.whenAtLeast(`/clubs/${tag}`, 1);
  const closed = app.close();
  w.sim.faults.set({ hang: false });

  const r = await underWay;
  expect(r.status).toBe(200);
  expect(r.headers.get('connection')).toBe('close');
  expect(((await r.json()) as { tag: string }).tag).toBe(decodeURIComponent(tag));
  await closed;
  // closed: nothing listens any more
  await expect(fetch(`${url}/healthz`)).rejects.toThrow();
});
