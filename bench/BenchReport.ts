/**
 * .what = the shape of a benchmark run: sections of rows, each a metric measured for several subjects
 * .why = one table format for every section, printed and saved to bench/results/latest.json
 */
export interface BenchReport {
  /** ISO date of the run */
  date: string;
  machine: { cpu: string; cores: number; memoryGb: number; node: string; platform: string };
  smoke: boolean;
  sections: BenchSection[];
  elapsedMs: number;
}

/** .what = one section: a titled set of rows and notes */
export interface BenchSection {
  title: string;
  rows: BenchRow[];
  /** what was skipped and why, how to read the rows, what a missed target is caused by */
  notes: string[];
}

/** .what = one metric: its value per subject (bhrain, claude, qwen, rg, …), the ratios, and the target verdict */
export interface BenchRow {
  metric: string;
  unit: string;
  /** median (or single) value per subject; null when the subject could not be measured */
  values: Record<string, number | null>;
  /** e.g. { 'bhrain/claude': 0.42 } */
  ratios?: Record<string, number | null>;
  target?: { text: string; met: boolean | null };
}

/** .what = the options every section takes */
export interface BenchOptions {
  /** one run and few iterations of everything: the test suite's guard against rot */
  smoke: boolean;
  log: (line: string) => void;
}

/** .what = the median of numbers (null for none) */
export const median = (values: readonly number[]): number | null => {
  if (!values.length) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
};

/** .what = a / b rounded to 2 decimals, or null when either is unknown */
export const ratio = (a: number | null, b: number | null): number | null =>
  a === null || b === null || b === 0 ? null : Math.round((a / b) * 100) / 100;

const roundTenth = (value: number): number => Math.round(value * 10) / 10;

/** .what = a row of median, min and max over the runs (nulls when nothing was measured) */
export const spreadRow = (
  metric: string,
  unit: string,
  values: readonly number[],
  target?: { text: string; met: (medianValue: number) => boolean },
): BenchRow => {
  const middle = median(values);
  return {
    metric,
    unit,
    values: {
      median: middle === null ? null : roundTenth(middle),
      min: values.length ? roundTenth(Math.min(...values)) : null,
      max: values.length ? roundTenth(Math.max(...values)) : null,
    },
    ...(target ? { target: { text: target.text, met: middle === null ? null : target.met(middle) } } : {}),
  };
};
