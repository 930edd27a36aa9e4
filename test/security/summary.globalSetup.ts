// vitest global setup: gives every security attempt a shared log, and prints attempts and escapes per category at the end
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import type { TestProject } from 'vitest/node';

declare module 'vitest' {
  export interface ProvidedContext {
    securityLog?: string;
  }
}

/**
 * .what = provides `securityLog`, then prints `security: N attempts, E escapes (category e/n, ...)` and names each escape
 * .why = the readme states these numbers; a rerun prints them again
 */
export default function setup(project: TestProject) {
  const log = join(tmpdir(), `bhrain-security-${process.pid}.jsonl`);
  writeFileSync(log, '');
  project.provide('securityLog', log);
  return () => {
    const attempts = readFileSync(log, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as { category: string; name: string; escaped: boolean });
    rmSync(log, { force: true });
    if (!attempts.length) return;
    const categories = [...new Set(attempts.map((attempt) => attempt.category))];
    const perCategory = categories.map((category) => {
      const inCategory = attempts.filter((attempt) => attempt.category === category);
      return `${category} ${inCategory.filter((attempt) => attempt.escaped).length}/${inCategory.length}`;
    });
    const escaped = attempts.filter((attempt) => attempt.escaped);
    process.stdout.write(
      `\nsecurity: ${attempts.length} attempts, ${escaped.length} escapes (${perCategory.join(', ')})${escaped.length ? `:\n${escaped.map((attempt) => `  - ${attempt.category}: ${JSON.stringify(attempt.name)}`).join('\n')}` : ''}\n`,
    );
  };
}
