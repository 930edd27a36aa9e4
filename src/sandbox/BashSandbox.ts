import type { EnvMask } from './network/genMaskedCredentials.js';
import type { DomainProxy } from './network/startDomainProxy.js';
import type { ReadDenial } from './resolveHiddenPaths.js';

/** .what = the sandbox modes of bash, named as Codex names them: what a command may write */
export const BASH_SANDBOX_MODES = ['read-only', 'workspace-write', 'off'] as const;

/**
 * .what = how bash is confined: read-only (nothing writable but a private /tmp), workspace-write (the working
 *         directory too), or off (unconfined)
 */
export type BashSandboxMode = (typeof BASH_SANDBOX_MODES)[number];

/**
 * .what = the sandbox settings of the bash toolbox, as a library user or the CLI gives them; denyRead and allowRead
 *         (ReadDenial) add paths to those the sandbox hides, or hand paths back
 * .why = one shape for genBashToolBox, BhrainConfig and the CLI (--sandbox, --allow-network, --allow-domain, --pass-env,
 *        --mask-env, sandbox.denyRead, sandbox.allowUnixSockets)
 */
export interface BashSandbox extends ReadDenial {
  /** default workspace-write */
  mode?: BashSandboxMode;
  /** the network is off inside the sandbox unless this is true (no effect when mode is off) */
  allowNetwork?: boolean;
  /**
   * the hosts bash may reach, through a proxy bhrain runs outside the sandbox: exact names (`registry.npmjs.org`) and
   * `*.example.com` (any subdomain of example.com at any depth, not example.com itself); every other host is refused.
   * Absent or empty: the network stays off. No effect with allowNetwork (everything) or mode off (unconfined)
   */
  allowedDomains?: readonly string[];
  /**
   * the proxy that enforces allowedDomains, from startDomainProxy: give it to read its audit (the hosts reached and
   * refused), to choose its DNS lookup, or to close it; absent, the toolbox starts its own at its first call
   */
  domainProxy?: DomainProxy;
  /** what commands get of the environment, in every mode (off too) */
  env?: {
    /**
     * they get the variables of commandEnv's table (PATH, HOME, the locale, toolchain locations, the CI context) less
     * anything that looks like a credential; `pass` adds variables by their exact names (`['NPM_TOKEN']`), credentials too
     */
    pass?: readonly string[];
    /**
     * variables whose value commands see only as a placeholder, each with the hosts (allowedDomains' patterns) bhrain's
     * proxy writes the value into requests to, over https, in headers and basic auth: `{ GH_TOKEN: ['api.github.com',
     * 'github.com'] }`. Their hosts are allowed domains; needs the proxy (not with allowNetwork or mode off). A
     * variable that is not set is skipped, with a warning. With domainProxy, give the credentials to startDomainProxy
     */
    mask?: EnvMask;
  };
  /**
   * the host's unix sockets bash may connect to (`/var/run/docker.sock`), absolute or from `~/`; each must be a socket
   * when the toolbox is made. Absent or empty: no unix socket outside the sandbox's own is reached (a seccomp filter
   * forbids making one). Given: every other host socket is hidden from the sandbox instead. Not with allowNetwork,
   * which would also open the host's abstract sockets; no effect with mode off (unconfined)
   */
  allowUnixSockets?: readonly string[];
}

/** .what = whether a value is one of the sandbox modes */
export const isBashSandboxMode = (value: unknown): value is BashSandboxMode => BASH_SANDBOX_MODES.includes(value as BashSandboxMode);
