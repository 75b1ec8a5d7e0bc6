import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 20_000,
    pool: 'forks',
    // Under CI a JSON report lets .ci/run print a one-line "N passed, N failed" summary.
    reporters: process.env.CI
      ? ['default', ['json', { outputFile: '.vitest-report.json' }]]
      : ['default'],
  },
});
