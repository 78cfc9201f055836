#!/usr/bin/env node
// The `starr` command. It runs the esbuild bundle of the sources (bin/build.js), rebuilt when a
// source changes, so a fresh clone needs no build step. STARR_TSX=1, or a build that fails, runs the
// TypeScript sources through tsx instead.
import { holdTickShape, settleHttpShapes } from './shapes.js';

// first of all: keeps process.nextTick cheap for the life of the process, and gives node:http's
// request and response objects the same fast shape in every start (bin/shapes.js)
holdTickShape();
settleHttpShapes();
let entry;
if (process.env.STARR_TSX !== '1') {
  try {
    const { ensureBuilt } = await import('./build.js');
    const { pathToFileURL } = await import('node:url');
    entry = pathToFileURL(`${await ensureBuilt()}/cli.js`).href;
    // stack traces point at src/ (the render worker threads share the setting)
    process.setSourceMapsEnabled(true);
  } catch (e) {
    console.warn(`starr: cannot build the bundle (${e?.message ?? e}); running the sources through tsx`);
  }
}
if (!entry) {
  const { register } = await import('tsx/esm/api');
  register();
  entry = '../src/cli.ts';
}
const { main } = await import(entry);
process.exitCode = await main(process.argv.slice(2));
