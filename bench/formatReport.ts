import type { BenchReport, BenchRow } from './BenchReport.js';

const cell = (value: number | null | undefined): string =>
  value === null || value === undefined ? '–' : Number.isInteger(value) ? value.toLocaleString('en-US') : String(value);

const verdict = (row: BenchRow): string =>
  !row.target ? '' : `${row.target.text}: ${row.target.met === null ? 'not measured' : row.target.met ? 'met' : 'MISSED'}`;

/**
 * .what = a report as markdown tables, one per section, with ratios and target verdicts
 * .why = printed by `npm run bench` and pasted into the readme as is
 */
export const formatReport = (report: BenchReport): string =>
  [
    `bench ${report.smoke ? '(smoke) ' : ''}${report.date.slice(0, 10)} on ${report.machine.cpu}, ${report.machine.cores} cores, ${report.machine.memoryGb} GB, node ${report.machine.node}, ${report.machine.platform}; ${Math.round(report.elapsedMs / 1000)} s`,
    ...report.sections.map((section) => {
      const subjects = [...new Set(section.rows.flatMap((row) => Object.keys(row.values)))];
      const ratioNames = [...new Set(section.rows.flatMap((row) => Object.keys(row.ratios ?? {})))];
      const header = ['metric', 'unit', ...subjects, ...ratioNames, 'target'];
      const lines = section.rows.map((row) => [
        row.metric,
        row.unit,
        ...subjects.map((subject) => cell(row.values[subject])),
        ...ratioNames.map((name) => cell(row.ratios?.[name])),
        verdict(row),
      ]);
      return [
        `### ${section.title}`,
        '',
        `| ${header.join(' | ')} |`,
        `|${header.map(() => '---').join('|')}|`,
        ...lines.map((line) => `| ${line.join(' | ')} |`),
        ...(section.notes.length ? ['', ...section.notes.map((note) => `- ${note}`)] : []),
      ].join('\n');
    }),
  ].join('\n\n');
