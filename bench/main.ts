// npm run bench: measures bhrain beside Claude Code and Qwen Code, prints the tables, writes bench/results/latest.json
// and the bench block of docs/benchmarks.md from it
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

import { formatReport, replaceReadmeBench } from './formatReport.js';
import { findPackageRoot } from './peers.js';
import { runBench } from './runBench.js';

const smoke = process.argv.includes('--smoke');
// --only <section>: one section, printed but not saved, so a partial run never overwrites the full report
const onlyAt = process.argv.indexOf('--only');
const only = onlyAt >= 0 ? (process.argv[onlyAt + 1] ?? '') : undefined;
const report = await runBench({ smoke, only, log: (line) => process.stderr.write(`${line}\n`) });
if (only === undefined) {
  const dir = join(findPackageRoot(), 'bench', 'results');
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, smoke ? 'smoke.json' : 'latest.json'), `${JSON.stringify(report, null, 2)}\n`);
  if (!smoke) {
    const page = join(findPackageRoot(), 'docs', 'benchmarks.md');
    await writeFile(page, replaceReadmeBench(await readFile(page, 'utf8'), report));
  }
}
process.stdout.write(`${formatReport(report)}\n`);
