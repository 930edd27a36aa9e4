// runs action.yml's composite steps the way the GitHub runner does, offline: each `run:` step through
// `bash --noprofile --norc -eo pipefail {0}` with its `env:`, and GITHUB_OUTPUT, GITHUB_ENV, GITHUB_PATH and
// GITHUB_STEP_SUMMARY as files; step outputs read back from GITHUB_OUTPUT (both forms), the action's outputs mapped
// from them after the steps, a failed step or not (as the runner's CompositeActionHandler does). It knows a small set
// of expressions and throws on any other, so a test fails loudly when action.yml grows one it cannot evaluate.
// `uses:` steps cannot run offline: they are skipped and listed; actions/cache answers cache-hit 'true' by default, which
// is true of this checkout (its node_modules and dist/ are what a restored cache holds), or 'false' to run the install
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

import { parse } from 'yaml';

export interface ActionStep {
  id?: string;
  name?: string;
  if?: string;
  uses?: string;
  with?: Record<string, string>;
  shell?: string;
  run?: string;
  env?: Record<string, string>;
}
export interface ActionFile {
  inputs: Record<string, { default?: string; required?: boolean }>;
  outputs: Record<string, { value: string }>;
  runs: { using: string; steps: ActionStep[] };
}
export interface StepRun {
  name: string;
  status: 'success' | 'failure' | 'skipped';
  code: number | null;
  stdout: string;
  stderr: string;
}
export interface ActionRun {
  failed: boolean;
  outputs: Record<string, string>;
  steps: StepRun[];
  skippedUses: string[];
  summary: string;
}

/** .what = the `name=value` and `name<<DELIM` lines of a GITHUB_OUTPUT / GITHUB_ENV file, as the runner reads them */
export const parseCommandFile = (text: string): Record<string, string> => {
  const values: Record<string, string> = {};
  const lines = text.split('\n');
  for (let at = 0; at < lines.length; at++) {
    const line = lines[at];
    if (line === '') continue;
    const heredoc = /^([^=<]+)<<(.+)$/.exec(line);
    if (heredoc) {
      const end = lines.indexOf(heredoc[2], at + 1);
      if (end < 0) throw new Error(`command file: no closing delimiter ${heredoc[2]} for ${heredoc[1]}`);
      values[heredoc[1]] = lines.slice(at + 1, end).join('\n');
      at = end;
      continue;
    }
    const eq = line.indexOf('=');
    if (eq <= 0) throw new Error(`command file: a line that is neither name=value nor name<<DELIM: ${line}`);
    values[line.slice(0, eq)] = line.slice(eq + 1);
  }
  return values;
};

interface Context {
  inputs: Record<string, string>;
  actionPath: string;
  runnerTemp: string;
  steps: Record<string, Record<string, string>>;
}

/** .what = the value of one known reference; throws on any other */
const evalRef = (ref: string, ctx: Context): string => {
  const trimmed = ref.trim();
  let match = /^inputs\.([\w-]+)$/.exec(trimmed);
  if (match) {
    if (!(match[1] in ctx.inputs)) throw new Error(`expression names an input action.yml does not declare: ${trimmed}`);
    return ctx.inputs[match[1]];
  }
  if (trimmed === 'github.action_path') return ctx.actionPath;
  if (trimmed === 'runner.temp') return ctx.runnerTemp;
  match = /^steps\.([\w-]+)\.outputs\.([\w-]+)$/.exec(trimmed);
  if (match) return ctx.steps[match[1]]?.[match[2]] ?? '';
  throw new Error(`the action harness does not know the expression \${{ ${trimmed} }}: teach it, or keep action.yml simpler`);
};

/** .what = a string with its `${{ }}` expressions replaced, as the runner does for `with:`, `env:`, `run:` and outputs */
const interpolate = (text: string, ctx: Context) => text.replace(/\$\{\{(.*?)\}\}/gs, (_, ref: string) => evalRef(ref, ctx));

/** .what = an `if:` condition: `ref`, `ref == 'x'` or `ref != 'x'`, with or without `${{ }}`; throws on any other */
const evalCondition = (condition: string, ctx: Context): boolean => {
  const bare = condition
    .trim()
    .replace(/^\$\{\{(.*)\}\}$/s, '$1')
    .trim();
  const compare = /^(\S+)\s*(==|!=)\s*'([^']*)'$/.exec(bare);
  if (compare) return (evalRef(compare[1], ctx) === compare[3]) === (compare[2] === '==');
  if (/^[\w.-]+$/.test(bare)) return evalRef(bare, ctx) !== '';
  throw new Error(`the action harness does not know the condition ${condition}`);
};

