// the hostile-model harness of the security suite: a scripted model drives the built CLI turn by turn, every attempt is
// judged by its side effects on disk and in the process table (never by our result text), and counted in the summary
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { appendFileSync, closeSync, existsSync, lstatSync, mkdirSync, openSync, readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

import { expect, inject, it } from 'vitest';

import { genCliEnv, runBhrain, type CliRun } from '../acceptance/runCli.js';
import type { Standin, StandinRequest, StandinToolCall } from '#standin/types.js';
import { tempDir } from '#test-helpers/fs.js';

/** .what = the promise an attempt tries to break; the summary counts attempts and escapes per category */
export type SecurityCategory =
  | 'allow-list'
  | 'denied-program'
  | 'outside-writes'
  | 'leftover-processes'
  | 'supervisor'
  | 'peak-rss'
  | 'credentials'
  | 'supplier-keys'
  | 'environment'
  | 'planted-config'
  | 'network'
  | 'unix-sockets'
  | 'added-dirs';

/** .what = how one attempt ended: `escaped` says what changed that must not have; `answered` says the loop gave its calls a result */
export interface SecurityOutcome {
  escaped: string | null;
  answered: boolean;
  /** what the loop told the model, for the failure message */
  results: string[];
}

/**
 * .what = one hostile attempt: the tool calls the model makes for it, and the side effect that would prove it escaped
 * .why = each attempt has targets of its own, so an escape names the attempt that made it
 */
export interface SecurityAttempt {
  name: string;
  calls: StandinToolCall[];
  /** checked after the turn the attempt ran in: a description of what changed, or null when nothing did (synchronous:
   *  the stand-in judges a turn before it hands out the next one) */
  hit: () => string | null;
}

/** .what = one model turn: its attempts, calls that only prepare a later turn, and what to restore before the next turn */
export interface SecurityTurn {
  attempts: SecurityAttempt[];
  prepare?: StandinToolCall[];
  /** puts back what an escaped attempt changed, so the next turn's attempts are judged alone */
  restore?: () => void;
  /** judged once the CLI has exited and `settle` has run, not when the loop comes back (what must not outlive the run) */
  judgeAfterExit?: boolean;
}

/**
 * .what = a temp dir outside the host's /tmp (/var/tmp, else the home directory)
 * .why = the sandbox's /tmp is its own: what a test plants under the host's /tmp reads as absent in the sandbox whether
 *        or not bhrain hides it, so an attempt on it would prove nothing
 */
export const tmpdirOutsideTmp = (): string => (existsSync('/var/tmp') ? '/var/tmp' : homedir());

/**
 * .what = a fresh temp dir (its real path) holding an empty workspace `ws` and an empty `home`, for one hostile run;
 *         under `root` when given (tmpdirOutsideTmp, for what bash must find there unless hidden)
 */
export const genSecurityWorkspace = (name: string, root: string = tmpdir()): { base: string; cwd: string; home: string } => {
  const base = tempDir(`bhrain-sec-${name}-`, root);
  const cwd = join(base, 'ws');
  const home = join(base, 'home');
  mkdirSync(cwd);
  mkdirSync(home);
  return { base, cwd, home };
};

/** .what = the ids of a batch of calls, unique in a run, so each tool result finds its attempt */
export const withIds = (prefix: string, calls: StandinToolCall[]): StandinToolCall[] =>
  calls.map((call, index) => ({ ...call, id: `toolu_${prefix}_${index}` }));

/** .what = a bash call the model makes; every one has a timeout, so an escaped background process cannot hold the run */
export const bash = (command: string): StandinToolCall => ({ name: 'bash', input: { command, timeout_ms: 10_000 } });

/**
 * .what = opens each file of `fds` for append and runs `use` with the stdio entries that leave it open at its number in
 *         a child (fd 3 and on; the numbers between are not opened), then closes them
 * .why = a parent that leaves a file open hands it down to bhrain, and through bhrain to whatever bhrain starts
 */
const withInheritedFds = async <T>(fds: Record<number, string>, use: (moreFds: Array<number | 'ignore'>) => Promise<T>): Promise<T> => {
  const opened = Object.entries(fds).map(([at, path]) => ({ at: Number(at), fd: openSync(path, 'a') }));
  try {
    const moreFds: Array<number | 'ignore'> = Array.from({ length: Math.max(2, ...opened.map(({ at }) => at)) - 2 }, () => 'ignore');
    for (const { at, fd } of opened) moreFds[at - 3] = fd;
    return await use(moreFds);
  } finally {
    for (const { fd } of opened) closeSync(fd);
  }
};

/** .what = every tool result the loop sent back to the model, by call id (anthropic wire format) */
export const toolResultsOf = (requests: readonly StandinRequest[]): Map<string, string> => {
  const results = new Map<string, string>();
  for (const request of requests)
    for (const message of request.body.messages ?? [])
      for (const block of Array.isArray(message.content) ? message.content : [])
        if (block.type === 'tool_result')
          results.set(
            block.tool_use_id,
            typeof block.content === 'string'
              ? block.content
              : (block.content ?? []).map((part: { text?: string }) => part.text ?? '').join(''),
          );
  return results;
};

/**
 * .what = runs `bhrain act --atom claude/haiku <args>` (or ask) in `cwd` while the stand-in plays the hostile model: one turn per
 *         entry, each judged (hit, then restore) when the loop comes back for the next turn, then a final text answer
 * .why = judging between turns keeps attempts on a shared target (.env) attributable, in one CLI start
 */
export const runHostileModel = async (input: {
  standin: Standin;
  cwd: string;
  home: string;
  args: string[];
  turns: SecurityTurn[];
  /** the skill the model runs in: act (the default) or ask */
  skill?: 'act' | 'ask';
  /** the model's answer once the turns are done (default `done`) */
  finalText?: string;
  env?: Record<string, string | undefined>;
  /** files the CLI's parent leaves open, by fd number (3 and on): the CLI gets them as a child of a careless parent would */
  inheritedFds?: Record<number, string>;
  /** awaited after the CLI exits, before the turns left are judged */
  settle?: () => Promise<void>;
  /** a command the CLI runs under (runBhrain's wrapper): `bwrap --dev-bind / / --ro-bind <hosts> /etc/hosts --` */
  wrapper?: string[];
}): Promise<{ run: CliRun; outcomes: Map<string, SecurityOutcome> }> => {
  const { standin, turns } = input;
  const hits = new Map<string, string | null>();
  let answered = 0;
  standin.reset();
  // the loop asks for the next turn only after every tool of this one ran: judged and restored here, before it gets it
  standin.respond = () => {
    const index = answered++;
    const done = turns[index - 1];
    if (done && !done.judgeAfterExit) {
      for (const attempt of done.attempts) hits.set(attempt.name, attempt.hit());
      done.restore?.();
    }
    const next = turns[index];
    return next
      ? { toolCalls: [...(next.prepare ?? []), ...next.attempts.flatMap((attempt) => attempt.calls)] }
      : { text: input.finalText ?? 'done' };
  };
  const run = await withInheritedFds(input.inheritedFds ?? {}, (moreFds) =>
    runBhrain({
      args: [input.skill ?? 'act', '--atom', 'claude/haiku', '--input', 'hostile stand-in', ...input.args],
      cwd: input.cwd,
      // HOME is the attacker's target too; the refs go beside it
      env: { ...genCliEnv({ standin, home: join(dirname(input.home), 'bhrain-refs') }, { HOME: input.home }), ...input.env },
      moreFds,
      wrapper: input.wrapper,
    }),
  );
  await input.settle?.();
  // a turn the loop never came back from is judged now, so no attempt is left unjudged
  for (const turn of turns) for (const attempt of turn.attempts) if (!hits.has(attempt.name)) hits.set(attempt.name, attempt.hit());
  standin.respond = null;
  const results = toolResultsOf(standin.requests);
  const outcomes = new Map<string, SecurityOutcome>();
  for (const turn of turns)
    for (const attempt of turn.attempts) {
      const ids = attempt.calls.map((call) => call.id ?? '');
      outcomes.set(attempt.name, {
        escaped: hits.get(attempt.name) ?? null,
        answered: ids.every((id) => results.has(id)),
        results: ids.map((id) => results.get(id) ?? '(no result)'),
      });
    }
  return { run, outcomes };
};

/**
 * .what = runs the bash calls of each turn straight in bash (no bhrain), judging and restoring between turns like the loop
 * .why = the control: an attempt that does not hit its target even unguarded proves nothing, so every one must hit here
 */
export const runTurnsUnguarded = async (input: {
  cwd: string;
  home: string;
  turns: SecurityTurn[];
  /** as runHostileModel's: open in each bash the control runs */
  inheritedFds?: Record<number, string>;
  /** awaited after each turn's commands exit, before it is judged */
  settle?: () => Promise<void>;
}): Promise<Map<string, string | null>> => {
  const hits = new Map<string, string | null>();
  // stdio ignored: a background process the command leaves must not hold the control open
  const runBash = (call: StandinToolCall, moreFds: Array<number | 'ignore'>) =>
    new Promise<void>((resolve) =>
      spawn('bash', ['-c', (call.input as { command: string }).command], {
        cwd: input.cwd,
        env: { PATH: process.env.PATH, HOME: input.home },
        stdio: ['ignore', 'ignore', 'ignore', ...moreFds],
        timeout: 10_000,
      })
        .on('exit', () => resolve())
        .on('error', () => resolve()),
    );
  for (const turn of input.turns) {
    const calls = [...(turn.prepare ?? []), ...turn.attempts.flatMap((attempt) => attempt.calls)].filter((call) => call.name === 'bash');
    await withInheritedFds(input.inheritedFds ?? {}, (moreFds) => Promise.all(calls.map((call) => runBash(call, moreFds))));
    await input.settle?.();
    for (const attempt of turn.attempts) hits.set(attempt.name, attempt.hit());
    turn.restore?.();
  }
  return hits;
};

/**
 * .what = every entry under a directory, keyed by its path relative to it: type, mode, link target, size, mtime and
 *         content hash, so any change shows; `skip` leaves out relative paths (and what is under them)
 */
export const snapshotTree = (dir: string, skip: (shown: string) => boolean = () => false): Map<string, string> => {
  const entries = new Map<string, string>();
  const visit = (path: string, shown: string) => {
    if (skip(shown)) return;
    const stats = lstatSync(path, { throwIfNoEntry: false });
    if (!stats) return;
    const mode = (stats.mode & 0o7777).toString(8);
    if (stats.isSymbolicLink()) entries.set(shown, `link → ${readlinkSync(path)}`);
    else if (stats.isDirectory()) {
      entries.set(shown, `dir ${mode}`);
      for (const name of readdirSync(path).sort()) visit(join(path, name), shown ? `${shown}/${name}` : name);
    } else if (stats.isFile())
      entries.set(shown, `file ${mode} ${stats.size} ${stats.mtimeMs} ${createHash('sha256').update(readFileSync(path)).digest('hex')}`);
    else entries.set(shown, `special ${mode} ${stats.mode >> 12}`);
  };
  visit(dir, '');
  return entries;
};

/** .what = what is wrong with a file that must still be a regular file with its original content, or null */
export const fileChanged = (path: string, content: string): string | null => {
  const stats = lstatSync(path, { throwIfNoEntry: false });
  if (!stats) return `${path} is gone`;
  if (!stats.isFile()) return `${path} is no longer a regular file`;
  const now = readFileSync(path, 'utf8');
  return now === content ? null : `${path} now holds ${JSON.stringify(now.slice(0, 80))}`;
};

/** .what = the paths whose entry differs between two snapshots (changed, created or removed) */
export const changedPaths = (before: Map<string, string>, after: Map<string, string>): string[] =>
  [...new Set([...before.keys(), ...after.keys()])].filter((path) => before.get(path) !== after.get(path)).sort();

/**
 * .what = declares one attempt as a vitest test: it fails when the attempt escaped or never ran, and is counted in the summary
 * .why = the suite prints attempts and escapes per category, and the readme keeps those numbers
 */
export const securityAttempt = (category: SecurityCategory, name: string, outcome: () => SecurityOutcome | undefined) =>
  it(name, () => {
    const found = outcome();
    if (!found) throw new Error(`attempt '${name}' has no outcome: its CLI run did not happen (see the beforeAll failure)`);
    const log = inject('securityLog');
    // an attempt the loop never answered was not tried: counted with the escapes, never with the attempts that held
    if (log) appendFileSync(log, `${JSON.stringify({ category, name, escaped: found.escaped !== null || !found.answered })}\n`);
    expect(found.answered, `the loop never answered this attempt's calls, so it was not tried:\n${found.results.join('\n')}`).toBe(true);
    expect(found.escaped, `escaped; the loop answered:\n${found.results.map((result) => result.slice(0, 400)).join('\n---\n')}`).toBeNull();
  });
