import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { genFilesToolBox, type BhrainToolBox, type BrainLog } from 'rhachet-roles-bhrain';

import { median, ratio, type BenchOptions, type BenchRow, type BenchSection } from '../BenchReport.js';

/** a pattern that matches a modest number of lines (hundreds) across node_modules, under both engines' cap */
const GREP_PATTERN = 'class \\w+Error extends';

/** the glob asked of our tool; rg's `-g '*.d.ts'` matches the same basenames at any depth */
const GLOB_PATTERN = '**/*.d.ts';

/** our grep stops (and kills rg) past this many matches; raw rg is cut at the same count so neither does more work */
const OUTPUT_CAP_LINES = 1_000;

/** timed runs per subject in a full run (after one untimed warm-up that fills the page cache) */
const FULL_RUNS = 7;

/**
 * .what = the arguments our rg engine passes (a copy of grepWithRipgrep's, for a pattern searched from inside
 *         node_modules, which git ignores, so without ignore files, and skipping hidden directories)
 * .why = rg run raw with exactly these splits the gap to plain rg into rg's own cost of the flags and our process handling
 */
const RG_ENGINE_ARGS = (pattern: string): string[] => [
  '--line-number',
  '--no-heading',
  '--color',
  'never',
  '--with-filename',
  '--null',
  '--no-config',
  '--crlf',
  '--hidden',
  '--no-ignore',
  '--max-filesize',
  '10M',
  '--max-columns',
  '2000',
  '--max-columns-preview',
  '--glob',
  '!.*/',
  '--glob',
  '!.git',
  '-e',
  pattern,
  '--',
  '.',
];

/** files in the generated tree of a full run, and of a smoke run */
export const TREE_FILES = 100_000;
export const TREE_FILES_SMOKE = 2_000;

/** the target for glob over the generated tree */
const GLOB_TARGET = 'glob within 2x of rg --files';
const GLOB_TARGET_RATIO = 2;

/** rg's flags that list the files our glob lists: dotfiles yes, hidden directories, node_modules and .git no, git's ignore files yes */
const RG_FILES_ARGS = [
  '--files',
  '--no-config',
  '--hidden',
  '--no-ignore-dot',
  '--glob',
  '!node_modules',
  '--glob',
  '!.*/',
  '--glob',
  '!.git',
];

/** the target for grep */
const GREP_TARGET = 'grep within 1.5x of rg when rg is used';
const GREP_TARGET_RATIO = 1.5;

const silentLog: BrainLog = { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} };

/**
 * .what = the directory that holds this package's package.json, found by walking up from this file
 * .why = the compiled bench lives under .bench/bench/sections/, the source under bench/sections/: both find the same root
 */
const findRepoRoot = (from: string = dirname(fileURLToPath(import.meta.url))): string => {
  for (let directory = from; ; directory = dirname(directory)) {
    const manifest = join(directory, 'package.json');
    if (existsSync(manifest)) {
      const name = (JSON.parse(readFileSync(manifest, 'utf8')) as { name?: string }).name;
      if (name === 'rhachet-roles-bhrain') return directory;
    }
    if (dirname(directory) === directory) throw new Error(`no package.json named rhachet-roles-bhrain above ${from}`);
  }
};

/** .what = whether ripgrep runs from PATH */
const hasRg = (): boolean => {
  try {
    execFileSync('rg', ['--version'], { stdio: 'ignore', timeout: 5_000 });
    return true;
  } catch {
    return false;
  }
};

/** .what = files under a directory (symlinks not followed), for the note on the tree's size */
const countFiles = (root: string): number => {
  let count = 0;
  const pending = [root];
  while (pending.length) {
    const directory = pending.pop()!;
    let entries;
    try {
      entries = readdirSync(directory, { withFileTypes: true });
    } catch {
      continue;
    }
    for (const entry of entries) {
      if (entry.isDirectory()) pending.push(join(directory, entry.name));
      else if (entry.isFile()) count++;
    }
  }
  return count;
};

