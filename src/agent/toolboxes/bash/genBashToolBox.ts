import { realpathSync, statSync, type Stats } from 'node:fs';
import { join } from 'node:path';

import { BadRequestError } from '../../../core/contract/errors.js';
import { genCutSecretRedactor, genSecretRedactor, type SecretRedactor } from '../../../core/secrets/genSecretRedactor.js';
import { readGitCredentials, signGitConfigFiles, type GitCredentials } from '../../git/readGitCredentials.js';
import { DEFAULT_BASH_MAX_TOTAL_CAPTURE_BYTES, DEFAULT_BASH_SANDBOX_MODE } from '../../constants.js';
import type { BhrainToolBox, BhrainToolContext } from '../../tool/BhrainToolBox.js';
import { deferInput, makeTool, type BhrainTool, type BhrainToolOutput } from '../../tool/makeTool.js';
import { toolBoxOf } from '../../tool/executeTool.js';
import { loadToolDescription } from '../../tool/loadToolDescription.js';
import { BASH_SANDBOX_MODES, isBashSandboxMode, type BashSandbox, type BashSandboxMode } from '../../../sandbox/BashSandbox.js';
import { CaptureBudget } from '../../../process/CaptureBudget.js';
import { checkBashSandbox } from '../../../sandbox/checkBashSandbox.js';
import { genBashSandboxPool } from '../../../sandbox/genBashSandboxPool.js';
import { seccompFilterOfThisMachine } from '../../../sandbox/genSeccompFilter.js';
import { hideHostSockets } from '../../../sandbox/hideHostSockets.js';
import { resolveAllowedUnixSockets } from '../../../sandbox/resolveAllowedUnixSockets.js';
import { resolveHiddenPaths, type ReadDenial } from '../../../sandbox/resolveHiddenPaths.js';
import { isUnder } from '../../../core/paths/isUnder.js';
import {
  genBwrapArgs,
  genWorkspaceRoots,
  isSeenInSandbox,
  isShellBehaviorVariable,
  pickSandboxHidden,
  sandboxDataFilesOf,
  type SandboxDataFile,
  type SandboxHidden,
} from '../../../sandbox/genBwrapArgs.js';
import { formatBashRun } from './formatBashRun.js';
import { PROTECTED_ANYWHERE, PROTECTED_AT_ROOT, PROTECTED_IN_GIT_DIR } from '../../../sandbox/protectedPaths.js';
import { genProtectedTree, genQuarantineDir, type ProtectedChange, type ProtectedMounts } from '../../../sandbox/genProtectedTree.js';
import { getBhrainHome } from '../../../core/continuation/getBhrainHome.js';
import { noteHeldBackEnv } from './noteHeldBackEnv.js';
import { checkDomainPattern, normalizeDomainPattern } from '../../../sandbox/network/allowedDomains.js';
import { planSandboxForwarder, withForwarderEnv, type SandboxForwarder } from '../../../sandbox/network/sandboxForwarder.js';
import type { DomainProxy } from '../../../sandbox/network/startDomainProxy.js';
import {
  checkEnvMask,
  genMaskedCredentials,
  hostsOfEnvMask,
  type EnvMask,
  type MaskedCredential,
} from '../../../sandbox/network/genMaskedCredentials.js';
import { genSandboxTrust } from '../../../sandbox/network/genSandboxTrust.js';
import { withMaskedEnv } from '../../../sandbox/network/withMaskedEnv.js';
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

/** .what = the protected entry a command's output names beside an error its read-only mount gives, if any */
const findRefusedProtectedPath = (
  output: string,
  bound: ReadonlyArray<{ shown: string; trustedBy: string }>,
): { shown: string; trustedBy: string } | null => {
  if (!/Read-only file system|Is a directory|Device or resource busy|Permission denied/.test(output)) return null;
  // the name whole: `.bhrain` in `/dev/.bhrain-ca.pem` is not it
  const named = (shown: string) => new RegExp(`(^|[\\s'"\`(/])${shown.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}($|[\\s'"\`):/])`, 'm');
  return bound.find((each) => named(each.shown).test(output)) ?? null;
};

