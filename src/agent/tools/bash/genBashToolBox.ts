import { realpathSync, statSync, type Stats } from 'node:fs';

import { BadRequestError } from '../../../core/contract/errors.js';
import { genCutSecretRedactor, genSecretRedactor } from '../../../core/secrets/genSecretRedactor.js';
import { readGitCredentials, signGitConfigFiles, type GitCredentials } from '../../instructions/readGitCredentials.js';
import { DEFAULT_BASH_MAX_TOTAL_CAPTURE_BYTES, DEFAULT_BASH_SANDBOX_MODE } from '../../constants.js';
import type { BhrainToolBox, BhrainToolContext } from '../../tool/BhrainToolBox.js';
import { deferInput, makeTool, type BhrainTool, type BhrainToolOutput } from '../../tool/makeTool.js';
import { toolBoxOf } from '../../tool/executeTool.js';
import { loadToolDescription } from '../../tool/loadToolDescription.js';
import { BASH_SANDBOX_MODES, isBashSandboxMode, type BashSandbox, type BashSandboxMode } from '../../../sandbox/BashSandbox.js';
import { CaptureBudget } from '../../../sandbox/CaptureBudget.js';
import { checkBashSandbox } from '../../../sandbox/checkBashSandbox.js';
import { genBashSandboxPool } from '../../../sandbox/genBashSandboxPool.js';
import { isUnder, resolveHiddenPaths, type ReadDenial } from '../../../sandbox/resolveHiddenPaths.js';
import {
  findProtectedPaths,
  genBwrapArgs,
  isShellBehaviorVariable,
  pickSandboxHidden,
  sandboxDataFilesOf,
  type SandboxDataFile,
  type SandboxHidden,
} from '../../../sandbox/genBwrapArgs.js';
import { formatBashRun } from './formatBashRun.js';
import { noteHeldBackEnv } from './noteHeldBackEnv.js';
import { PROTECTED_PATHS } from '../../../sandbox/protectedPaths.js';
import { checkDomainPattern, normalizeDomainPattern } from '../../../sandbox/network/allowedDomains.js';
import { planSandboxForwarder, withForwarderEnv, type SandboxForwarder } from '../../../sandbox/network/sandboxForwarder.js';
import type { DomainProxy } from '../../../sandbox/network/startDomainProxy.js';
import { runBashCommand } from '../../../sandbox/runBashCommand.js';
import type { BashRun } from '../../../sandbox/BashRun.js';
import { checkPassedEnvName, pickCommandEnv } from '../../../sandbox/commandEnv.js';

/** .what = a path with its symlinks resolved (libc's realpath, as fs/promises' realpath is), or null where it cannot be */
const realpathOrNull = (path: string): string | null => {
  try {
    return realpathSync.native(path);
  } catch {
    return null;
  }
};

/** .what = the protected path a command's output names beside an error its read-only mount gives, if any */
const findRefusedProtectedPath = (output: string): { path: string; trustedBy: string } | null => {
  if (!/Read-only file system|Is a directory|Device or resource busy|Permission denied/.test(output)) return null;
  return PROTECTED_PATHS.find((each) => output.includes(each.path.replace(/\/$/, ''))) ?? null;
};

// what the model is told about where its command runs
const SANDBOX_TEXT: Record<BashSandboxMode, string> = {
  'workspace-write':
    'the command runs in a sandbox. It can write only inside the working directory and /tmp; everything else (your home directory, system paths) is read-only, and so are, in the working directory, the files other programs trust and run, whether they exist or not: {protected} (writing one fails with "Read-only file system", "Is a directory" or "Device or resource busy"; leave them to the user). Credential stores (~/.ssh, ~/.aws, ~/.npmrc, … and bhrain\'s own $BHRAIN_HOME) read as empty or absent, and git\'s config shows its credentials redacted. /tmp is private to the sandbox, which usually lasts for the whole task: what one call leaves there, later calls may find, but nothing outside the sandbox sees it. No process a call starts outlives the call.',
  'read-only':
    "the command runs in a read-only sandbox: nothing is writable, not even the working directory, except /tmp, which is private to the sandbox, which usually lasts for the whole task: what one call leaves there, later calls may find, but nothing outside the sandbox sees it. Credential stores (~/.ssh, ~/.aws, ~/.npmrc, … and bhrain's own $BHRAIN_HOME) read as empty or absent, and git's config shows its credentials redacted. No process a call starts outlives the call.",
  off: 'none: the command runs unconfined, with the rights of the user running bhrain.',
};

