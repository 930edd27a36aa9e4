import { realpathSync } from 'node:fs';

import { genBashSandboxPool } from './genBashSandboxPool.js';
import { genBwrapArgs } from './genBwrapArgs.js';
import { SECCOMP_ARCHES, seccompFilterOfThisMachine } from './genSeccompFilter.js';
import { findHostProgram } from '../process/findHostProgram.js';
import { planSandboxForwarder } from './network/sandboxForwarder.js';
import type { DomainProxy } from './network/startDomainProxy.js';

/**
 * .what = whether bash can run sandboxed here: the bwrap to run, or why not and how to fix it
 * .note = the reason ends before the opt-out, which the caller adds in its own terms (a CLI flag, a config field)
 */
export type BashSandboxCheck = { ok: true; bwrapPath: string; bashPath: string } | { ok: false; reason: string };

// the probe's result per PATH and workspace: bwrap is looked up and tried once, not on every call
const checked = new Map<string, Promise<BashSandboxCheck>>();

/**
 * the probe's command: it fails when it can read the supervisor's environment, which no command may (3), or when it
 * runs without a seccomp filter (4: /proc/self/status says `Seccomp: 2` under one)
 */
const PROBE_COMMAND = `if cat /proc/1/environ >/dev/null 2>&1; then exit 3; fi; case "$(</proc/self/status)" in *$'\nSeccomp:\t2\n'*) ;; *) exit 4 ;; esac`;

/**
 * .what = starts a read-only sandbox with every flag a real call uses and runs one command in it, which checks that
 *         the supervisor is out of its reach; when it fails, why (closing the caller's parenthesis) and how to fix it
 */
const probe = async (
  input: { bwrapPath: string; bashPath: string; seccompFilter: Uint8Array },
  env: Record<string, string | undefined>,
): Promise<string | null> => {
  const bwrapArgs = genBwrapArgs({
    bashPath: input.bashPath,
    mode: 'read-only',
    allowNetwork: false,
    cwd: '/',
    roots: ['/'],
    protectedPaths: [],
    shellVariables: [],
  });
  const run = await genBashSandboxPool({ idleMs: 0, maxIdle: 0 }).run(
    { key: 'probe', start: { ...input, bwrapArgs }, command: PROBE_COMMAND, timeoutMs: 10_000, maxCaptureBytes: 4096, killGraceMs: 500 },
    { cwd: '/', env: { PATH: env.PATH } },
  );
  const failure = run.spawnError ?? run.sandboxLost ?? (run.timedOut ? 'the probe timed out after 10 s' : null);
  if (failure && /Unknown option --(perms|ro-bind-data|as-pid-1)/.test(failure))
    return `${failure}). bhrain's sandbox needs bubblewrap 0.5.0 or newer: upgrade it`;
  if (failure && /seccomp/i.test(failure))
    return `${failure}). bhrain's sandbox applies a seccomp filter (no host unix sockets): it needs a kernel built with CONFIG_SECCOMP_FILTER, and, in a container, a seccomp profile that lets bwrap install one`;
  if (failure)
    return (
      `${failure}). User namespaces may be disabled: enable them (sysctl kernel.unprivileged_userns_clone=1; on Ubuntu 23.10+ allow bwrap in AppArmor, ` +
      'or sysctl kernel.apparmor_restrict_unprivileged_userns=0; in a container, allow unshare in its seccomp profile)'
    );
  // the kernel leaves a process non-dumpable after it runs a file it cannot read, unless fs.suid_dumpable is 1
  if (run.exitCode === 3)
    return "a command could read the sandbox's supervisor (/proc/1/environ)). Set fs.suid_dumpable to 0 or 2 (sysctl fs.suid_dumpable=0)";
  if (run.exitCode === 4) return `a command ran without bhrain's seccomp filter (/proc/self/status)). Use a bwrap that applies --seccomp`;
  return run.exitCode === 0 ? null : `the probe command exited ${run.exitCode}: ${run.stderr.head.trim() || 'no message'})`;
};

/**
 * .what = finds bwrap on the PATH of `env` and proves once that it can create the sandbox's namespaces
 * .why = fail closed: a sandbox that was asked for and cannot start refuses bash with a fix, never a silent fallback
 */