/** .what = the protected kinds as the model and the docs list them: anywhere, in every git directory, at the top */
export const describeProtectedKinds = (): string =>
  `at any depth, ${PROTECTED_ANYWHERE.map((kind) => kind.name).join(', ')}; in every git directory (.git, a submodule's, a worktree's, a bare one), ${PROTECTED_IN_GIT_DIR.map((kind) => kind.name).join(', ')}, and a .git file that points elsewhere; at the top of the working directory, ${PROTECTED_AT_ROOT.map((kind) => kind.name).join(', ')}`;

/**
 * .what = the protected trees of this process, by workspace: one per working directory, shared by every toolbox that
 *         runs bash there (a run's subagents too)
 * .why = a sweep judges what changed since its baseline: two baselines of one tree would each take the other's
 *        changes for someone else's
 */
const protectedTrees = new Map<string, ReturnType<typeof genProtectedTree>>();
const protectedTreeOf = (root: string, env: Record<string, string | undefined>) => {
  let tree = protectedTrees.get(root);
  if (!tree) protectedTrees.set(root, (tree = genProtectedTree({ workspace: root, quarantineDir: genQuarantineDir(getBhrainHome(env)) })));
  return tree;
};

/**
 * .what = the protected trees of every root of the workspace (genWorkspaceRoots) as one: their mounts together, and one
 *         sweep over all; what lies in an added directory is shown by its absolute path, what lies in the working
 *         directory's root relative to it, as ever
 */
const protectedTreesOf = (roots: readonly string[], env: Record<string, string | undefined>) => {
  const trees = roots.map((root, index) => ({
    tree: protectedTreeOf(root, env),
    shown: (path: string) => (index ? join(root, path) : path),
  }));
  return {
    mounts: (): ProtectedMounts => {
      const all = trees.map(({ tree, shown }) => {
        const { bound, pinned } = tree.mounts();
        return { pinned, bound: bound.map((found) => ({ ...found, shown: shown(found.shown) })) };
      });
      return { pinned: all.flatMap((mounts) => mounts.pinned), bound: all.flatMap((mounts) => mounts.bound) };
    },
    sweep: (sinceMs: number): ProtectedChange[] =>
      trees.flatMap(({ tree, shown }) => tree.sweep(sinceMs).map((change) => ({ ...change, path: shown(change.path) }))),
  };
};

/** .what = what the model reads of what a sweep put right, and the warning the user reads, one line each */
const describeProtectedChange = (change: ProtectedChange): { note: string; warning: string } => {
  if (change.action === 'repository')
    return {
      note: `note: this command made a git repository at ${change.path}${change.runs?.length ? `; what in it runs code when git runs there (${change.runs.join(', ')}) is named to the user` : ''}`,
      warning: `bash made a git repository at ${change.path}${change.runs?.length ? `, whose ${change.runs.join(', ')} run code when git runs there: check them before you run git in it` : ''}`,
    };
  const what = change.action === 'removed' ? 'made' : 'changed or removed';
  return {
    note: `note: ${change.path} is a protected path (${change.trustedBy}, outside any sandbox): this command ${what} it, so bhrain ${change.action === 'removed' ? 'removed it' : 'put it back as it was'} when the command ended. Protected paths are read-only to you at any depth; leave them to the user, or tell them why one must change`,
    warning: `bash ${what} ${change.path}, a protected path (${change.trustedBy}): ${change.action === 'removed' ? 'removed' : 'put back as it was'}${change.quarantine ? `; the command's version is in ${change.quarantine}` : ''}`,
  };
};

// what the model is told about where its command runs
const SANDBOX_TEXT: Record<BashSandboxMode, string> = {
  'workspace-write':
    'the command runs in a sandbox. It can write only inside the working directory and /tmp; everything else (your home directory, system paths) is read-only, and so are, in the working directory, the files other programs trust and run, whether they exist or not: {protected} (writing one that exists fails with "Read-only file system" or "Device or resource busy"; one a command makes or changes is removed or put back when the command ends; leave them to the user). Credential stores (~/.ssh, ~/.aws, ~/.npmrc, … and bhrain\'s own $BHRAIN_HOME) read as empty or absent, and git\'s config shows its credentials redacted. /tmp is private to the sandbox, which usually lasts for the whole task: what one call leaves there, later calls may find, but nothing outside the sandbox sees it. No process a call starts outlives the call.',
  'read-only':
    "the command runs in a read-only sandbox: nothing is writable, not even the working directory, except /tmp, which is private to the sandbox, which usually lasts for the whole task: what one call leaves there, later calls may find, but nothing outside the sandbox sees it. Credential stores (~/.ssh, ~/.aws, ~/.npmrc, … and bhrain's own $BHRAIN_HOME) read as empty or absent, and git's config shows its credentials redacted. No process a call starts outlives the call.",
  off: 'none: the command runs unconfined, with the rights of the user running bhrain.',
};