const runBash = (input: { script: string; env: Record<string, string>; cwd: string }) =>
  new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
    const child = spawn('bash', ['--noprofile', '--norc', '-eo', 'pipefail', input.script], {
      cwd: input.cwd,
      env: input.env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });

/** .what = runs the composite action of `actionYml` (text) with `inputs`, from `actionPath`, in `workspace` */
export const runAction = async (input: {
  actionYml: string;
  actionPath: string;
  workspace: string;
  inputs: Record<string, string>;
  env: Record<string, string | undefined>;
  tempDir: string;
  /** what actions/cache answers: 'true' (the default) where actionPath's node_modules and dist/ are there already */
  cacheHit?: boolean;
}): Promise<ActionRun> => {
  const action = parse(input.actionYml) as ActionFile;
  if (action.runs.using !== 'composite') throw new Error(`not a composite action: ${action.runs.using}`);
  for (const name of Object.keys(input.inputs))
    if (!(name in action.inputs)) throw new Error(`input ${name} is not declared in action.yml (the runner would warn)`);
  const files = await mkdtemp(join(input.tempDir, 'runner-'));
  const summaryFile = join(files, 'step_summary');
  await writeFile(summaryFile, '');
  const ctx: Context = {
    inputs: Object.fromEntries(Object.entries(action.inputs).map(([name, spec]) => [name, input.inputs[name] ?? spec.default ?? ''])),
    actionPath: input.actionPath,
    runnerTemp: files,
    steps: {},
  };
  let jobEnv: Record<string, string> = Object.fromEntries(
    Object.entries(input.env).filter((entry): entry is [string, string] => entry[1] !== undefined),
  );
  const result: ActionRun = { failed: false, outputs: {}, steps: [], skippedUses: [], summary: '' };
  for (const [index, step] of action.runs.steps.entries()) {
    const name = step.name ?? step.id ?? `step ${index}`;
    const condition = step.if ?? 'success()';
    // the runner's default condition is success(): after a failed step, the rest are skipped
    const runs = result.failed ? false : condition === 'success()' || evalCondition(condition, ctx);
    if (!runs) {
      result.steps.push({ name, status: 'skipped', code: null, stdout: '', stderr: '' });
      continue;
    }
    if (step.uses) {
      for (const value of Object.values(step.with ?? {})) interpolate(value, ctx);
      result.skippedUses.push(step.uses);
      if (step.id) ctx.steps[step.id] = step.uses.startsWith('actions/cache@') ? { 'cache-hit': String(input.cacheHit ?? true) } : {};
      result.steps.push({ name, status: 'skipped', code: null, stdout: '', stderr: '' });
      continue;
    }
    if (step.shell !== 'bash' || step.run === undefined) throw new Error(`step ${name}: the harness runs only shell: bash steps`);
    const script = join(files, `step-${index}.sh`);
    await writeFile(script, interpolate(step.run, ctx));
    const commandFiles = {
      GITHUB_OUTPUT: join(files, `output-${index}`),
      GITHUB_ENV: join(files, `env-${index}`),
      GITHUB_PATH: join(files, `path-${index}`),
    };
    await Promise.all(Object.values(commandFiles).map((path) => writeFile(path, '')));
    const stepEnv = Object.fromEntries(Object.entries(step.env ?? {}).map(([key, value]) => [key, interpolate(String(value), ctx)]));
    const env = {
      ...jobEnv,
      GITHUB_ACTIONS: 'true',
      GITHUB_ACTION_PATH: input.actionPath,
      GITHUB_WORKSPACE: input.workspace,
      RUNNER_TEMP: files,
      GITHUB_STEP_SUMMARY: summaryFile,
      ...commandFiles,
      ...stepEnv,
    };
    const run = await runBash({ script, env, cwd: input.workspace });
    if (step.id) ctx.steps[step.id] = parseCommandFile(await readFile(commandFiles.GITHUB_OUTPUT, 'utf8'));
    jobEnv = { ...jobEnv, ...parseCommandFile(await readFile(commandFiles.GITHUB_ENV, 'utf8')) };
    result.steps.push({ name, status: run.code === 0 ? 'success' : 'failure', ...run });
    if (run.code !== 0) result.failed = true;
  }
  // the action's outputs are evaluated after its steps, whether one failed or not
  result.outputs = Object.fromEntries(Object.entries(action.outputs).map(([name, spec]) => [name, interpolate(spec.value, ctx)]));
  result.summary = await readFile(summaryFile, 'utf8');
  return result;
};