/**
 * .what = a git repository of `files` files in a temp dir, about a fifth of them skipped: a tenth in dist/ and coverage/
 *         (root .gitignore), a package's generated/ (its own .gitignore), node_modules/ and a hidden .cache/, and one in
 *         ten of the rest a *.log (root .gitignore)
 * .why = glob and rg --files walk the same tree with the same rules; the ignored part is what both must skip
 */
export const genFileTree = (files: number): { root: string; visible: number } => {
  const root = mkdtempSync(join(tmpdir(), 'bhrain-bench-tree-'));
  try {
    execFileSync('git', ['init', '-q'], { cwd: root, stdio: 'ignore', timeout: 10_000 });
  } catch {
    // without git, a .git directory is what marks a repository for rg and for us
    mkdirSync(join(root, '.git'));
  }
  writeFileSync(join(root, '.gitignore'), 'node_modules/\ndist/\ncoverage/\n*.log\nbench/results/*.tmp\n');
  const put = (directory: string, count: number, name: (index: number) => string) => {
    mkdirSync(join(root, directory), { recursive: true });
    for (let index = 0; index < count; index++) writeFileSync(join(root, directory, name(index)), '');
  };
  const perDirectory = 100;
  const ignored = Math.floor(files / 10);
  let visible = 1;
  let written = 1;
  // the visible part: packages/pN/src/mM/ with 100 files each (one in ten a .log, which is ignored)
  for (let directory = 0; written < files - ignored; directory++) {
    const packageDirectory = `packages/p${Math.floor(directory / 10)}`;
    if (directory % 10 === 0) {
      put(packageDirectory, 0, () => '');
      writeFileSync(join(root, packageDirectory, '.gitignore'), 'generated/\n');
      written++;
      visible++;
    }
    const count = Math.min(perDirectory, files - ignored - written);
    put(`${packageDirectory}/src/m${directory % 10}`, count, (index) => `f${index}.${index % 10 === 0 ? 'log' : index % 3 ? 'ts' : 'md'}`);
    written += count;
    visible += count - Math.ceil(count / 10);
  }
  // the ignored part, spread over each kind of rule
  const share = Math.floor((files - written) / 5);
  for (const [directory, count] of [
    ['dist', share],
    ['coverage/lcov', share],
    ['packages/p0/generated', share],
    ['node_modules/dep', share],
    ['.cache/blobs', files - written - 4 * share],
  ] as const)
    put(directory, count, (index) => `g${index}.js`);
  return { root, visible };
};

/**
 * .what = runs rg as a child process, reading stdout as it streams and killing rg at the output cap
 * .why = the raw baseline: the same process spawn and the same cap our rg engine pays, without our parse and format
 */
const runRg = (args: string[], cwd: string, capLines: number): Promise<{ elapsedMs: number; lines: number }> =>
  new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn('rg', args, { cwd, stdio: ['ignore', 'pipe', 'ignore'] });
    let lines = 0;
    let capped = false;
    child.stdout.on('data', (chunk: Buffer) => {
      if (capped) return;
      for (let index = chunk.indexOf(10); index !== -1; index = chunk.indexOf(10, index + 1)) {
        if (++lines >= capLines) {
          capped = true;
          child.kill();
          break;
        }
      }
    });
    child.on('error', reject);
    child.on('close', () => resolve({ elapsedMs: performance.now() - started, lines: Math.min(lines, capLines) }));
  });

/** .what = one call of a files tool through the toolbox, timed */
const runTool = async (
  box: BhrainToolBox,
  name: 'grep' | 'glob',
  input: Record<string, unknown>,
  cwd: string,
): Promise<{ elapsedMs: number; output: string; success: boolean }> => {
  const started = performance.now();
  const result = await box.execute({ call: { id: `bench-${name}`, name, input } }, { cwd, log: silentLog, env: process.env });
  return { elapsedMs: performance.now() - started, output: result.output, success: result.success };
};

