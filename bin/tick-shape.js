/**
 * Keeps one of Node's tick objects alive for the life of the process, so that `process.nextTick`
 * stays cheap in a long-running service. bin/starr.js holds it before anything else runs (the
 * bundle's build, the service's start-up): the collections that lose the shape start at once.
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
 */
import { executionAsyncResource } from 'node:async_hooks';

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
