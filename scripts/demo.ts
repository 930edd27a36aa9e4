// `npm run demo`: the main job in one command. The built CLI does a small task in a fresh temp git repo, twice:
// `bhrain act` in text mode, as most users run it (tool calls, a guard denial and the refs on stderr, the answer on
// stdout), then `bhrain ask --continue --output json`, a follow-up in the same conversation, as a script reads it.
// Without an API key (and without a network) the model is the bundled stand-in (test/standin) playing scripted turns;
// with a key set, the same commands run on the real supplier. Narration goes to stderr, the CLI's stdout (the answer,
// then the JSON object) to stdout; every temp dir is removed at the end, so the closing tip runs the CLI from this checkout.
import { spawn } from 'node:child_process';
import { access, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { stripVTControlCharacters } from 'node:util';

import { startStandin, type Standin, type StandinTurn } from '../test/standin/standin.js';

/** compiled to .tsc-out/demo/scripts/demo.js (see tsconfig.demo.json): the package root is three levels up */
const PACKAGE_ROOT = join(import.meta.dirname, '..', '..', '..');
const BHRAIN_BIN = join(PACKAGE_ROOT, 'bin', 'bhrain');

/** the key the CLI sends to the stand-in; the stand-in refuses any other, as a real API would */
const STANDIN_KEY = 'demo-standin-key';

/** the task, the same for the stand-in and a real model */
const TASK =
  'Read the todo list under notes/, write DONE.md listing the items marked done, delete the leftover scratch.tmp, then show `git status --short`.';

/** the follow-up, asked with --continue: answered from the first run's conversation, which only a continued series has */
const FOLLOW_UP = 'Which file did you write, and what is in it?';

/** the rules file the run is guarded by: everything allowed except `rm` in bash */
const RULES = { allow: ['read', 'glob', 'grep', 'write', 'edit', 'bash'], deny: ['bash(rm *)'] };

/** a real run may not cost more than this (a stand-in run's cost is computed from its fake token counts, far below it) */
const MAX_BUDGET_USD = '0.25';

const TODO = '# todo\n\n- [x] parse the config file\n- [ ] retry on HTTP 429\n- [x] print the refs on stderr\n';
const DONE = '# done\n\n- parse the config file\n- print the refs on stderr\n';

/** the scripted model: what a model would answer at each turn of TASK, tool calls first, then the answer */
const SCRIPTED_TURNS: StandinTurn[] = [
  { text: 'First I look for the todo list.', toolCalls: [{ name: 'glob', input: { pattern: 'notes/**/*.md' } }] },
  { toolCalls: [{ name: 'read', input: { path: 'notes/todo.md' } }] },
  {
    toolCalls: [
      { name: 'write', input: { path: 'DONE.md', content: DONE } },
      { name: 'bash', input: { command: 'rm scratch.tmp' } },
    ],
  },
  { toolCalls: [{ name: 'bash', input: { command: 'git status --short' } }] },
  {
    text:
      'Wrote DONE.md with the 2 items marked done (parse the config file; print the refs on stderr). ' +
      'I could not delete scratch.tmp: the permission rules deny `rm` (rule `bash(rm *)`), so it is still there. ' +
      '`git status --short` shows DONE.md as the only change.',
  },
];

/** the scripted answer to FOLLOW_UP: text only, no tools (what a model that remembers the first run can say at once) */
const SCRIPTED_FOLLOW_UP: StandinTurn = {
  text: 'I wrote DONE.md. It lists the 2 items marked done in notes/todo.md: "parse the config file" and "print the refs on stderr".',
};

/** who plays the model: the scripted stand-in, or a real supplier because its key is set */
type Supplier = { kind: 'standin'; atom: string } | { kind: 'real'; atom: string; keyVar: string };

/** env vars that would point the CLI at a real supplier; removed for a stand-in run so nothing real is reached */
const SUPPLIER_VARS = /^(ANTHROPIC|QWEN|DASHSCOPE)_/;

/** a mistake in how the demo was called: exit 2, like the CLI */
class DemoUsageError extends Error {}

const say = (text = '') => process.stderr.write(`${text}\n`);

/** .what = the supplier a real key in the environment selects (anthropic first), unless --standin forces the stand-in */
const chooseSupplier = (input: { args: string[]; env: NodeJS.ProcessEnv }): Supplier => {
  const unknown = input.args.filter((arg) => arg !== '--standin');
  if (unknown.length)
    throw new DemoUsageError(`unknown argument '${unknown[0]}': the demo takes only --standin (use the stand-in even when a key is set)`);
  if (input.args.includes('--standin')) return { kind: 'standin', atom: 'claude/haiku' };
  const anthropicVar = ['ANTHROPIC_API_KEY', 'ANTHROPIC_AUTH_TOKEN'].find((name) => input.env[name]);
  if (anthropicVar) return { kind: 'real', atom: 'claude/haiku', keyVar: anthropicVar };
  const qwenVar = ['QWEN_API_KEY', 'DASHSCOPE_API_KEY'].find((name) => input.env[name]);
  if (qwenVar) return { kind: 'real', atom: 'qwen', keyVar: qwenVar };
  return { kind: 'standin', atom: 'claude/haiku' };
};

/** runs a command to completion; its output is returned, a failure throws with the command's stderr */
const run = (command: string, args: string[], options: { cwd: string; env?: NodeJS.ProcessEnv }): Promise<string> =>
  new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: options.cwd, env: options.env ?? process.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.on('error', (error) =>
      reject(new Error(`${command} could not be started (${error.message}): the demo needs ${command} on PATH`)),
    );
    child.on('close', (code) =>
      code === 0 ? resolve(stdout) : reject(new Error(`${command} ${args.join(' ')} failed (exit ${code}): ${stderr.trim()}`)),
    );
  });