/** .what = what the model is told about the network of a sandbox whose network opens by domain */
const describeAllowedDomains = (allowedDomains: readonly string[]): string =>
  ` The network reaches only these hosts, through bhrain's proxy: ${allowedDomains.join(', ')}${allowedDomains.some((pattern) => pattern.startsWith('*.')) ? ' (*.example.com is any subdomain of example.com, not example.com itself)' : ''}. HTTP_PROXY and HTTPS_PROXY are set for it (curl, git, npm and pip use them; a program that ignores them cannot connect). Any other host is refused: an http:// request gets a 403 that names it, an https:// one fails its CONNECT with 403 (curl: "CONNECT tunnel failed, response 403"). A server a command starts itself is reachable on localhost.`;

/**
 * .what = the allowed domains of a sandbox option, checked: a pattern list, a proxy's, or both when they agree
 * .why = a bad pattern fails when the toolbox is made, naming it, never at the model's first bash call
 */
const readAllowedDomains = (sandbox: BashSandbox | undefined): string[] => {
  const given = (sandbox?.allowedDomains ?? []).map((pattern) => {
    const wrong = checkDomainPattern(pattern);
    if (wrong) throw new BadRequestError(`sandbox.allowedDomains: ${wrong}`);
    return normalizeDomainPattern(pattern);
  });
  const proxied = sandbox?.domainProxy?.allowedDomains;
  if (proxied && sandbox?.allowedDomains && [...new Set(given)].join(',') !== proxied.join(','))
    throw new BadRequestError(
      `sandbox.allowedDomains (${given.join(', ')}) and sandbox.domainProxy's (${proxied.join(', ')}) differ: give one of them`,
    );
  return proxied ? [...proxied] : [...new Set(given)];
};

/** how long a sandbox waits, unused, for the next call before it is killed */
const SANDBOX_IDLE_MS = 60_000;

/** sandboxes kept waiting between calls: one per bash call a turn runs at the same time, up to this */
const MAX_IDLE_SANDBOXES = 4;

/**
 * .what = a reader of the git config files the sandbox shows with their credentials redacted, kept until one of the
 *         files it read changes (a stat each per call)
 * .why = a command could otherwise `cat .git/config > leak.txt`: the checkout token would never reach the model, but
 *        would land in the workspace, which CI may publish. Git inside the sandbox then cannot authenticate with it
 */
const genGitConfigView = () => {
  let kept: { key: string; read: GitCredentials; files: SandboxDataFile[] } | null = null;
  return (cwd: string, env: Record<string, string | undefined>, hidden: SandboxHidden, cwdReal: string): SandboxDataFile[] => {
    const key = JSON.stringify([cwd, env.HOME, env.XDG_CONFIG_HOME]);
    if (kept?.key !== key || signGitConfigFiles(kept.read) !== kept.read.signature) {
      const read = readGitCredentials({ cwd }, { env });
      const redact = genSecretRedactor({}, read.secrets);
      kept = {
        key,
        read,
        files: read.files.filter((file) => file.hasCredentials).map((file) => ({ path: file.path, text: redact(file.text) })),
      };
    }
    // a file the sandbox does not show at all needs no other content: in a hidden directory, or in the host's /tmp
    const unseen = (path: string) => hidden.dirs.some((dir) => isUnder(dir, path)) || (isUnder('/tmp', path) && !isUnder(cwdReal, path));
    return kept.files.filter((file) => !unseen(file.path));
  };
};

/** .what = a bash toolbox's options */
export interface BashToolBoxOptions {
  /** used when the model gives no timeout_ms */
  defaultTimeoutMs?: number;
  /** a larger timeout_ms is clamped to this */
  maxTimeoutMs?: number;
  /** per stream: the head and tail kept in memory; the middle beyond this is dropped and counted */
  maxCaptureBytes?: number;
  /** all running calls together: the head and tail memory they may keep beyond 64 KB per stream half */
  maxTotalCaptureBytes?: number;
  /** how long a timed-out or aborted group has between SIGTERM and SIGKILL */
  killGraceMs?: number;
  /** where commands run: mode workspace-write (default), read-only or off; the network is off unless allowNetwork */
  sandbox?: BashSandbox;
}