export const checkBashSandbox = (input: {
  env: Record<string, string | undefined>;
  platform?: NodeJS.Platform;
  /** the workspace, whose PATH entries (node_modules/.bin under `npm run`) bwrap and bash are never taken from; the
   *  process's working directory when absent */
  cwd?: string;
}): Promise<BashSandboxCheck> => {
  const platform = input.platform ?? process.platform;
  if (platform !== 'linux')
    return Promise.resolve({
      ok: false,
      reason: `bash runs in a sandbox by default, but sandboxing on ${platform} is not supported yet (bhrain uses bubblewrap, which is Linux-only)`,
    });
  const pathValue = input.env.PATH ?? '';
  const untrusted = [input.cwd ?? process.cwd()];
  const key = `${pathValue}\0${untrusted[0]}`;
  let check = checked.get(key);
  if (!check) {
    check = (async (): Promise<BashSandboxCheck> => {
      const bwrapPath = findHostProgram({ name: 'bwrap', path: pathValue, untrusted });
      // one there only inside the working directory is one a command could replace: said so, not "not found"
      const insideOnly = (name: string) => {
        const found = findHostProgram({ name, path: pathValue });
        return found
          ? ` (${found} is inside the working directory ${untrusted[0]}, where a command could replace it: run from another directory, or put ${name} on PATH outside it)`
          : '';
      };
      if (!bwrapPath)
        return {
          ok: false,
          reason: `bash runs in a bubblewrap sandbox, but bwrap was not found on PATH${insideOnly('bwrap')}: install it (Debian/Ubuntu: apt-get install bubblewrap; Fedora: dnf install bubblewrap)`,
        };
      // bash is found here, on the host, and run by its real path: the sandbox's private /tmp hides PATH entries under /tmp
      const bashFound = findHostProgram({ name: 'bash', path: pathValue, untrusted });
      const bashPath = bashFound && realpathSync(bashFound);
      if (!bashPath) return { ok: false, reason: `bash was not found on PATH${insideOnly('bash')}: install bash` };
      // fail closed where there is no filter: a sandbox without it would let a command reach the host's unix sockets
      const seccompFilter = seccompFilterOfThisMachine(false);
      if (!seccompFilter)
        return {
          ok: false,
          reason: `bash runs in a bubblewrap sandbox under a seccomp filter that keeps commands from the host's unix sockets, and bhrain has that filter for ${SECCOMP_ARCHES.join(' and ')} only, not ${process.arch}`,
        };
      if (bashPath === '/tmp' || bashPath.startsWith('/tmp/'))
        return {
          ok: false,
          reason: `bash on PATH is ${bashPath}, under /tmp, which the sandbox replaces with a private empty /tmp: put a bash outside /tmp first on PATH`,
        };
      const failure = await probe({ bwrapPath, bashPath, seccompFilter }, input.env);
      if (failure) return { ok: false, reason: `bash runs in a bubblewrap sandbox, but ${bwrapPath} could not create one (${failure}` };
      return { ok: true, bwrapPath, bashPath };
    })();
    checked.set(key, check);
  }
  return check;
};

/**
 * .what = whether the network by domain works here: a sandbox with the forwarder starts, and its forwarder listens and
 *         hands its listening socket to the proxy (before the sandbox runs anything); null when it does, else why not
 * .why = fail closed and loud, before any model request: a forwarder that cannot start would leave the network off
 *        where the user allowed hosts. No connection is made: the audit stays empty
 */
export const checkSandboxForwarder = async (
  input: { check: { bwrapPath: string; bashPath: string }; proxy: DomainProxy; roots: readonly string[]; writable: boolean },
  env: Record<string, string | undefined>,
): Promise<string | null> => {
  const plan = planSandboxForwarder({ roots: input.roots, writable: input.writable });
  if (!plan.ok) return plan.reason;
  const { forwarder } = plan;
  const bwrapArgs = genBwrapArgs({
    bashPath: input.check.bashPath,
    mode: 'read-only',
    allowNetwork: false,
    cwd: '/',
    roots: ['/'],
    protectedPaths: [],
    shellVariables: [],
    forwarder,
  });
  const run = await genBashSandboxPool({ idleMs: 0, maxIdle: 0 }).run(
    {
      key: 'forwarder-probe',
      start: { ...input.check, bwrapArgs, seccompFilter: seccompFilterOfThisMachine(false)!, serveForwarder: input.proxy.serve },
      command: 'true',
      timeoutMs: 15_000,
      maxCaptureBytes: 4096,
      killGraceMs: 500,
    },
    { cwd: '/', env: { PATH: env.PATH } },
  );
  const failure =
    run.spawnError ??
    run.sandboxLost ??
    (run.timedOut ? 'the probe timed out after 15 s' : run.exitCode === 0 ? null : `the probe command exited ${run.exitCode}`);
  return failure && `the network forwarder could not start in the sandbox: ${failure}`;
};
