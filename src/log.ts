import { pino, type Logger } from 'pino';
import type { Config } from './config.ts';

export type { Logger };

/**
 * One structured logger for the process; children carry a `component` field.
 *
 * Lines go to stdout through an asynchronous sonic-boom that gathers them into writes of at least
 * 16 KB less a byte (the most sonic-boom allows below its 16 KB maxWrite; about 90 request lines),
 * or whatever is there every 200 ms: handing each line to the kernel on its own cost a thread-pool
 * round trip per request (the largest single cost of a cached answer after the socket write).
 * sonic-boom itself is handed the lines of one event-loop turn at once (`TurnLines`), in the order
 * they were written. Nothing waits for a write; what is left is written when the process exits
 * (SIGTERM, SIGINT, an uncaught error, process.exit). A process killed outright (SIGKILL, the OOM
 * killer) loses what waits in the buffer: at most the last 200 ms of lines, and never more than
 * 16 KB plus what arrived during the write under way.
 */
export function createLogger(cfg: Pick<Config, 'LOG_LEVEL'>): Logger {
  const boom = pino.destination({ dest: 1, sync: false, minLength: LOG_WRITE_BYTES, periodicFlush: LOG_FLUSH_MS });
  return pino({ level: cfg.LOG_LEVEL, base: undefined }, new TurnLines(boom));
}

type Boom = ReturnType<typeof pino.destination>;

/** Every TurnLines with lines waiting, written out when the process exits. */
const waiting = new Set<TurnLines>();
let exitHooked = false;

/**
 * pino's destination: the lines written during one turn of the event loop, handed to sonic-boom as
 * one string at the end of the turn (setImmediate), in order. sonic-boom measures its whole pending
 * buffer (Buffer.byteLength of up to 16 KB, which flattens the string it has been appending to) on
 * every write: line by line that was 4–5 µs per request line, in batches of 20 lines about 1 µs per
 * line (a micro-benchmark through pino.destination to /dev/null on the 2-core CI machine, 2026-11-24;
 * bench:http measures what it does to a cached answer, see the README).
 */
export class TurnLines {
  private parts: string[] = [];

  constructor(private readonly boom: Boom) {}

  write(line: string): boolean {
    if (this.parts.push(line) === 1) {
      setImmediate(this.drain);
      waiting.add(this);
      if (!exitHooked) {
        exitHooked = true;
        // before sonic-boom's own exit hook would have written its part: after it, ours were lost
        process.prependListener('exit', () => {
          for (const t of waiting) t.flushSync();
        });
      }
    }
    return true;
  }

  /** Hands the waiting lines to sonic-boom. */
  readonly drain = (): void => {
    if (this.parts.length === 0) return;
    const text = this.parts.length === 1 ? this.parts[0]! : this.parts.join('');
    this.parts = [];
    waiting.delete(this);
    this.boom.write(text);
  };

  /** pino's logger.flush(cb): every line written so far on its way to the kernel. */
  flush(cb?: (err?: Error) => void): void {
    this.drain();
    this.boom.flush(cb);
  }

  flushSync(): void {
    this.drain();
    this.boom.flushSync();
  }

  end(): void {
    this.drain();
    this.boom.end();
  }
}

/** Log lines are written once this many bytes wait... */
export const LOG_WRITE_BYTES = 16 * 1024 - 1;
/** ...or every this many milliseconds, whichever comes first. */
export const LOG_FLUSH_MS = 200;

/** A logger that drops everything, for tests and library use. */
export const silentLogger: Logger = pino({ level: 'silent' });

// ------------------------------------------------------------------ lines written many times a second

/** Fields of a log line formatted once, as pino formats them (`,"k":v` each), with the object for a fallback. */
export interface Preformatted {
  readonly text: string;
  readonly fields: Readonly<Record<string, string | number>>;
}

/**
 * JSON of the few short strings a line's own fields take (a cache state, a method): made once each
 * (JSON.stringify of `"hit"` was ~770 instructions of a cached answer in callgrind,
 * docs/benchmarks.md *HTTP API: cached answers*). Up to JSON_STRINGS_KEPT of them, 16 characters at
 * most; others are made each time.
 */
