/**
 * Two object shapes of Node's that V8 can lose, or settle badly, depending on when its collector runs
 * in a process's first seconds; bin/starr.js settles both before anything else runs (the bundle's
 * build, the service's start-up), so that every start of the service answers at the same cost.
 *
 * ## The tick object (`holdTickShape`)
 *
 * Keeps one of Node's tick objects alive for the life of the process, so that `process.nextTick`
 * stays cheap in a long-running service.
 *
 * Why: every `process.nextTick` builds `{ [async_id_symbol], [trigger_async_id_symbol], callback,
 * args }` (node:internal/process/task_queues; Node 24 adds its async context frame), and Node's
 * streams call it several times per HTTP answer (resume, emitReadable, endReadable, afterWrite, the
 * request's destroy). V8 reaches the shape of that object through transitions from `{}`'s shape,
 * and keeps a shape that no live object has for only two full collections
 * (`--retain-maps-for-n-gc=2`). Tick objects live a moment, so a service that goes idle — where
 * V8's memory reducer runs several full collections in a row — loses the shape, and the next tick
 * makes a new one. After a few such losses the literal's inline caches are megamorphic for good,
 * and from then on each of its property definitions is a call into V8's runtime
 * (`Runtime_DefineKeyedOwnPropertyInLiteral`, about 1,300 instructions each): in callgrind, 30 such
 * calls and 38,000 instructions of a cached `GET /brawlers` answer's 166,000 on the service's main
 * thread, against none in a bare node:http server (docs/benchmarks.md, *What a cached answer does,
 * and why*). Whether and when it happened depended on when the collector ran, which is part of why
 * bench:http's figures moved from one start of the service to the next.
 *
 * A tick object that stays alive keeps its shape, and the shapes it was built through (each shape
 * holds the one before it), alive: the transitions stay, the caches stay monomorphic. The object is
 * the resource of a tick whose callback only stores it, so it holds nothing else.
 *
 * ## node:http's response and request (`settleHttpShapes`)
 *
 * V8 sizes the objects a constructor makes by watching its first seven (in-object slack tracking):
 * at the seventh, it shrinks the constructor's object size to the most properties any shape in the
 * constructor's tree of shapes holds at that moment. Shapes no live object has are cleared by a
 * full collection. If the service's first responses have all been answered and collected when the
 * seventh `ServerResponse` is made — start-up runs many full collections, so this depends on when
 * they fall — V8 sees no property in use and gives every later response no room of its own (0
 * in-object properties instead of 44). Each response then keeps its 44 properties in a separate
 * array, and a keyed store (`this[kNeedDrain]`, in OutgoingMessage's constructor) with more than
 * 12 of them outside the object turns it into a dictionary (`TooManyFastProperties`). From then on
 * every response of the process is built as a hash table: 17.4 KB allocated per cached answer
 * instead of 10.9, and a slower answer (docs/benchmarks.md, *Why one start allocates more than the
 * next*). Seen in 12 of 16 starts of a scratch script making bench:http's first requests (the
 * seventeenth machine, 2026-11-30; `%HasFastProperties` of each response, and V8's `--log-maps` of
 * four of them, which showed the tree of shapes built three times and the third build normalised
 * at `kNeedDrain`), and in none of 14 with the responses made first (6 through a preload, 8
 * through bin/starr.js); `test/shapes.test.ts` makes it happen at will (a full collection after
 * each of a server's first responses).
 *
 * Making eight responses at once, before any request, ends the slack tracking while they are alive,
 * each with the properties a response has when sent (the constructor's 40 and the four node:http
 * adds; Node 20): V8 keeps room for all 44 in the object, as in a start whose collections fell
 * elsewhere (`%DebugPrint`: 44 in-object properties and no property array; made with the
 * constructor's 40 alone, the other four went to an array of their own in every response). The
 * responses are never sent anywhere, and nothing holds them afterwards.
 *
 * node:http's request object (IncomingMessage) has the same weakness, seen in the same scenario
 * (in the service's starts requests were only read for dictionary mode, and none was one; on Node
 * 20 such a request is not a dictionary, only larger): made after its first objects were
 * collected, it keeps its 27 properties in a separate array (Node 20.20), or becomes a dictionary
 * (Node 24.21). It is settled the same way, with the listener every request gets before it is
 * answered.
 */
import { executionAsyncResource } from 'node:async_hooks';
import { IncomingMessage, ServerResponse } from 'node:http';

/** @type {object | undefined} */
let held;
let asked = false;

/** Keeps a tick object alive (once per process; later calls do nothing). Call it early in start-up. */
export function holdTickShape() {
  if (asked) return;
  asked = true;
  process.nextTick(() => {
    held = executionAsyncResource();
  });
}

/** The tick object held, once the tick has run (tests). @returns {object | undefined} */
export const heldTick = () => held;

/** V8's in-object slack tracking ends at a constructor's seventh object (`Map::kSlackTrackingCounterStart`); one more for margin. */
const SLACK_TRACKING_OBJECTS = 8;
let settled = false;

/**
 * Ends V8's in-object slack tracking of node:http's ServerResponse and IncomingMessage while the
 * objects it watches are alive, each with as many properties as a response has when sent and a
 * request when answered (once per process; later calls do nothing). Call it before the process
 * answers a request.
 * @returns {number} the objects made for it (0 when already done)
 */
export function settleHttpShapes() {
  if (settled) return 0;
  settled = true;
  // what the response's constructor reads of its request
  const request = /** @type {import('node:http').IncomingMessage} */ (/** @type {unknown} */ ({ method: 'GET', httpVersionMajor: 1, httpVersionMinor: 1, headers: {} }));
  const made = [];
  for (let i = 0; i < SLACK_TRACKING_OBJECTS; i++) {
    const response = new ServerResponse(request);
    // as many properties as node:http adds to a response before sending it — its server sets
    // `_maxRequestsPerSocket` and a symbol of its own (kUniqueHeaders), writeHead `statusCode` and
    // `statusMessage` — so that V8 keeps room for them in the object too (the names do not matter,
    // the count does): no separate array for them in any response
    response._maxRequestsPerSocket = 0;
    response[Symbol('in place of node:http kUniqueHeaders')] = null;
    response.writeHead(200);
    // a request gets its first listener (`_eventsCount`, which its constructor does not set) before
    // it is answered
    const message = new IncomingMessage(null);
    message.on('end', () => {});
    made.push(response, message);
  }
  return made.length;
}
