import { realpathSync } from 'node:fs';

import { BadRequestError } from '../../core/contract/errors.js';
import { checkBashSandbox, checkSandboxForwarder } from '../../sandbox/checkBashSandbox.js';
import { genWorkspaceRoots } from '../../sandbox/genBwrapArgs.js';
import { genMaskedCredentials, hostsOfEnvMask, type MaskedCredential } from '../../sandbox/network/genMaskedCredentials.js';
import type { DomainProxy } from '../../sandbox/network/startDomainProxy.js';
import { resolveAllowedUnixSockets } from '../../sandbox/resolveAllowedUnixSockets.js';
import type { ResolvedSkillSettings } from '../settings/resolveSkillSettings.js';
import { nameSettingOrigin } from '../settings/settingsTable.js';
import type { RunIo } from './genRunIo.js';

/**
 * .what = the credentials --mask-env (sandbox.env.mask) masks, read from the environment: each redacted from now on, a
 *         variable that is not set named in a warning; exit 2 where no proxy would write them (the sandbox off, or the
 *         whole network on)
 * .why = fail closed and loud: with the sandbox off, bash could read the values from bhrain's own environment; with
 *        --allow-network, it reaches every host without the proxy, so a masked value could go nowhere
 */
const readMaskedCredentials = (io: RunIo, settings: ResolvedSkillSettings): MaskedCredential[] => {
  const { values, sources } = settings;
  const from = nameSettingOrigin('maskEnv', sources.maskEnv);
  if (values.sandbox === 'off')
    throw new BadRequestError(
      `${from} needs bhrain's network proxy, which writes the values into requests, and ${nameSettingOrigin('sandbox', sources.sandbox)} is off: bash would run unconfined and could read them from bhrain's own environment. Keep the sandbox on, or drop ${from}`,
    );
  if (values.allowNetwork)
    throw new BadRequestError(
      `${from} needs bhrain's network proxy, which writes the values into requests, and ${nameSettingOrigin('allowNetwork', sources.allowNetwork)} lets bash reach every host without it: name the hosts bash needs with --allow-domain instead, or drop ${from}`,
    );
  const { credentials, unset } = genMaskedCredentials({ mask: values.maskEnv }, { env: process.env });
  for (const name of unset) io.warn(`${from}: ${name} is not set, so there is nothing to mask; its hosts are still allowed domains`);
  io.addSecrets(credentials.map(({ name, value }) => ({ name, value })));
  return credentials;
};

/**
 * .what = the bash sandbox probe and, with allowed domains, the domain proxy and its forwarder check, all started now;
 *         the unix sockets allowed, each checked (exit 2 for one that is not a socket) and warned about; the proxy (or
 *         null) returned, and closed on every way out of the run
 * .why = fail at start, not at the model's first bash call: act runs bash, and a sandbox that cannot start refuses it.
 *        The probe (a bwrap process; the CLI started it before loading this module) runs while the rest is set up, and
 *        is awaited before anything is written; a network failure is exit 2 that says why, never a network silently
 *        off (or on)
 */
export const startSandboxChecks = async (io: RunIo, settings: ResolvedSkillSettings, cwd: string, addDirs: readonly string[]) => {
  const { values } = settings;
  const sandboxCheck = io.skill === 'act' && values.sandbox !== 'off' ? checkBashSandbox({ env: process.env }) : null;
  const socketsFrom = nameSettingOrigin('allowUnixSockets', settings.sources.allowUnixSockets);
  for (const socket of sandboxCheck ? resolveAllowedUnixSockets(values.allowUnixSockets, { env: process.env }) : [])
    io.warn(`${socketsFrom} opens ${socket.listed} to bash in the sandbox: that is ${socket.grants}`);
  const masked = Object.keys(values.maskEnv).length ? readMaskedCredentials(io, settings) : null;
  const domainsFrom = values.allowedDomains.length
    ? nameSettingOrigin('allowedDomains', settings.sources.allowedDomains)
    : nameSettingOrigin('maskEnv', settings.sources.maskEnv);
  // with masked credentials, the whole network is no way out: they need the proxy
  const otherwise = masked
    ? 'or run without masked variables and allowed domains'
    : 'or run with --allow-network, or without allowed domains';
  // loaded only when wanted: a run without allowed domains never loads node's http server
  const proxy: DomainProxy | null =
    sandboxCheck && !values.allowNetwork && (values.allowedDomains.length || masked)
      ? await (
          await import('../../sandbox/network/startDomainProxy.js')
        )
          .startDomainProxy({
            // a masked variable's hosts are allowed domains, set or not: what the network reaches does not depend on the environment
            allowedDomains: [...values.allowedDomains, ...hostsOfEnvMask(values.maskEnv)],
            masked: masked ?? [],
          })
          .catch((error: Error) => {
            throw new BadRequestError(`${domainsFrom}: the network proxy could not start (${error.message}); ${otherwise}`);
          })
      : null;
  if (proxy) io.closeOnExit(() => proxy.close());
  const forwarderCheck =
    proxy && sandboxCheck
      ? sandboxCheck.then((check) =>
          check.ok
            ? checkSandboxForwarder(
                { check, proxy, roots: genWorkspaceRoots(realpathSync(cwd), addDirs), writable: values.sandbox === 'workspace-write' },
                process.env,
              )
            : null,
        )
      : null;
  /** .what = awaits both checks: a failure is a BadRequestError naming how to run without what failed */
  const awaitChecks = async () => {
    const check = await sandboxCheck;
    if (check && !check.ok) throw new BadRequestError(`${check.reason}, or run with --sandbox off to run bash unconfined`);
    const forwarderFailure = await forwarderCheck;
    if (forwarderFailure) throw new BadRequestError(`${domainsFrom}: ${forwarderFailure}; ${otherwise}`);
  };
  return { awaitChecks, network: proxy };
};
