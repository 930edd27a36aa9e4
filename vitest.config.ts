import { defineConfig } from 'vitest/config';

// tests sit beside the code (src/**) and in test/ (stand-in, acceptance); all run against real HTTP, processes and files
export default defineConfig({
  test: {
    include: ['src/**/*.test.ts', 'test/**/*.test.ts', 'bench/**/*.test.ts'],
    globalSetup: ['test/reliability/summary.globalSetup.ts', 'test/security/summary.globalSetup.ts', 'test/tmpClean.globalSetup.ts'],
    setupFiles: ['test/installConfigCheck.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    typecheck: { enabled: true, include: ['src/**/*.test-d.ts'] },
  },
});