const jsonStrings = new Map<string, string>();
const JSON_STRINGS_KEPT = 64;

function stringJson(v: string): string {
  let j = jsonStrings.get(v);
  if (j === undefined) {
    j = JSON.stringify(v);
    if (v.length <= 16 && jsonStrings.size < JSON_STRINGS_KEPT) jsonStrings.set(v, j);
  }
  return j;
}

export const jsonValue = (v: string | number): string => (typeof v === 'number' ? (Number.isFinite(v) ? String(v) : 'null') : stringJson(v));

export function preformat(fields: Record<string, string | number | undefined>): Preformatted {
  let text = '';
  const kept: Record<string, string | number> = {};
  for (const k in fields) {
    const v = fields[k];
    if (v === undefined) continue;
    kept[k] = v;
    text += `,${JSON.stringify(k)}:${jsonValue(v)}`;
  }
  return { text, fields: kept };
}

/** A line of a kind written many times a second: fields known ahead preformatted, a few more per line. */
export type LineWriter = (head: Preformatted, tail: Record<string, string | number | undefined>) => void;

/** The per-line fields of a line as pino writes them (`,"k":v` each, undefined left out). */
export type TailFormat = (tail: Record<string, string | number | undefined>) => string;

/** Any fields, key by key (`TailFormat`). */
const anyTail: TailFormat = (t) => {
  let s = '';
  for (const k in t) {
    const v = t[k];
    if (v !== undefined) s += `,"${k}":${jsonValue(v)}`;
  }
  return s;
};

const S = pino.symbols as typeof pino.symbols & { lsCacheSym: symbol; chindingsSym: symbol; asJsonSym: symbol; timeSym: symbol; hooksSym: symbol; mixinSym: symbol };

/**
 * Writes `msg` lines at info through the logger's own stream, byte for byte what `logger.info(
 * {...head, ...tail}, msg)` writes (level, time, the child's bindings such as `component`, the
 * fields, msg), honouring the logger's level at each line — without pino's per-line work on an
 * object (its merge, serializer and stringifier look-ups per key), the larger part of a cached
 * answer's logging cost (≈ 9.5% of the main thread in a perf profile of bench:http on rankings).
 * `format` writes the per-line fields: a writer that knows its fields formats them with fewer
 * concatenations than `anyTail` (the request line, request-log.ts).
 *
 * A logger that would write something else (a mixin, hooks, formatters or serializers of these
 * fields, a multistream wanting metadata), or a `format` that writes the sample otherwise than
 * pino, is detected once, by comparing pino's own line for a sample with ours, and gets
 * `logger.info` instead.
 */
export function infoLines(
  logger: Logger,
  msg: string,
  sample: { head: Record<string, string | number>; tail: Record<string, string | number> },
  format: TailFormat = anyTail,
): LineWriter {
  const l = logger as unknown as Record<symbol, unknown>;
  const level = 30;
  const end = `,"msg":${JSON.stringify(msg)}}\n`;
  const ours = (head: Preformatted, t: Record<string, string | number | undefined>, time: string) =>
    (l[S.lsCacheSym] as Record<number, string>)[level] + time + (l[S.chindingsSym] as string) + head.text + format(t) + end;
  const hooks = l[S.hooksSym] as { logMethod?: unknown; streamWrite?: unknown } | undefined;
  const stream = l[S.streamSym] as { write(s: string): unknown; [k: symbol]: unknown };
  const plain =
    !l[S.mixinSym] &&
    !hooks?.logMethod &&
    !hooks?.streamWrite &&
    stream[S.needsMetadataGsym] !== true &&
    logger.levels.values.info === level &&
    typeof l[S.asJsonSym] === 'function' &&
    (l[S.asJsonSym] as (o: object, m: string, n: number, t: string) => string).call(logger, { ...sample.head, ...sample.tail }, msg, level, ',"time":0') ===
      ours(preformat(sample.head), sample.tail, ',"time":0');
  if (!plain) return (head, t) => logger.info({ ...head.fields, ...t }, msg);
  return (head, t) => {
    if (logger.levelVal > level) return;
    stream.write(ours(head, t, (l[S.timeSym] as () => string)()));
  };
}
