import { describe, expect, it } from 'vitest';

import type { BenchSection } from './BenchReport.js';
import { formatReport } from './formatReport.js';
import { benchCompaction } from './sections/compaction.js';
import { benchHarness } from './sections/harness.js';

const options = { smoke: true, log: () => {} };
const bhrainValues = (section: BenchSection) =>
  section.rows.flatMap((row) =>
    Object.entries(row.values)
      .filter(([subject]) => subject.startsWith('bhrain'))
      .map(([, value]) => value),
  );

describe('npm run bench, smoke (one short run of each, so the bench cannot rot)', () => {
  it('harness: bhrain, Claude Code and Qwen Code all complete the scripted task and are measured', async () => {
    const section = await benchHarness(options);
    expect(section.notes.filter((note) => /not measured|did not complete/.test(note))).toEqual([]);
    const wall = section.rows.find((row) => row.metric.startsWith('wall time'))!;
    for (const subject of ['bhrain (claude protocol)', 'claude code', 'bhrain (qwen protocol)', 'qwen code'])
      expect(wall.values[subject]).toBeGreaterThan(0);
    expect(section.rows.find((row) => row.metric.startsWith('prompt-cache share'))!.values['bhrain (claude protocol)']).toBeGreaterThan(0);
    expect(bhrainValues(section).every((value) => typeof value === 'number')).toBe(true);
  }, 120_000);

  it('compaction: both strategies compact, and the report formats', async () => {
    const section = await benchCompaction(options);
    const compactions = section.rows.find((row) => row.metric === 'compactions')!;
    expect(compactions.values['summarize-on-limit']).toBeGreaterThan(0);
    expect(compactions.values.truncate).toBeGreaterThan(0);
    const text = formatReport({
      date: new Date().toISOString(),
      machine: { cpu: 'x', cores: 2, memoryGb: 1, node: 'v20', platform: 'linux' },
      smoke: true,
      sections: [section],
      elapsedMs: 1,
    });
    expect(text).toContain('| compactions | count |');
  }, 60_000);
});