/** .what = a small git repo to work in: a todo list, a readme and a leftover file, committed */
const genDemoRepo = async (input: { dir: string }): Promise<void> => {
  await mkdir(join(input.dir, 'notes'), { recursive: true });
  await writeFile(join(input.dir, 'README.md'), '# demo repo\n\nA scratch repo made by `npm run demo`.\n');
  await writeFile(join(input.dir, 'notes', 'todo.md'), TODO);
  await writeFile(join(input.dir, 'scratch.tmp'), 'leftover from a debugging session\n');
  // a fixed identity and branch, so the user's git config neither matters nor warns
  const git = (...args: string[]) =>
    run('git', ['-c', 'init.defaultBranch=main', '-c', 'user.name=demo', '-c', 'user.email=demo@example.invalid', ...args], {
      cwd: input.dir,
    });
  await git('init', '-q');
  await git('add', '.');
  await git('commit', '-q', '-m', 'a todo list and a leftover file');
};

/**
 * .what = whether bash can be sandboxed here, by the CLI's own check (bubblewrap on Linux)
 * .why = without it `bhrain act` refuses to start unless told `--sandbox off`; the demo says so rather than failing
 */
const checkSandbox = async (): Promise<{ ok: true } | { ok: false; reason: string }> => {
  const modulePath = join(PACKAGE_ROOT, 'dist', 'sandbox', 'checkBashSandbox.js');
  const { checkBashSandbox } = (await import(pathToFileURL(modulePath).href)) as {
    checkBashSandbox: (input: { env: NodeJS.ProcessEnv }) => Promise<{ ok: true } | { ok: false; reason: string }>;
  };
  return checkBashSandbox({ env: process.env });
};