/** .what = the median of `runs` timed calls, after one untimed warm-up when there is more than one run */
const timeMedian = async <T extends { elapsedMs: number }>(
  runs: number,
  once: () => Promise<T>,
): Promise<{ medianMs: number; last: T }> => {
  let last = runs > 1 ? await once() : undefined;
  const times: number[] = [];
  for (let run = 0; run < runs; run++) {
    last = await once();
    times.push(last.elapsedMs);
  }
  return { medianMs: Math.round(median(times)! * 10) / 10, last: last! };
};

/** .what = the number of `path:line:text` lines in our grep output (notices come after a blank line) */
const countGrepLines = (output: string): number =>
  output
    .split('\n\n')[0]
    .split('\n')
    .filter((line) => /:\d+:/.test(line)).length;

/** .what = how many files our glob found: the total from its cap notice, else the lines it printed */
const countGlobFiles = (output: string): number => {
  const notice = /Showing [\d,]+ of ([\d,]+) matching files/.exec(output);
  return notice ? Number(notice[1].replace(/,/g, '')) : output.split('\n\n')[0].split('\n').filter(Boolean).length;
};

/**
 * .what = tools section: our grep (rg engine and built-in) and glob over the repo's node_modules, and glob over a
 *         generated 100,000-file git tree, vs raw ripgrep
 * .why = the targets: grep within 1.5x of rg when rg is used; glob within 2x of rg --files on the big tree; the built-in
 *        grep shows what a machine without rg gets
 */
