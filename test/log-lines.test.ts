/**
 * Request log lines written from preformatted fields (src/log.ts infoLines) are byte for byte what
 * pino writes for the same fields, honour the logger's level at each line, and fall back to pino
 * itself for a logger that would write something else.
 */
import { pino } from 'pino';
import { describe, expect, it, vi } from 'vitest';
import { infoLines, preformat, TurnLines } from '../src/log.ts';
import { requestLog, requestLogHead } from '../src/http/request-log.ts';

function capture(opts: pino.LoggerOptions = {}) {
  const lines: string[] = [];
  const logger = pino({ level: 'info', base: undefined, ...opts }, { write: (s: string) => void lines.push(s) });
  return { logger, lines };
}

const sample = { head: { method: 'GET', url: '/a', route: '/a' }, tail: { status: 200, ms: 1.5, cache: 'hit' } };

describe('info lines from preformatted fields', () => {
  it('are what pino writes for the same fields, through a child with its bindings', () => {
    const { logger, lines } = capture();
    const child = logger.child({ component: 'http' });
    const write = infoLines(child, 'request', sample);
    const head = preformat({ method: 'GET', url: '/players/%23ABC?x="q"&é=\u2028', route: '/players/:tag' });
    write(head, { status: 304, ms: 0.12, cache: undefined });
    child.info({ ...head.fields, status: 304, ms: 0.12 }, 'request');
    expect(lines).toHaveLength(2);
    const [ours, theirs] = lines.map((l) => l.replace(/"time":\d+/, '"time":T'));
    expect(ours).toBe(theirs);
    expect(JSON.parse(lines[0]!)).toMatchObject({ level: 30, component: 'http', url: '/players/%23ABC?x="q"&é=\u2028', status: 304, msg: 'request' });
  });

  it('write a string field as pino does each time, the first time and again (its JSON made once)', () => {
    const { logger, lines } = capture();
    const write = infoLines(logger, 'request', sample);
    const head = preformat({ method: 'GET', url: '/a', route: '/a' });
    const states = ['hit', 'miss', 'say "hi"\n', 'é\u2028', 'a state longer than sixteen', 'hit', 'say "hi"\n', 'é\u2028', 'a state longer than sixteen'];
    for (const cache of states) {
      write(head, { status: 200, ms: 1, cache });
      logger.info({ ...head.fields, status: 200, ms: 1, cache }, 'request');
    }
    const plain = lines.map((l) => l.replace(/"time":\d+/, '"time":T'));
    for (let i = 0; i < plain.length; i += 2) expect(plain[i]).toBe(plain[i + 1]);
    expect(lines.filter((_, i) => i % 2 === 0).map((l) => (JSON.parse(l) as { cache: string }).cache)).toEqual(states);
  });

  it('of a request (its status, ms and cache formatted by requestLog) are what pino writes, without calling it', () => {
    const { logger, lines } = capture();
    const child = logger.child({ component: 'http' });
    const info = vi.spyOn(child, 'info');
    const log = requestLog(child);
    const head = requestLogHead('GET', '/players/%23ABC?limit=3', '/players/:tag');
    const cases: [number, number, string | undefined][] = [
      [200, 0.05, 'hit'],
      [200, 12.34, 'miss'],
      [304, 0, 'stale'],
      [404, 1, undefined],
      [503, 100000.01, 'say "hi"'],
      [200, 0.05, 'hit'],
    ];
    for (const [status, ms, cache] of cases) log(head, status, ms, cache);
    expect(info).not.toHaveBeenCalled();
    for (const [status, ms, cache] of cases) child.info({ ...head.fields, status, ms, cache }, 'request');
    const plain = lines.map((l) => l.replace(/"time":\d+/, '"time":T'));
    expect(plain.slice(0, cases.length)).toEqual(plain.slice(cases.length));
  });

  it('go through pino when the fields are formatted otherwise than pino would', () => {
    const { logger, lines } = capture();
    const info = vi.spyOn(logger, 'info');
    const write = infoLines(logger, 'request', sample, (t) => `,"status":${t.status}`);
    write(preformat({ method: 'GET', url: '/a', route: '/a' }), { status: 200, ms: 1, cache: 'hit' });
    expect(info).toHaveBeenCalledTimes(1);
    expect(JSON.parse(lines[0]!)).toMatchObject({ method: 'GET', status: 200, ms: 1, cache: 'hit', msg: 'request' });
  });

  it('honour the level the logger has at each line', () => {
    const { logger, lines } = capture();
    const log = requestLog(logger.child({ component: 'http' }));
    const head = requestLogHead('GET', '/brawlers?api_key=secret', '/brawlers');
    log(head, 200, 0.123, 'hit');
    logger.level = 'warn';
    log(head, 200, 0.1, 'hit');
    logger.level = 'info';
    log(head, 404, 2, undefined);
    expect(lines.map((l) => JSON.parse(l) as Record<string, unknown>)).toMatchObject([
      { method: 'GET', url: '/brawlers?api_key=***', route: '/brawlers', status: 200, ms: 0.12, cache: 'hit' },
      { status: 404, ms: 2 },
    ]);
    expect(lines[1]).not.toContain('cache');
  });

  it('go through pino for a logger with a mixin or serializers of these fields', () => {
    for (const opts of [{ mixin: () => ({ extra: 1 }) }, { serializers: { url: () => 'hidden' } }] as pino.LoggerOptions[]) {
      const { logger, lines } = capture(opts);
      infoLines(logger, 'request', sample)(preformat({ method: 'GET', url: '/a', route: '/a' }), { status: 200, ms: 1 });
      logger.info({ method: 'GET', url: '/a', route: '/a', status: 200, ms: 1 }, 'request');
      expect(lines[0]!.replace(/"time":\d+/, '')).toBe(lines[1]!.replace(/"time":\d+/, ''));
    }
  });
});