/** shows a command the way a user would type it (single quotes only where needed) */
const showCommand = (args: string[]): string =>
  args.map((arg) => (/^[\w./=@:-]+$/.test(arg) ? arg : `'${arg.replaceAll("'", `'\\''`)}'`)).join(' ');

/** the JSON object still valid JSON, each top-level field on a line of its own: shorter than fully indented, readable */
const formatJson = (json: object): string =>
  `{\n${Object.entries(json)
    .map(([key, value]) => `  ${JSON.stringify(key)}: ${JSON.stringify(value)}`)
    .join(',\n')}\n}\n`;

/** runs the CLI: its stderr relayed live, indented, and collected; its stdout collected */
const runBhrain = (input: { args: string[]; cwd: string; env: NodeJS.ProcessEnv }, context: { onChild: (pid: number) => void }) =>
  new Promise<{ code: number; stdout: string; stderr: string }>((resolve, reject) => {
    const child = spawn(process.execPath, [BHRAIN_BIN, ...input.args], {
      cwd: input.cwd,
      env: input.env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    if (child.pid) context.onChild(child.pid);
    let stdout = '';
    let stderr = '';
    let pending = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (chunk: string) => {
      stderr += chunk;
      const lines = (pending + chunk).split('\n');
      pending = lines.pop() ?? '';
      for (const line of lines) process.stderr.write(`  │ ${line}\n`);
    });
    child.on('error', reject);
    child.on('close', (code, signal) => {
      if (pending) process.stderr.write(`  │ ${pending}\n`);
      resolve({ code: code ?? (signal === 'SIGINT' ? 130 : 1), stdout, stderr });
    });
  });

/** .what = the denied calls of a text-mode run, read from its progress lines on stderr (`  ✗ bash denied: <reason>`) */
const readDenials = (stderr: string): Array<{ tool: string; reason: string }> =>
  stripVTControlCharacters(stderr)
    .split('\n')
    .flatMap((line) => {
      const denied = /^\s*✗ (\S+) denied: (.*)$/.exec(line);
      return denied ? [{ tool: denied[1], reason: denied[2] }] : [];
    });

/** .what = whether a file exists */
const exists = (path: string): Promise<boolean> =>
  access(path).then(
    () => true,
    () => false,
  );

/** the atom the closing tip names for each supplier key (the key bhrain reads for it, in the supplier table) */
const TIP_ATOMS = [
  { keyVar: 'ANTHROPIC_API_KEY', atom: 'claude/haiku' },
  { keyVar: 'QWEN_API_KEY', atom: 'qwen' },
  { keyVar: 'OPENAI_API_KEY', atom: 'openai' },
];

/**
 * .what = how to run bhrain on the user's own code from where they are: this checkout's bin/bhrain by its absolute path
 *         (no `bhrain` is on PATH in a checkout), or `npx bhrain` in a project that installed the package
 * .why = the demo's repo and ref store are gone by now: the tip must work in any repository, with the user's own key
 */
const sayTip = (input: { supplier: Supplier }): void => {
  const { atom, keyVar } = input.supplier.kind === 'real' ? input.supplier : TIP_ATOMS[0];
  const others = TIP_ATOMS.filter((each) => each.atom !== atom).map((each) => `${each.keyVar} with --atom ${each.atom}`);
  const question = showCommand(['what does this repository do?']);
  say(`Now on your own code, with a real model: in any git repository, with ${keyVar} set,`);
  say(`  node ${showCommand([BHRAIN_BIN])} ask --atom ${atom} ${question}`);
  say(`  (or ${others.join(', ')}; add --continue to follow up, as above)`);
  say(`In a project that installed the package (npm install --save-dev rhachet-roles-bhrain): npx bhrain ask --atom ${atom} …`);
};

/**
 * .what = the demo: a temp repo, the stand-in or a real supplier, then two runs shown step by step: `bhrain act` in text
 *         mode, and `bhrain ask --continue --output json` following it up; the exit code
 */
const runDemo = async (): Promise<number> => {
  const supplier = chooseSupplier({ args: process.argv.slice(2), env: process.env });
  await access(join(PACKAGE_ROOT, 'dist', 'bundle', 'main.js')).catch(() => {
    throw new Error(`the CLI is not built (no dist/bundle/main.js under ${PACKAGE_ROOT}): run \`npm run demo\`, which builds first`);
  });
  const root = await mkdtemp(join(tmpdir(), 'bhrain-demo-'));
  let standin: Standin | null = null;
  let childPid: number | null = null;
  let interrupted = false;
  // Ctrl-C reaches the CLI too (same process group) and it stops gracefully; a SIGTERM to the demo alone is passed on
  const onSignal = (signal: NodeJS.Signals) => {
    interrupted = true;
    if (signal !== 'SIGTERM' || !childPid) return;
    try {
      process.kill(childPid, 'SIGTERM');
    } catch {
      // the CLI has already ended
    }
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  try {
    const repo = join(root, 'repo');
    const home = join(root, 'home');
    await genDemoRepo({ dir: repo });
    await writeFile(join(root, 'rules.json'), `${JSON.stringify(RULES)}\n`);

    const turns = [...SCRIPTED_TURNS, SCRIPTED_FOLLOW_UP];
    let env: NodeJS.ProcessEnv;
    if (supplier.kind === 'standin') {
      standin = await startStandin({ apiKey: STANDIN_KEY });
      standin.script(...turns);
      env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !SUPPLIER_VARS.test(name)));
      Object.assign(env, { ANTHROPIC_API_KEY: STANDIN_KEY, ANTHROPIC_BASE_URL: standin.url, NO_PROXY: '127.0.0.1,localhost' });
      say('bhrain demo — the model is a SCRIPTED STAND-IN, not a real model:');
      say(`  a local HTTP server (test/standin, ${standin.url}) replays ${turns.length} fixed turns from scripts/demo.ts.`);
      say('  No API key and no network are used. Set ANTHROPIC_API_KEY (or QWEN_API_KEY / DASHSCOPE_API_KEY) to run');
      say('  the same commands on a real model.');
    } else {
      env = { ...process.env };
      say(`bhrain demo — ${supplier.keyVar} is set: the task runs on the REAL supplier (atom ${supplier.atom}).`);
      say(
        `  This makes paid requests, each run capped at $${MAX_BUDGET_USD} by --max-budget-usd. \`npm run demo -- --standin\` uses the scripted stand-in.`,
      );
    }
    // both runs' refs and records go to a store of its own (so --continue finds the first run), removed with the rest
    env.BHRAIN_HOME = home;
    // the CLI's stderr is a pipe here: keep its colours when the demo's own stderr is a terminal (NO_COLOR still wins)
    if (process.stderr.isTTY && !env.NO_COLOR && env.FORCE_COLOR === undefined) env.FORCE_COLOR = '1';

    const sandbox = await checkSandbox();
    const actArgs = ['act', '--atom', supplier.atom, '--permission', '../rules.json', '--max-budget-usd', MAX_BUDGET_USD];
    if (!sandbox.ok) actArgs.push('--sandbox', 'off');
    actArgs.push('--input', TASK);
    const askArgs = ['ask', '--atom', supplier.atom, '--max-budget-usd', MAX_BUDGET_USD, '--continue', '--output', 'json', FOLLOW_UP];

    say();
    say(`A fresh git repo (${repo}):`);
    say('  README.md  notes/todo.md  scratch.tmp');
    say(`A rules file (../rules.json): ${JSON.stringify(RULES)}`);
    if (!sandbox.ok)
      say(`Note: bash cannot be sandboxed here (${sandbox.reason}), so the demo passes --sandbox off; the rules still apply.`);
    say();
    if (interrupted) return 130;

    // 1. the task, in text mode: what most users see
    say('1. The task, in text mode (the default): progress on stderr, the answer alone on stdout.');
    say(`$ bhrain ${showCommand(actArgs)}`);
    say('stderr (progress, tool calls, the denial, the refs):');
    const act = await runBhrain({ args: actArgs, cwd: repo, env }, { onChild: (pid) => (childPid = pid) });
    if (interrupted) return 130;
    say();
    say('stdout: the answer');
    process.stdout.write(act.stdout.endsWith('\n') || !act.stdout ? act.stdout : `${act.stdout}\n`);
    say();
    const denials = readDenials(act.stderr);
    say(`Denied calls (the ✗ lines on stderr): ${denials.length || 'none'}`);
    for (const denial of denials) say(`  denied: ${denial.tool}: ${denial.reason}`);
    say(`exit ${act.code}${act.code === 0 ? ' (a denied call does not fail the run by default; with --fail-on-denied it exits 7)' : ''}`);
    if (act.code !== 0) {
      say(`demo: bhrain act did not finish cleanly (exit ${act.code}): see its messages above`);
      return act.code;
    }

    say();
    say('The repo afterwards:');
    const status = await run('git', ['status', '--short'], { cwd: repo });
    for (const line of status.trimEnd().split('\n').filter(Boolean)) say(`  ${line}`);
    const kept = await exists(join(repo, 'scratch.tmp'));
    say(
      kept
        ? '  scratch.tmp is still there: the rule `bash(rm *)` denied the call.'
        : '  scratch.tmp was removed: the model found a way the rules did not deny.',
    );
    if (await exists(join(repo, 'DONE.md'))) {
      say('  DONE.md:');
      for (const line of (await readFile(join(repo, 'DONE.md'), 'utf8')).trimEnd().split('\n')) say(`    ${line}`.trimEnd());
    }
    say();
    if (interrupted) return 130;

    // 2. a follow-up in the same conversation, as a script reads it
    say('2. A follow-up in the same conversation, as a script would run it: read-only `ask`, --continue (the newest run in');
    say('   this directory) and --output json.');
    say(`$ bhrain ${showCommand(askArgs)}`);
    say('stderr:');
    const ask = await runBhrain({ args: askArgs, cwd: repo, env }, { onChild: (pid) => (childPid = pid) });
    if (interrupted) return 130;
    say();
    say('stdout: one JSON object (`--output json`), shown one field a line:');
    // the result object (its shape: schemas/output.schema.json), shown as it is
    let json: object | null = null;
    try {
      json = JSON.parse(ask.stdout);
    } catch {
      say(`demo: bhrain's stdout is not one JSON object: ${JSON.stringify(ask.stdout.slice(0, 500))}`);
    }
    if (json) process.stdout.write(formatJson(json));
    say(`exit ${ask.code}`);
    if (ask.code !== 0 || !json) {
      say(`demo: bhrain ask --continue did not finish cleanly (exit ${ask.code}): see its messages above`);
      return ask.code || 1;
    }
    say();
    sayTip({ supplier });

    // with the stand-in both runs are known: every scripted turn served and the rm denied, or the demo shows something false
    if (standin && standin.pending() !== 0) {
      say(`demo: the scripted stand-in still had ${standin.pending()} of ${turns.length} turns left: a run stopped early`);
      return 1;
    }
    const deniedRm = denials.filter((denial) => denial.reason.includes('denied by rule `bash(rm *)`'));
    if (standin && (!kept || denials.length !== 1 || deniedRm.length !== 1)) {
      say(
        `demo: the scripted \`rm scratch.tmp\` should have been denied once, by \`bash(rm *)\`; denials on stderr: ${denials.length}, scratch.tmp ${kept ? 'kept' : 'removed'}`,
      );
      return 1;
    }
    return 0;
  } finally {
    await standin?.close();
    await rm(root, { recursive: true, force: true });
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
};

try {
  process.exitCode = await runDemo();
} catch (error) {
  say(`demo: ${(error as Error).message}`);
  process.exitCode = error instanceof DemoUsageError ? 2 : 1;
}
