import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // CLI and cluster tests start several Node processes through tsx; on a loaded two-core machine
    // one start can take ten seconds, so a test gets a minute before it counts as stuck.
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Integration tests start real servers and browsers; two cores run two files at a time.
    maxWorkers: 2,
  },
});
