import type { BenchReport, BenchRow } from './BenchReport.js';

// -0 (a heap that shrank by less than the rounding) is written 0, as JSON writes it in latest.json
const cell = (value: number | null | undefined): string =>
  value === null || value === undefined ? '–' : Number.isInteger(value) ? (value === 0 ? 0 : value).toLocaleString('en-US') : String(value);

const verdict = (row: BenchRow): string =>
  !row.target ? '' : `${row.target.text}: ${row.target.met === null ? 'not measured' : row.target.met ? 'met' : 'MISSED'}`;

/**
 * .what = a report as markdown tables, one per section, with ratios and target verdicts
 * .why = printed by `npm run bench`, and written into docs/benchmarks.md between its bench markers (replaceReadmeBench)
 */
export const formatReport = (report: BenchReport): string =>
  [
    `Last run${report.smoke ? ' (smoke)' : ''}: ${report.date.slice(0, 10)} on ${report.machine.cpu}, ${report.machine.cores} cores, ${report.machine.memoryGb} GB, node ${report.machine.node}, ${report.machine.platform}; ${Math.round(report.elapsedMs / 1000)} s.`,
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
        `#### ${section.title}`,
        '',
        `| ${header.join(' | ')} |`,
        `|${header.map(() => '---').join('|')}|`,
        ...lines.map((line) => `| ${line.join(' | ')} |`),
        ...(section.notes.length ? ['', ...section.notes.map((note) => `- ${note}`)] : []),
      ].join('\n');
    }),
  ].join('\n\n');

/** the bench block of docs/benchmarks.md (once the readme's, hence the names) lies between these lines; nothing between them is written by hand */
export const README_BENCH_BEGIN = '<!-- bench: written by `npm run bench` from bench/results/latest.json; edits here are overwritten -->';
export const README_BENCH_END = '<!-- bench: end -->';

/**
 * .what = a page (docs/benchmarks.md) with its bench block replaced by the report's tables
 * .why = the published numbers come from the bench's JSON, never typed by hand (a test compares the two)
 */
export const replaceReadmeBench = (readme: string, report: BenchReport): string => {
  const begin = readme.indexOf(README_BENCH_BEGIN);
  const end = readme.indexOf(README_BENCH_END);
  if (begin < 0 || end < begin)
    throw new Error(`the page has no bench block: it needs the lines ${README_BENCH_BEGIN} and ${README_BENCH_END}`);
  return `${readme.slice(0, begin + README_BENCH_BEGIN.length)}\n\n${formatReport(report)}\n\n${readme.slice(end)}`;
};