/** .what = what the model is told about the network of a sandbox whose network opens by domain */
const describeAllowedDomains = (allowedDomains: readonly string[]): string =>
  ` The network reaches only these hosts, through bhrain's proxy: ${allowedDomains.join(', ')}${allowedDomains.some((pattern) => pattern.startsWith('*.')) ? ' (*.example.com is any subdomain of example.com, not example.com itself)' : ''}. HTTP_PROXY and HTTPS_PROXY are set for it (curl, git, npm and pip use them; a program that ignores them cannot connect). Any other host is refused: an http:// request gets a 403 that names it, an https:// one fails its CONNECT with 403 (curl: "CONNECT tunnel failed, response 403"). A server a command starts itself is reachable on localhost.`;

/** .what = what the model is told of the masked variables: that they hold placeholders, and where the values go */
const describeEnvMask = (mask: EnvMask): string => {
  const names = Object.keys(mask);
  if (!names.length) return '';
  const listed = Object.entries(mask).map(([name, hosts]) => `$${name} (${hosts.join(', ')})`);
  return ` These variables hold placeholders, not their values: ${listed.join(', ')}. Use them as you would the values (curl -H "Authorization: Bearer $${names[0]}", a git URL over https with it as the password, gh, npm): bhrain's proxy writes the real value into https requests to those hosts only, in headers and basic auth (not in a body or a URL, never over http://), and you never see it.`;
};

/**
 * .what = the allowed domains of a sandbox option, checked: a pattern list, a proxy's, or both when they agree
 * .why = a bad pattern fails when the toolbox is made, naming it, never at the model's first bash call
 */
const readAllowedDomains = (sandbox: BashSandbox | undefined, mask: EnvMask): string[] => {
  const given = (sandbox?.allowedDomains ?? []).map((pattern) => {
    const wrong = checkDomainPattern(pattern);
    if (wrong) throw new BadRequestError(`sandbox.allowedDomains: ${wrong}`);
    return normalizeDomainPattern(pattern);
  });
  // a masked variable's hosts are allowed domains, after the others, as startDomainProxy adds them
  given.push(...hostsOfEnvMask(mask));
  const proxied = sandbox?.domainProxy?.allowedDomains;
  if (proxied && sandbox?.allowedDomains && [...new Set(given)].join(',') !== proxied.join(','))
    throw new BadRequestError(
      `sandbox.allowedDomains (${given.join(', ')}) and sandbox.domainProxy's (${proxied.join(', ')}) differ: give one of them`,
    );
  return proxied ? [...proxied] : [...new Set(given)];
};

/**
 * .what = the masked variables of a sandbox option, checked (each name and host pattern), or those of the proxy given;
 *         and that bhrain's proxy, which writes the values, is what the sandbox's network goes through
 * .why = fail closed and loud when the toolbox is made: with mode off, a command could read the values from bhrain's own
 *        process; with allowNetwork, it reaches every host without the proxy, so the values would have no way out
 */