/** .what = a bash toolbox's options checked and defaulted, with what its calls share: the capture budget, the proxy */
export interface BashSettings {
  maxTimeoutMs: number;
  defaultTimeoutMs: number;
  maxCaptureBytes: number;
  captureBudget: CaptureBudget;
  killGraceMs: number;
  sandboxMode: BashSandboxMode;
  allowNetwork: boolean;
  allowedDomains: string[];
  /** the network opens by domain, through bhrain's proxy */
  byDomain: boolean;
  denial: ReadDenial;
  /** started at the first call that needs it, unless given; one that cannot start refuses every call (fail closed) */
  domainProxy: Promise<DomainProxy> | null;
  /** the variables passed to commands by their exact names, besides commandEnv's table */
  passEnv: readonly string[];
  /** the sets of held-back names the user was warned about, so a set is warned about once per toolbox */
  warnedHeldBack: Set<string>;
}

/** .what = the options checked (a bad one fails here, when the toolbox is made, naming it) and defaulted */
const readBashSettings = (options: BashToolBoxOptions): BashSettings => {
  const maxTimeoutMs = options.maxTimeoutMs ?? 600_000;
  const sandboxMode = options.sandbox?.mode ?? DEFAULT_BASH_SANDBOX_MODE;
  if (!isBashSandboxMode(sandboxMode))
    throw new BadRequestError(`unknown bash sandbox mode ${JSON.stringify(sandboxMode)}: choose one of ${BASH_SANDBOX_MODES.join(', ')}`);
  const allowNetwork = options.sandbox?.allowNetwork ?? false;
  const allowedDomains = readAllowedDomains(options.sandbox);
  const denial: ReadDenial = { denyRead: options.sandbox?.denyRead, allowRead: options.sandbox?.allowRead };
  // fails here, at build time, on a relative path
  resolveHiddenPaths(denial, { env: process.env });
  const passEnv = [...(options.sandbox?.env?.pass ?? [])];
  for (const name of passEnv) {
    const wrong = checkPassedEnvName(name);
    if (wrong) throw new BadRequestError(`sandbox.env.pass: ${wrong}`);
  }
  return {
    maxTimeoutMs,
    defaultTimeoutMs: Math.min(options.defaultTimeoutMs ?? 120_000, maxTimeoutMs),
    maxCaptureBytes: options.maxCaptureBytes ?? 8 * 1024 * 1024,
    captureBudget: new CaptureBudget(options.maxTotalCaptureBytes ?? DEFAULT_BASH_MAX_TOTAL_CAPTURE_BYTES),
    killGraceMs: options.killGraceMs ?? 2_000,
    sandboxMode,
    allowNetwork,
    allowedDomains,
    // the network opens by domain only where it would otherwise be off: allowNetwork is everything, mode off unconfined
    byDomain: sandboxMode !== 'off' && !allowNetwork && allowedDomains.length > 0,
    denial,
    domainProxy: options.sandbox?.domainProxy ? Promise.resolve(options.sandbox.domainProxy) : null,
    passEnv,
    warnedHeldBack: new Set(),
  };
};

/** .what = bash's description: bash.txt with its timeouts, sandbox and network filled in */
const describeBash = (settings: BashSettings): string =>
  loadToolDescription(new URL('./bash.txt', import.meta.url))
    .replaceAll('{defaultTimeoutMs}', String(settings.defaultTimeoutMs))
    .replaceAll('{maxTimeoutMs}', String(settings.maxTimeoutMs))
    .replaceAll(
      '{sandbox}',
      `${SANDBOX_TEXT[settings.sandboxMode]}${settings.sandboxMode === 'off' ? '' : settings.allowNetwork ? ' The network is on.' : settings.byDomain ? describeAllowedDomains(settings.allowedDomains) : ' The network is off: no downloads, no remote APIs (a server started within the same command is reachable on localhost).'}`,
    )
    .replaceAll('{protected}', PROTECTED_PATHS.map((each) => each.path).join(', '));

