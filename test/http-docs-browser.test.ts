/**
 * /docs in a real browser: Debian's Chromium, headless, driven by playwright-core. The page must
 * load with no script failing and nothing fetched from elsewhere, list every operation of
 * /openapi.json, and run one "Try it out" call to a 200.
 *
 * In CI (CI=true) a missing browser fails the suite; elsewhere the test is skipped and its name
 * says why.
 */
import { existsSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromium, type Browser, type Page } from 'playwright-core';
import { createHttpServer } from '../src/http/server.ts';
import { serve, type HttpClient } from './support/http.ts';
import { startWorld, type TestWorld } from './support/world.ts';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];
const present = existsSync(CHROMIUM);
const inCi = process.env.CI === 'true' || process.env.CI === '1';
// Waits for the page are a guard against hanging, not an assertion about speed: a busy machine
// may take long to start a browser.
const PATIENCE_MS = 90_000;

let w: TestWorld;
let http: HttpClient;
let browser: Browser | undefined;

if (!present && !inCi) console.warn(`Skipping the /docs browser test: no Chromium at ${CHROMIUM} (apt-get install chromium, or set CHROMIUM_PATH).`);

beforeAll(async () => {
  if (!present) return;
  w = await startWorld({ env: { RATE_LIMIT_FREE: '100000' } });
  http = await serve(createHttpServer(w.core, { now: w.now }));
  browser = await chromium.launch({ executablePath: CHROMIUM, args: FLAGS, timeout: PATIENCE_MS });
}, PATIENCE_MS * 2);

afterAll(async () => {
  await browser?.close();
  await http?.close();
  await w?.close();
});

interface Trouble {
  problems: string[];
}

/** A page that records every script error, failed or refused request, and request elsewhere. */
async function openDocs(): Promise<Page & Trouble> {
  const page = (await browser!.newPage({ viewport: { width: 1280, height: 900 } })) as Page & Trouble;
  page.problems = [];
  page.on('pageerror', (e) => page.problems.push(`script error: ${e.message}`));
  page.on('console', (m) => {
    if (m.type() === 'error') page.problems.push(`console error: ${m.text()}`);
  });
  page.on('requestfailed', (r) => page.problems.push(`request failed: ${r.url()} ${r.failure()?.errorText ?? ''}`));
  page.on('response', (r) => {
    if (r.status() >= 400) page.problems.push(`${r.status()} for ${r.url()}`);
  });
  // Nothing may come from the internet (no CDN): such a request is refused and recorded.
  await page.route('**/*', (route) => {
    const url = route.request().url();
    if (url.startsWith(`${http.base}/`) || url.startsWith('data:')) return route.continue();
    page.problems.push(`request elsewhere: ${url}`);
    return route.abort();
  });
  const answer = await page.goto(`${http.base}/docs`, { timeout: PATIENCE_MS });
  expect(answer?.status()).toBe(200);
  // 'load' has fired: every script has loaded and run, so a failure is known now, not after a wait.
  expect(page.problems).toEqual([]);
  await page.locator('.opblock').first().waitFor({ timeout: PATIENCE_MS });
  return page;
}

const title = `/docs in headless Chromium lists every endpoint and runs "Try it out"`;
const run = present || inCi ? it : it.skip;

describe('/docs in a browser', () => {
  run(present || inCi ? title : `${title} (skipped: no browser at ${CHROMIUM}; apt-get install chromium)`, async () => {
    expect(present, `CI needs Chromium at ${CHROMIUM} (.ci/run installs Debian's chromium package)`).toBe(true);
    const page = await openDocs();
    try {
      const doc = (await http.get('/openapi.json')).json() as { paths: Record<string, Record<string, unknown>> };
      const documented = Object.entries(doc.paths)
        .flatMap(([path, methods]) => Object.keys(methods).map((m) => `${m.toUpperCase()} ${path}`))
        .sort();
      expect(documented.length).toBeGreaterThan(20);
      const listed = (
        await page.$$eval('.opblock', (blocks) =>
          blocks.map((b) => `${b.querySelector('.opblock-summary-method')?.textContent ?? ''} ${b.querySelector('.opblock-summary-path')?.getAttribute('data-path') ?? ''}`),
        )
      ).sort();
      expect(listed).toEqual(documented);
      expect(await page.title()).toBe('Starr Stats API reference');

      // Try it out: one brawler, by an id taken from the catalogue the service serves.
      const brawler = (await http.get('/brawlers')).json().items[0] as { id: number; name: string };
      const op = page.locator('.opblock', { has: page.locator('.opblock-summary-path[data-path="/brawlers/{brawlerId}"]') });
      await op.locator('.opblock-summary').first().click();
      await op.locator('.try-out__btn').click();
      await op.locator('tr[data-param-name="brawlerId"] input').fill(String(brawler.id));
      await op.locator('button.execute').click();
      const status = op.locator('.live-responses-table tbody .response-col_status');
      await status.first().waitFor({ timeout: PATIENCE_MS });
      expect((await status.first().textContent())?.trim()).toBe('200');
      const body = JSON.parse((await op.locator('.live-responses-table tbody .response-col_description pre').first().textContent()) ?? '');
      expect(body).toMatchObject({ id: brawler.id, name: brawler.name });
      expect(await op.locator('.request-url pre').first().textContent()).toBe(`${http.base}/brawlers/${brawler.id}`);

      expect(page.problems).toEqual([]);
    } finally {
      await page.close();
    }
  }, PATIENCE_MS * 3);
});