const readEnvMask = (sandbox: BashSandbox | undefined, mode: BashSandboxMode, allowNetwork: boolean): EnvMask => {
  const given = sandbox?.env?.mask ?? {};
  const wrong = checkEnvMask(given);
  if (wrong) throw new BadRequestError(`sandbox.env.mask: ${wrong}`);
  if (sandbox?.domainProxy && Object.keys(given).length)
    throw new BadRequestError(
      'sandbox.env.mask and sandbox.domainProxy: give one of them (a proxy you start yourself masks the credentials you give startDomainProxy)',
    );
  // a proxy given: what it masks is what the model is told of
  const mask = sandbox?.domainProxy
    ? Object.fromEntries((sandbox.domainProxy.masking?.credentials ?? []).map((credential) => [credential.name, credential.hosts]))
    : given;
  if (Object.keys(mask).length && (mode === 'off' || allowNetwork))
    throw new BadRequestError(
      `sandbox.env.mask needs bhrain's network proxy, which writes the values into requests: ${mode === 'off' ? "with mode 'off', bash runs unconfined and could read them from bhrain's own environment" : 'with allowNetwork, the sandbox reaches every host without it'}. Give the hosts bash needs in allowedDomains instead${mode === 'off' ? ' and keep the sandbox on' : ' of allowNetwork'}, or leave the variables unmasked`,
    );
  return mask;
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
  return (cwd: string, env: Record<string, string | undefined>, hidden: SandboxHidden, roots: readonly string[]): SandboxDataFile[] => {
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
    const unseen = (path: string) => hidden.dirs.some((dir) => isUnder(dir, path)) || !isSeenInSandbox(path, roots);
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
  /** the real paths of the host's unix sockets bash may reach (sandbox.allowUnixSockets); empty: none */
  allowUnixSockets: string[];
  /** started at the first call that needs it, unless given; one that cannot start refuses every call (fail closed) */
  domainProxy: Promise<DomainProxy> | null;
  /** the variables masked: the toolbox's proxy masks them when it starts one (else, those of the proxy given) */
  mask: EnvMask;
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
  const mask = readEnvMask(options.sandbox, sandboxMode, allowNetwork);
  const allowedDomains = readAllowedDomains(options.sandbox, mask);
  const denial: ReadDenial = { denyRead: options.sandbox?.denyRead, allowRead: options.sandbox?.allowRead };
  // fails here, at build time, on a relative path
  resolveHiddenPaths(denial, { env: process.env });
  const unixSockets = sandboxMode === 'off' ? [] : resolveAllowedUnixSockets(options.sandbox?.allowUnixSockets ?? [], { env: process.env });
  // the sandbox would share the host's network namespace, and in it every abstract socket (an X server's, a D-Bus bus
  // at unix:abstract=…), which no file hides: with unix sockets open, that is not a sandbox any more
  if (unixSockets.length && allowNetwork)
    throw new BadRequestError(
      `sandbox.allowUnixSockets cannot go with allowNetwork (--allow-network): with the host's network, bash would also reach every abstract unix socket of the host (an X server's, a D-Bus bus), which no file hides. Allow the hosts bash needs by name instead (allowedDomains, --allow-domain), or leave allowUnixSockets out`,
    );
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
    allowUnixSockets: unixSockets.map((socket) => socket.realPath),
    domainProxy: options.sandbox?.domainProxy ? Promise.resolve(options.sandbox.domainProxy) : null,
    mask,
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
      `${SANDBOX_TEXT[settings.sandboxMode]}${settings.sandboxMode === 'off' ? '' : settings.allowNetwork ? ' The network is on.' : settings.byDomain ? `${describeAllowedDomains(settings.allowedDomains)}${describeEnvMask(settings.mask)}` : ' The network is off: no downloads, no remote APIs (a server started within the same command is reachable on localhost).'}`,
    )
    .replaceAll('{protected}', describeProtectedKinds());

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

  // the files that make the sandbox trust the run's CA, made once for the proxy that masks
  let trust: { proxy: DomainProxy; files: SandboxDataFile[] } | null = null;

  /**
   * .what = the proxy (started at the first call that needs it, with the masked variables' values from the call's
   *         environment), the forwarder a call runs with, and the files that make the sandbox trust the run's CA; or why
   *         the call is refused
   */
  const prepareNetwork = async (
    roots: readonly string[],
    context: BhrainToolContext,
  ): Promise<{ proxy: DomainProxy; forwarder: SandboxForwarder; trustFiles: SandboxDataFile[] } | { refusal: string }> => {
    // loaded only here: a toolbox without allowed domains never loads node's http server
    settings.domainProxy ??= import('../../../sandbox/network/startDomainProxy.js').then(({ startDomainProxy }) => {
      const { credentials, unset } = genMaskedCredentials({ mask: settings.mask }, { env: context.env });
      for (const name of unset) context.log.warn(`sandbox.env.mask: ${name} is not set, so there is nothing to mask`);
      return startDomainProxy({ allowedDomains: settings.allowedDomains, masked: credentials });
    });
    const proxy = await settings.domainProxy.catch((error: Error) => error);
    if (proxy instanceof Error) return { refusal: `the network proxy for the allowed domains could not start (${proxy.message})` };
    const plan = planSandboxForwarder({ roots, writable: settings.sandboxMode === 'workspace-write' });
    if (!plan.ok) return { refusal: plan.reason };
    if (proxy.masking && trust?.proxy !== proxy)
      trust = { proxy, files: genSandboxTrust({ caCertPem: proxy.masking.caCertPem }, { env: context.env }) };
    return { proxy, forwarder: plan.forwarder, trustFiles: proxy.masking ? trust!.files : [] };
  };

  return async (
    limits: BashLimits,
    call: { cwd: string; cwdReal: string; cwdFound: Stats; env: Record<string, string | undefined> },
    context: BhrainToolContext,
  ): Promise<
    | {
        run: BashRun;
        proxyMark: { proxy: DomainProxy; at: number } | null;
        masked: readonly MaskedCredential[];
        bound: ReadonlyArray<{ shown: string; trustedBy: string }>;
        protectedChanges: ProtectedChange[];
      }
    | { refusal: string }
  > => {
    const { cwdReal, cwdFound } = call;
    const roots = genWorkspaceRoots(cwdReal, context.addDirs);
    const startedAt = Date.now();
    // only called for a sandboxed mode
    const mode = settings.sandboxMode as Exclude<BashSandboxMode, 'off'>;
    let env = call.env;
    const check = await checkBashSandbox({ env: context.env });
    if (!check.ok)
      return {
        refusal: `bash is refused: ${check.reason}, or configure the bash toolbox with sandbox: { mode: 'off' } (CLI: --sandbox off) to run bash unconfined. Tell the user: retrying will not help.`,
      };
    // unix sockets allowed: the filter lets a command make them, and the sockets not allowed are hidden instead
    const seccompFilter = seccompFilterOfThisMachine(settings.allowUnixSockets.length > 0);
    if (!seccompFilter)
      return {
        refusal: `bash is refused: bhrain's sandbox has no seccomp filter for ${process.arch}. Tell the user: retrying will not help.`,
      };
    // the network by domain: the proxy outside, and the forwarder that hands it the sandbox's listening socket
    const network = settings.byDomain ? await prepareNetwork(roots, context) : null;
    if (network && 'refusal' in network) return { refusal: `bash is refused: ${network.refusal}. Tell the user: retrying will not help.` };
    const forwarder = network?.forwarder ?? null;
    const proxyMark = network ? { proxy: network.proxy, at: network.proxy.mark() } : null;
    if (network) env = withForwarderEnv(env);
    // last: what the model may see of a masked variable is its placeholder, whatever else the environment passes
    const masking = network?.proxy.masking ?? null;
    if (masking) env = withMaskedEnv(env, masking);
    // what exists of the protected entries is bound read-only (git directories pinned); what a command makes, the sweep
    // after it removes
    const tree = settings.sandboxMode === 'workspace-write' ? protectedTreesOf(roots, context.env) : null;
    const { bound, pinned } = tree?.mounts() ?? { bound: [], pinned: [] };
    // the credential stores and $BHRAIN_HOME, as they are now: a store made since the last call is hidden from this one
    const found = pickSandboxHidden(resolveHiddenPaths(settings.denial, { env: context.env, readable: [context.cwd, cwdReal] }), roots);
    // every host socket but those allowed, as it is now: a daemon started since the last call is hidden from this one
    const hidden = settings.allowUnixSockets.length ? hideHostSockets(found, { allowed: settings.allowUnixSockets, roots }) : found;
    const dataFiles = [...gitConfigView(context.cwd, context.env, hidden, roots), ...(network?.trustFiles ?? [])];
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
        roots,
        protectedPaths: bound.map((found) => found.path),
        pinnedPaths: pinned,
        shellVariables,
        forwarder,
        hidden,
        dataFiles,
      }),
      seccompFilter,
      ...(network ? { serveForwarder: network.proxy.serve } : {}),
      data: sandboxDataFilesOf(hidden, dataFiles).map((file) => file.text),
    };
    // all a sandbox was made for, down to the inodes it binds: a kept one runs this call only if none changed. The
    // filter is the toolbox's, the same for all its calls (its bytes would cost ~20 µs a call to stringify); the CA files,
    // last of the data, are the proxy's for its life, and its placeholders are in the environment, while the bundle would
    // cost a stringify of ~220 KB per call
    const trusted = network?.trustFiles.length ?? 0;
    const keyed = { ...start, seccompFilter: null, ...(trusted ? { data: start.data.slice(0, -trusted) } : {}) };
    const key = JSON.stringify([keyed, context.cwd, env, `${cwdFound.dev}:${cwdFound.ino}`, bound.map((found) => found.inode)]);
    const supervisorEnv = shellVariables.length
      ? Object.fromEntries(Object.entries(env).filter(([name]) => !isShellBehaviorVariable(name)))
      : env;
    const run = await sandboxes.run({ ...limits, key, start }, { cwd: context.cwd, env: supervisorEnv, signal: context.signal });
    // before anything outside the sandbox (a hook, the next run, the user's git) can trust what the command left
    const protectedChanges = tree?.sweep(startedAt) ?? [];
    return { run, proxyMark, masked: masking?.credentials ?? [], bound, protectedChanges };
  };
};

