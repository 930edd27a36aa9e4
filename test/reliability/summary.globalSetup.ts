// vitest global setup: gives every reliability case a shared log, and prints the suite's summary at the end of the run
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import type { TestProject } from 'vitest/node';

declare module 'vitest' {
  export interface ProvidedContext {
    reliabilityLog: string;
  }
}

export default function setup(project: TestProject) {
  const log = join(tmpdir(), `bhrain-reliability-${process.pid}.jsonl`);
  writeFileSync(log, '');
  project.provide('reliabilityLog', log);
  return () => {
    const cases = readFileSync(log, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as { name: string; survived: boolean });
    rmSync(log, { force: true });
    if (!cases.length) return;
    const survived = cases.filter((entry) => entry.survived).length;
    const lost = cases.filter((entry) => !entry.survived);
    process.stdout.write(
      `\nreliability: ${cases.length} cases tried, ${survived} survived, ${lost.length} lost${lost.length ? `:\n${lost.map((entry) => `  - ${entry.name}`).join('\n')}` : ''}\n`,
    );
  };
}
