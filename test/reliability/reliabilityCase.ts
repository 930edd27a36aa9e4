// a reliability case: a vitest test whose outcome is also counted in the suite's summary (tried, survived, lost)
import { appendFileSync } from 'node:fs';

import { inject, it } from 'vitest';

/**
 * .what = declares one fault or abuse case; it survives when every promise it checks holds
 * .why = the suite prints how many cases were tried, survived and lost, and the readme keeps that count
 */
export const reliabilityCase = (name: string, run: () => Promise<void>, timeoutMs = 30_000) =>
  it(
    name,
    async () => {
      const record = (survived: boolean) => appendFileSync(inject('reliabilityLog'), `${JSON.stringify({ name, survived })}\n`);
      try {
        await run();
      } catch (error) {
        record(false);
        throw error;
      }
      record(true);
    },
    timeoutMs,
  );