// one redactor per proxy's credentials: they do not change while the proxy runs
const maskedRedactors = new WeakMap<readonly MaskedCredential[], SecretRedactor>();

/** .what = a run's output with the values of masked credentials redacted as `[redacted:<name>]`, whole or cut at a dropped middle */
const redactMaskedValues = (run: BashRun, masked: readonly MaskedCredential[]): void => {
  let redact = maskedRedactors.get(masked);
  if (!redact) maskedRedactors.set(masked, (redact = genSecretRedactor({}, masked)));
  for (const stream of [run.stdout, run.stderr]) {
    const cut = stream.droppedBytes > 0;
    const head = cut ? redact.head(redact(stream.head)) : redact(stream.head);
    const tail = cut ? redact.tail(redact(stream.tail)) : redact(stream.tail);
    if (head !== stream.head || tail !== stream.tail) Object.assign(stream, { head, tail });
  }
};

/**
 * .what = a finished run as the result the model reads: how it ended, notes (refused hosts, a protected path the mount
 *         kept read-only), the output (cut secrets redacted), the exit code, and whether the capture was cut
 */
const answerBashRun = (
  run: BashRun,
  input: {
    command: string;
    timeoutMs: number;
    notes: string[];
    refusedHosts: readonly string[];
    heldBack: readonly string[];
    masked?: readonly MaskedCredential[];
    bound?: ReadonlyArray<{ shown: string; trustedBy: string }>;
    protectedChanges?: readonly ProtectedChange[];
  },
  settings: BashSettings,
  context: BhrainToolContext,
): BhrainToolOutput => {
  const notes = [...input.notes];
  for (const change of input.protectedChanges ?? []) {
    const { note, warning } = describeProtectedChange(change);
    notes.push(note);
    context.log.warn(warning);
  }
  // a masked value a host echoed back is redacted here, whatever its name (the session's redactor knows secret-looking ones)
  if (input.masked?.length) redactMaskedValues(run, input.masked);
  if (input.refusedHosts.length)
    notes.push(
      `note: bhrain's proxy refused ${input.refusedHosts.join(', ')} while this command ran: the sandbox's network reaches only ${settings.allowedDomains.join(', ')}. If the task needs another host, tell the user, who can allow it (--allow-domain); retrying will not help.`,
    );
  // a command that failed for want of a credential the environment held back: the model is told, the user warned once
  // a masked variable was not held back: the command has its placeholder, and the proxy its value
  const heldBack = input.masked?.length
    ? input.heldBack.filter((name) => !input.masked!.some((masked) => masked.name === name))
    : input.heldBack;
  const heldBackNote = noteHeldBackEnv({ run, command: input.command, heldBack });
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
  const refusedPath = input.bound?.length
    ? findRefusedProtectedPath(`${run.stdout.head}${run.stdout.tail}\n${run.stderr.head}${run.stderr.tail}`, input.bound)
    : null;
  if (refusedPath && !input.protectedChanges?.some((change) => change.path === refusedPath.shown))
    notes.push(
      `note: ${refusedPath.shown} is a protected path (${refusedPath.trustedBy}, outside any sandbox): the sandbox keeps it read-only, and so do write and edit unless the user allows that exact path. Leave it to the user, or tell them why it must change`,
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
    ...(input.protectedChanges?.length ? { protectedChanges: input.protectedChanges } : {}),
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
      return answerBashRun(
        ran.run,
        { command, timeoutMs, notes, refusedHosts, heldBack, masked: ran.masked, bound: ran.bound, protectedChanges: ran.protectedChanges },
        settings,
        context,
      );
    },
  });
  return toolBoxOf({ name: 'bash', tools: [bash] });
};