/**
 * .what = bash's input: the command, and how long it may run
 * .why = checked once, before the call runs: a command bash -c cannot take (empty, a NUL, longer than one exec argument)
 *        is answered with what to do instead
 */
export const genBashInput = (settings: BashSettings) =>
  deferInput(
    {
      type: 'object',
      properties: {
        command: {
          type: 'string',
          description: 'The command to run with `bash -c`, in the working directory. Pipes, redirects, && and quoting work as in a shell.',
        },
        timeout_ms: {
          type: 'integer',
          minimum: 1,
          description: `How long the command may run, in milliseconds. Default ${settings.defaultTimeoutMs}, at most ${settings.maxTimeoutMs}.`,
        },
      },
      required: ['command'],
      additionalProperties: false,
    },
    async () => (await import('../toolInputs.js')).bashZodInput(settings),
  );

/** .what = what one call runs with: the command, its time, and the capture bounds */
type BashLimits = Parameters<typeof runBashCommand>[0];

/**
 * .what = the runner of sandboxed calls: starts (or reuses) a sandbox for one call and runs the command in it, or says
 *         why the call is refused
 * .why = fail closed: a sandbox or a network proxy that cannot start refuses the call, with how to fix it
 */
const genSandboxedRunner = (settings: BashSettings) => {
  const sandboxes = genBashSandboxPool({ idleMs: SANDBOX_IDLE_MS, maxIdle: MAX_IDLE_SANDBOXES });
  const gitConfigView = genGitConfigView();

  /** .what = the proxy (started at the first call that needs it) and the forwarder a call runs with, or why it is refused */
  const prepareNetwork = async (cwdReal: string): Promise<{ proxy: DomainProxy; forwarder: SandboxForwarder } | { refusal: string }> => {
    // loaded only here: a toolbox without allowed domains never loads node's http server
    settings.domainProxy ??= import('../../../sandbox/network/startDomainProxy.js').then(({ startDomainProxy }) =>
      startDomainProxy({ allowedDomains: settings.allowedDomains }),
    );
    const proxy = await settings.domainProxy.catch((error: Error) => error);
    if (proxy instanceof Error) return { refusal: `the network proxy for the allowed domains could not start (${proxy.message})` };
    const plan = planSandboxForwarder({ proxyDir: proxy.socketDir, cwdReal, writable: settings.sandboxMode === 'workspace-write' });
    return plan.ok ? { proxy, forwarder: plan.forwarder } : { refusal: plan.reason };
  };

  return async (
    limits: BashLimits,
    call: { cwd: string; cwdReal: string; cwdFound: Stats; env: Record<string, string | undefined> },
    context: BhrainToolContext,
  ): Promise<{ run: BashRun; proxyMark: { proxy: DomainProxy; at: number } | null } | { refusal: string }> => {
    const { cwdReal, cwdFound } = call;
    // only called for a sandboxed mode
    const mode = settings.sandboxMode as Exclude<BashSandboxMode, 'off'>;
    let env = call.env;
    const check = await checkBashSandbox({ env: context.env });
    if (!check.ok)
      return {
        refusal: `bash is refused: ${check.reason}, or configure the bash toolbox with sandbox: { mode: 'off' } (CLI: --sandbox off) to run bash unconfined. Tell the user: retrying will not help.`,
      };
    // the network by domain: the proxy outside, and the forwarder the sandbox's supervisor keeps inside
    const network = settings.byDomain ? await prepareNetwork(cwdReal) : null;
    if (network && 'refusal' in network) return { refusal: `bash is refused: ${network.refusal}. Tell the user: retrying will not help.` };
    const forwarder = network?.forwarder ?? null;
    const proxyMark = network ? { proxy: network.proxy, at: network.proxy.mark() } : null;
    if (network) env = withForwarderEnv(env);
    const { bound, placeholders, pinned } =
      settings.sandboxMode === 'workspace-write' ? findProtectedPaths(cwdReal) : { bound: [], placeholders: [], pinned: [] };
    // the credential stores and $BHRAIN_HOME, as they are now: a store made since the last call is hidden from this one
    const hidden = pickSandboxHidden(resolveHiddenPaths(settings.denial, { env: context.env, readable: [context.cwd, cwdReal] }), cwdReal);
    const dataFiles = gitConfigView(context.cwd, context.env, hidden, cwdReal);
    // what changes how bash runs a script reaches the command, not the sandbox's supervisor
    const shellVariables = Object.entries(env).flatMap(([name, value]) =>
      value !== undefined && isShellBehaviorVariable(name) ? [`${name}=${value}`] : [],
    );
    const start = {
      bwrapPath: check.bwrapPath,
      bashPath: check.bashPath,
      bwrapArgs: genBwrapArgs({
        bashPath: check.bashPath,
        mode,
        allowNetwork: settings.allowNetwork,
        cwd: context.cwd,
        cwdReal,
        protectedPaths: [...bound.map((found) => found.path), ...placeholders],
        pinnedPaths: pinned,
        shellVariables,
        forwarder,
        hidden,
        dataFiles,
      }),
      placeholders,
      ...(forwarder ? { forwarderInterpreterPath: forwarder.interpreterPath } : {}),
      data: sandboxDataFilesOf(hidden, dataFiles).map((file) => file.text),
    };
    // all a sandbox was made for, down to the inodes it binds: a kept one runs this call only if none changed
    const key = JSON.stringify([start, context.cwd, env, `${cwdFound.dev}:${cwdFound.ino}`, bound]);
    const supervisorEnv = shellVariables.length
      ? Object.fromEntries(Object.entries(env).filter(([name]) => !isShellBehaviorVariable(name)))
      : env;
    const run = await sandboxes.run({ ...limits, key, start }, { cwd: context.cwd, env: supervisorEnv, signal: context.signal });
    return { run, proxyMark };
  };
};