export const benchTools = async (options: BenchOptions): Promise<BenchSection> => {
  const root = findRepoRoot();
  const tree = join(root, 'node_modules');
  const runs = options.smoke ? 1 : FULL_RUNS;
  const rg = hasRg();
  const notes: string[] = [];
  const rows: BenchRow[] = [];
  const fileCount = countFiles(tree);
  options.log(`tools: ${fileCount} files under node_modules; rg ${rg ? 'found' : 'not found'}; ${runs} run(s) each`);

  // grep: same pattern, same tree; raw rg gets the file-set flags our rg engine uses there (hidden files, no ignore files:
  // node_modules is ignored by git, and a path named explicitly is searched whole; hidden directories skipped; links not followed)
  const grepInput = { pattern: GREP_PATTERN, path: 'node_modules' };
  const rgGrepArgs = [
    '--line-number',
    '--no-heading',
    '--color',
    'never',
    '--hidden',
    '--no-ignore',
    '--glob',
    '!.*/',
    '-e',
    GREP_PATTERN,
    'node_modules',
  ];
  const boxRg = genFilesToolBox({ grepEngine: 'rg' });
  const boxBuiltin = genFilesToolBox({ grepEngine: 'builtin' });

  const grepOurRg = rg ? await timeMedian(runs, () => runTool(boxRg, 'grep', grepInput, root)) : null;
  options.log(`tools: grep (rg engine) ${grepOurRg?.medianMs ?? '-'} ms`);
  const grepBuiltin = await timeMedian(runs, () => runTool(boxBuiltin, 'grep', grepInput, root));
  options.log(`tools: grep (built-in) ${grepBuiltin.medianMs} ms`);
  const grepRaw = rg ? await timeMedian(runs, () => runRg(rgGrepArgs, root, OUTPUT_CAP_LINES)) : null;
  options.log(`tools: grep (raw rg) ${grepRaw?.medianMs ?? '-'} ms`);
  const grepRawSameFlags = rg ? await timeMedian(runs, () => runRg(RG_ENGINE_ARGS(GREP_PATTERN), tree, OUTPUT_CAP_LINES)) : null;
  options.log(`tools: grep (raw rg, our engine's flags) ${grepRawSameFlags?.medianMs ?? '-'} ms`);
  if (grepOurRg && !grepOurRg.last.success) throw new Error(`grep (rg engine) failed: ${grepOurRg.last.output}`);
  if (!grepBuiltin.last.success) throw new Error(`grep (built-in) failed: ${grepBuiltin.last.output}`);

  const grepRatio = ratio(grepOurRg?.medianMs ?? null, grepRaw?.medianMs ?? null);
  const sameFlagsRatio = ratio(grepOurRg?.medianMs ?? null, grepRawSameFlags?.medianMs ?? null);
  rows.push({
    metric: 'grep: wall time',
    unit: 'ms',
    values: {
      'bhrain (rg engine)': grepOurRg?.medianMs ?? null,
      'bhrain (built-in)': grepBuiltin.medianMs,
      rg: grepRaw?.medianMs ?? null,
      "rg (our engine's flags)": grepRawSameFlags?.medianMs ?? null,
    },
    ratios: {
      'bhrain(rg)/rg': grepRatio,
      'built-in/rg': ratio(grepBuiltin.medianMs, grepRaw?.medianMs ?? null),
      "bhrain(rg)/rg (our engine's flags)": sameFlagsRatio,
    },
    target: { text: GREP_TARGET, met: grepRatio === null ? null : grepRatio <= GREP_TARGET_RATIO },
  });

  // glob: our glob always walks with the built-in engine; rg --files is the baseline
  const globInput = { pattern: GLOB_PATTERN, path: 'node_modules' };
  const rgGlobArgs = ['--files', '--hidden', '--no-ignore', '-g', '*.d.ts', '-g', '!.*/', 'node_modules'];
  const globOurs = await timeMedian(runs, () => runTool(boxBuiltin, 'glob', globInput, root));
  options.log(`tools: glob (built-in) ${globOurs.medianMs} ms`);
  const globRaw = rg ? await timeMedian(runs, () => runRg(rgGlobArgs, root, Number.POSITIVE_INFINITY)) : null;
  options.log(`tools: glob (raw rg) ${globRaw?.medianMs ?? '-'} ms`);
  if (!globOurs.last.success) throw new Error(`glob failed: ${globOurs.last.output}`);
  rows.push({
    metric: 'glob: wall time',
    unit: 'ms',
    values: { 'bhrain (built-in)': globOurs.medianMs, rg: globRaw?.medianMs ?? null },
    ratios: { 'built-in/rg': ratio(globOurs.medianMs, globRaw?.medianMs ?? null) },
  });

  // glob over a generated tree vs rg --files: the same walk, the same ignore rules
  const generated = genFileTree(options.smoke ? TREE_FILES_SMOKE : TREE_FILES);
  let treeGlob;
  let treeRg;
  try {
    options.log(`tools: generated ${options.smoke ? TREE_FILES_SMOKE : TREE_FILES} files in ${generated.root}`);
    treeGlob = await timeMedian(runs, () => runTool(boxBuiltin, 'glob', { pattern: '**/*' }, generated.root));
    options.log(`tools: glob over the generated tree ${treeGlob.medianMs} ms`);
    treeRg = rg ? await timeMedian(runs, () => runRg(RG_FILES_ARGS, generated.root, Number.POSITIVE_INFINITY)) : null;
    options.log(`tools: rg --files over the generated tree ${treeRg?.medianMs ?? '-'} ms`);
  } finally {
    rmSync(generated.root, { recursive: true, force: true });
  }
  if (!treeGlob.last.success) throw new Error(`glob over the generated tree failed: ${treeGlob.last.output}`);
  const treeRatio = ratio(treeGlob.medianMs, treeRg?.medianMs ?? null);
  const treeFiles = (options.smoke ? TREE_FILES_SMOKE : TREE_FILES).toLocaleString('en-US');
  rows.push({
    metric: `glob **/* over a generated ${treeFiles}-file git tree: wall time`,
    unit: 'ms',
    values: { 'bhrain (built-in)': treeGlob.medianMs, rg: treeRg?.medianMs ?? null },
    ratios: { 'built-in/rg': treeRatio },
    target: { text: GLOB_TARGET, met: treeRatio === null ? null : treeRatio <= GLOB_TARGET_RATIO },
  });

  notes.push(
    `Tree: ${tree} (${fileCount.toLocaleString('en-US')} files, symlinks not counted). Median of ${runs} run(s)${runs > 1 ? ' after one warm-up run (page cache warm)' : ', no warm-up'}; wall time of the whole call, process spawn included.`,
    `grep /${GREP_PATTERN}/ over node_modules: bhrain (rg engine) found ${grepOurRg ? countGrepLines(grepOurRg.last.output) : '-'} lines, bhrain (built-in) ${countGrepLines(grepBuiltin.last.output)}, raw rg ${grepRaw ? grepRaw.last.lines : '-'}. ` +
      `Compared: our grep tool through genFilesToolBox (rg through spawnGroup, with --hidden --no-ignore --glob '!.*/' --crlf --max-columns …, unsorted and parallel, every match read so the first ${OUTPUT_CAP_LINES} in path order are shown, up to 10 times that before it searches again sorted by path; output parsed, sorted and formatted) vs \`rg --line-number --no-heading --color never --hidden --no-ignore --glob '!.*/' -e <pattern> node_modules\` spawned from node, stdout counted and rg killed at ${OUTPUT_CAP_LINES} lines (the same files; raw rg searches unsorted, with all threads). ` +
      `"rg (our engine's flags)" is rg run the same way with exactly the flags our engine passes, so bhrain(rg) against it is our own cost: the spawn (spawnGroup), parsing, sorting and formatting.`,
    `glob ${GLOB_PATTERN} under node_modules: bhrain found ${countGlobFiles(globOurs.last.output)} files (it prints at most 1,000, but walks and sorts all of them), raw rg ${globRaw ? globRaw.last.lines : '-'} (\`rg --files --hidden --no-ignore -g '*.d.ts' -g '!.*/' node_modules\`, not cut, since our glob also walks the whole tree).`,
    `glob **/* over a generated git repository of ${treeFiles} files (packages/pN/src/mM/; about a fifth skipped: dist/, coverage/, *.log, a nested .gitignore's generated/, node_modules/, a hidden .cache/): bhrain listed ${countGlobFiles(treeGlob.last.output)} files (it prints at most 1,000, but walks and sorts all of them), rg ${treeRg ? treeRg.last.lines : '-'} (\`rg ${RG_FILES_ARGS.join(' ')}\`, the same file set: plain \`rg --files\` also drops dotfiles such as .gitignore), ${generated.visible} expected. Both read .gitignore files; the tree is written once, so the page cache is warm.`,
  );
  if (grepRatio !== null && sameFlagsRatio !== null && grepRatio > GREP_TARGET_RATIO)
    notes.push(
      sameFlagsRatio <= GREP_TARGET_RATIO
        ? `grep missed the target, but rg run raw with our engine's flags takes ${grepRawSameFlags!.medianMs} ms (bhrain(rg) is ${sameFlagsRatio}x of that): the gap is rg's own cost of those flags, not our process handling or parsing.`
        : `grep missed the target, and also against rg run raw with our engine's flags (${sameFlagsRatio}x): to show the first ${OUTPUT_CAP_LINES} matches in path order, the same whichever engine runs, our engine reads every match rg finds, while the raw runs stop at the first ${OUTPUT_CAP_LINES} lines rg's threads happen to print.`,
    );
  if (!rg)
    notes.push(
      'rg is not installed (apt-get install ripgrep): only the built-in engine was measured; the rg values and the grep target verdict are null.',
    );
  return { title: 'Tools: grep and glob over node_modules and a generated tree vs ripgrep', rows, notes };
};