describe('the log destination (TurnLines in front of sonic-boom)', () => {
  /** a stand-in for sonic-boom recording what it is handed */
  function fakeBoom() {
    const writes: string[] = [];
    const calls: string[] = [];
    const boom = {
      write: (s: string) => void writes.push(s),
      flush: (cb?: () => void) => {
        calls.push('flush');
        cb?.();
      },
      flushSync: () => void calls.push('flushSync'),
      end: () => void calls.push('end'),
    };
    return { boom: boom as unknown as ConstructorParameters<typeof TurnLines>[0], writes, calls };
  }

  it('hands sonic-boom the lines of one event-loop turn as one write, in order', async () => {
    const { boom, writes } = fakeBoom();
    const logger = pino({ level: 'info', base: undefined }, new TurnLines(boom));
    const log = requestLog(logger.child({ component: 'http' }));
    log(requestLogHead('GET', '/a', '/a'), 200, 1, 'hit');
    logger.warn('between');
    log(requestLogHead('GET', '/b', '/b'), 404, 2, undefined);
    expect(writes).toEqual([]);
    await new Promise((r) => setImmediate(r));
    expect(writes).toHaveLength(1);
    expect(writes[0]!.split('\n').filter(Boolean).map((l) => (JSON.parse(l) as { url?: string; msg: string }).url ?? (JSON.parse(l) as { msg: string }).msg)).toEqual(['/a', 'between', '/b']);
    logger.info('next turn');
    await new Promise((r) => setImmediate(r));
    expect(writes).toHaveLength(2);
  });

  it('writes what waits before a flush, and before the process exits', async () => {
    const { boom, writes, calls } = fakeBoom();
    const logger = pino({ level: 'info', base: undefined }, new TurnLines(boom));
    logger.info('one');
    await new Promise<void>((resolve) => logger.flush(() => resolve()));
    expect(writes).toHaveLength(1);
    expect(calls).toEqual(['flush']);

    // a real process: a line logged just before process.exit() reaches stdout
    const { execFileSync } = await import('node:child_process');
    const script = "const { createLogger } = await import('./src/log.ts'); createLogger({ LOG_LEVEL: 'info' }).info('last words'); process.exit(3);";
    let out = '';
    try {
      execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { cwd: new URL('..', import.meta.url), encoding: 'utf8' });
    } catch (e) {
      expect((e as { status: number }).status).toBe(3);
      out = (e as { stdout: string }).stdout;
    }
    expect(out).toContain('"msg":"last words"');
  });
});