/**
 * .what = a finished run as the result the model reads: how it ended, notes (refused hosts, a protected path the mount
 *         kept read-only), the output (cut secrets redacted), the exit code, and whether the capture was cut
 */
const answerBashRun = (
  run: BashRun,
  input: { command: string; timeoutMs: number; notes: string[]; refusedHosts: readonly string[]; heldBack: readonly string[] },
  settings: BashSettings,
  context: BhrainToolContext,
): BhrainToolOutput => {
  const notes = [...input.notes];
  if (input.refusedHosts.length)
    notes.push(
      `note: bhrain's proxy refused ${input.refusedHosts.join(', ')} while this command ran: the sandbox's network reaches only ${settings.allowedDomains.join(', ')}. If the task needs another host, tell the user, who can allow it (--allow-domain); retrying will not help.`,
    );
  // a command that failed for want of a credential the environment held back: the model is told, the user warned once
  const heldBackNote = noteHeldBackEnv({ run, command: input.command, heldBack: input.heldBack });
  if (heldBackNote) {
    notes.push(heldBackNote.note);
    const names = heldBackNote.names.join(', ');
    if (!settings.warnedHeldBack.has(names)) {
      settings.warnedHeldBack.add(names);
      context.log.warn(
        `bash: a command failed as one without its credentials does ("${heldBackNote.sign}"); its environment held back ${names}: pass one the task needs with --pass-env NAME (setting sandbox.env.pass)`,
      );
    }
  }
  context.log.debug('bash: finished', {
    exitCode: run.exitCode,
    exitSignal: run.exitSignal,
    timedOut: run.timedOut,
    aborted: run.aborted,
    elapsedMs: run.elapsedMs,
  });
  // a write refused by a protected path's mount says only "Read-only file system": the model is told why, once
  const refusedPath =
    settings.sandboxMode === 'workspace-write'
      ? findRefusedProtectedPath(`${run.stdout.head}${run.stdout.tail}\n${run.stderr.head}${run.stderr.tail}`)
      : null;
  if (refusedPath)
    notes.push(
      `note: ${refusedPath.path} is a protected path (${refusedPath.trustedBy}, outside any sandbox): the sandbox keeps it read-only, whether it exists or not, and so do write and edit unless the user allows that exact path. Leave it to the user, or tell them why it must change`,
    );
  const truncated = run.stdout.droppedBytes > 0 || run.stderr.droppedBytes > 0;
  // a secret cut in two by the dropped middle matches no redaction of the whole value: its pieces are redacted here
  if (truncated) {
    const cut = context.redact ?? genCutSecretRedactor(context.env);
    for (const stream of [run.stdout, run.stderr])
      if (stream.droppedBytes > 0) Object.assign(stream, { head: cut.head(stream.head), tail: cut.tail(stream.tail) });
  }
  return {
    success: run.exitCode === 0,
    output: formatBashRun(run, { timeoutMs: input.timeoutMs, notes }),
    exitCode: run.exitCode,
    ...(truncated ? { truncated } : {}),
  };
};

