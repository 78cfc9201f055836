import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Suites start real HTTP servers on loopback and sqlite files; two cores is the budget.
    pool: 'forks',
    maxWorkers: 2,
    // A guard against hangs, not a speed check (speed lives in bench/). Under `npm run test:stress`
    // on the shared 2-core machine (load average ≈ 20, 2026-11-23) the heaviest tests (every
    // picture option at every quality, `starr serve` as a process, the poller's 8-day beforeAll)
    // took 17-23 s in one run and 30-36 s in the next, failing at a 30 s limit with nothing wrong.
    testTimeout: 120_000,
    hookTimeout: 120_000,
  },
});