/**
 * .what = a toolbox with one tool, bash: runs a shell command in the working directory and returns its output and exit code
 * .why = the brain's general-purpose hands; confined by an OS sandbox (bubblewrap) and bounded in time, memory and
 *        lifetime, so a bad command cannot hurt the machine or the loop. Its effect is exec: it runs first in a turn,
 *        before any write is checked, and only where the guard lets more than reads run
 */
export const genBashToolBox = (options: BashToolBoxOptions = {}): BhrainToolBox & { tools: readonly BhrainTool[] } => {
  const settings = readBashSettings(options);
  const runSandboxed = genSandboxedRunner(settings);
  const bash = makeTool({
    name: 'bash',
    description: describeBash(settings),
    input: genBashInput(settings),
    effect: 'exec',
    execute: async ({ command, timeout_ms: requestedTimeoutMs }, context): Promise<BhrainToolOutput> => {
      const failure = (output: string): BhrainToolOutput => ({ success: false, output });
      const notes: string[] = [];
      let timeoutMs = requestedTimeoutMs ?? settings.defaultTimeoutMs;
      if (timeoutMs > settings.maxTimeoutMs) {
        notes.push(
          `note: timeout_ms ${timeoutMs} is above the maximum of ${settings.maxTimeoutMs} ms; it was clamped to ${settings.maxTimeoutMs} ms`,
        );
        timeoutMs = settings.maxTimeoutMs;
      }
      // checked first: a missing cwd would otherwise surface as a misleading "spawn bash ENOENT"; the sandbox binds its
      // real path. Synchronous: a bash call is on every iteration's path, and a stat each is microseconds
      const cwdFound = statSync(context.cwd, { throwIfNoEntry: false });
      const cwdReal = !cwdFound?.isDirectory() ? null : settings.sandboxMode === 'off' ? context.cwd : realpathOrNull(context.cwd);
      if (!cwdFound || cwdReal === null) return failure(`the working directory ${context.cwd} does not exist or is not a directory`);
      if (context.signal?.aborted) return failure('aborted by the caller before the command started');
      // the shell gets what builds need of the caller's environment, and no credential unless passed by its name
      const { env, heldBack } = pickCommandEnv(context.env, { pass: settings.passEnv });
      const { maxCaptureBytes, captureBudget, killGraceMs } = settings;
      const limits = { command, timeoutMs, maxCaptureBytes, captureBudget, killGraceMs };
      context.log.debug('bash: running', { command, cwd: context.cwd, timeoutMs, sandbox: settings.sandboxMode });
      if (settings.sandboxMode === 'off') {
        const run = await runBashCommand(limits, { cwd: context.cwd, env, signal: context.signal });
        if (run.spawnError) return failure(`could not start bash: ${run.spawnError}`);
        return answerBashRun(run, { command, timeoutMs, notes, refusedHosts: [], heldBack }, settings, context);
      }
      const ran = await runSandboxed(limits, { cwd: context.cwd, cwdReal, cwdFound, env }, context);
      if ('refusal' in ran) return failure(ran.refusal);
      // the proxy's refusals from the call's start on are this call's, or (calls running at once) one of theirs
      const refusedHosts = ran.proxyMark?.proxy.deniedSince(ran.proxyMark.at) ?? [];
      if (ran.run.spawnError) return failure(`could not start bash: ${ran.run.spawnError}`);
      return answerBashRun(ran.run, { command, timeoutMs, notes, refusedHosts, heldBack }, settings, context);
    },
  });
  return toolBoxOf({ name: 'bash', tools: [bash] });
};
