import { homedir } from 'node:os';
import { join } from 'node:path';

import { getBhrainConfigDir } from '../../agent/config/getBhrainConfigDir.js';
import { genRulesGuard } from '../../agent/permission/genRulesGuard.js';
import { resolveAddDirs } from '../../agent/permission/resolveAddDirs.js';
import { withToolRules } from '../../agent/permission/withToolRules.js';
import { BadRequestError } from '../../core/contract/errors.js';
import { genBrainAtom } from '../../providers/genBrainAtom.js';
import { credentialEnvVarsOf, SUPPLIER_TABLE } from '../../core/contract/supplierTable.js';
import { hostsOfEnvMask } from '../../sandbox/network/genMaskedCredentials.js';
import { expandListedPath } from '../../sandbox/resolveHiddenPaths.js';
import type { RunAuditing } from '../audit/genRunAudit.js';
import { resolveMcpServers } from '../mcp/resolveMcpServers.js';
import { readMcpTimeoutMs } from '../mcp/startMcpServers.js';
import { readJsonSchema, readSystemPromptAdditions, readThinking } from '../readSkillOptions.js';
import { resolvePermission } from '../resolvePermission.js';
import { isRhachetAtomSlug } from '../settings/readSettingsFile.js';
import { resolveSkillSettings, SETTINGS_FILE_NAME, type ResolvedSkillSettings } from '../settings/resolveSkillSettings.js';
import { nameSettingOrigin, type SkillSettingsFlags } from '../settings/settingsTable.js';
import type { RunIo } from './genRunIo.js';
import { genHookRunsSink } from './genHookRunsSink.js';
import type { SkillHost } from './SkillHost.js';
import { startSandboxChecks } from './startSandboxChecks.js';

/** .what = lowers each budget of the resolved settings to the host's cap, where the host gives one: never raises one */
const narrowLimits = (values: ResolvedSkillSettings['values'], limits: NonNullable<SkillHost['limits']>): void => {
  for (const key of ['maxIterations', 'maxBudgetUsd', 'maxTokens', 'maxWallTime'] as const) {
    const cap = limits[key];
    if (cap === undefined) continue;
    const current = values[key];
    values[key] = current === undefined ? cap : Math.min(current, cap);
  }
};

/** .what = --add-dir's directories (additionalDirectories) as real paths, `~/` from HOME: one that cannot be added is exit 2 naming its source */
const resolveRunAddDirs = (settings: ResolvedSkillSettings): string[] => {
  const listed = settings.values.additionalDirectories;
  if (!listed.length) return [];
  const home = process.env.HOME || homedir();
  try {
    return resolveAddDirs(
      listed.map((dir) => expandListedPath(dir, home, 'additionalDirectories')),
      { env: process.env },
    );
  } catch (error) {
    throw new BadRequestError(
      `${nameSettingOrigin('additionalDirectories', settings.sources.additionalDirectories)}: ${(error as Error).message}`,
    );
  }
};

/** .what = the run's MCP servers: every source read and checked now (a bad file is exit 2); they start once the run is set up */
const resolveRunMcp = async (io: RunIo, settings: ResolvedSkillSettings, cwd: string) => {
  const { skill, options } = io;
  const mcpServers = await resolveMcpServers(
    {
      cwd,
      configFiles: options.mcpConfig ?? [],
      strict: !!options.strictMcpConfig,
      settings: settings.mcp.settings,
      approval: settings.mcp.approval,
      userSettingsPath: settings.mcp.userPath,
    },
    { env: process.env },
  );
  // --mcp-required asks for every configured server: one left unapproved stops the run as a failed one would
  if (options.mcpRequired && mcpServers.skipped.length) throw new BadRequestError(`--mcp-required: ${mcpServers.skipped.join('; ')}`);
  for (const notice of mcpServers.skipped) io.warn(notice);
  const timeoutMs = readMcpTimeoutMs(process.env);
  // a read-only run (ask, --permission readOnly) offers only the MCP tools their servers mark read-only (readOnlyHint)
  const readOnly = skill === 'ask' || settings.values.permission === 'readOnly';
  return { servers: mcpServers.servers, configured: mcpServers.configured, timeoutMs, readOnly };
};

/**
 * .what = the run's atom: one of ours by its slug, else a rhachet brain atom of that full slug among the repository's
 *         rhachet-brains-* packages (loaded only then); --model, --base-url and --thinking apply to ours alone
 */
const resolveRunAtom = async (io: RunIo, values: ResolvedSkillSettings['values']) => {
  const slug = values.atom!;
  if (!isRhachetAtomSlug(slug))
    return genBrainAtom({ slug, model: values.model, baseUrl: values.baseUrl, thinking: readThinking(io.options.thinking) });
  const { resolveRhachetAtom } = await import('../rhachet/discoverRhachetAtoms.js');
  return resolveRhachetAtom({ slug, cwd: io.cwd }, { env: process.env, warn: io.warn });
};

/**
 * .what = the first half of a run's preparation, each part checked: the settings, the sandbox and network checks
 *         (started), the guard, the MCP servers to start, the hooks (their runs collected by a sink); then the atom
 * .why = every caller mistake is exit 2 before any model request and before anything is written
 */
export const settleRun = async (io: RunIo, flags: SkillSettingsFlags, audit: RunAuditing) => {
  const { skill, options, host, cwd } = io;
  // flags > env > project > user > defaults; a bad settings file is a bad request naming the file and the key
  const settings = await resolveSkillSettings({ skill, flags, cwd, trustProject: !!options.trustProject }, { env: process.env });
  for (const warning of settings.warnings) io.warn(warning);
  const { values } = settings;
  if (host?.limits) narrowLimits(values, host.limits);
  if (!values.atom)
    throw new BadRequestError(
      `no atom: no --atom, no "atom" setting, and no supplier key is set. Set one of ${SUPPLIER_TABLE.map((row) => credentialEnvVarsOf(row).join(' or ')).join(', ')} (the first set, in that order, picks the atom), or choose one with --atom (${SUPPLIER_TABLE.map((row) => row.slugPrefix).join(', ')}, or <prefix>/<model>), or set "atom" once in .bhrain/settings.json (the project), ${join(getBhrainConfigDir(process.env), SETTINGS_FILE_NAME)} (yours) or BHRAIN_ATOM`,
    );
  // an atom picked by the key that is set is said, so a second key added later never switches supplier unseen
  const keyChose = /^env:(?!BHRAIN_)/.test(settings.sources.atom) ? settings.sources.atom.slice('env:'.length) : null;
  if (keyChose) io.log.progress(io.log.color.dim(`atom: ${values.atom} (${keyChose} is set; choose another with --atom)`));
  const sandbox = {
    mode: values.sandbox,
    allowNetwork: values.allowNetwork,
    // the proxy's: a masked variable's hosts too (the toolbox reads what it masks from the proxy)
    allowedDomains: [...new Set([...values.allowedDomains, ...hostsOfEnvMask(values.maskEnv)])],
    denyRead: values.denyRead,
    allowUnixSockets: values.allowUnixSockets,
    env: { pass: values.passEnv },
  };
  const outputSchema = await readJsonSchema(options.jsonSchema, cwd);
  const systemPrompt = await readSystemPromptAdditions(options, values.appendSystemPrompt, cwd);
  const addDirs = resolveRunAddDirs(settings);
  const checks = await startSandboxChecks(io, settings, cwd, addDirs);
  // a builtin name or a rules file (a flag), or inline rules (a settings file, named after it)
  const settingsGuard = withToolRules(
    typeof values.permission === 'string'
      ? await resolvePermission(values.permission, cwd)
      : genRulesGuard(values.permission, `rules(${settings.sources.permission.replace(/^(project|user):/, '')})`),
    { allowed: values.allowedTools, disallowed: values.disallowedTools },
  );
  const narrowedGuard = host?.narrowGuard ? host.narrowGuard(settingsGuard) : settingsGuard;
  const permissionGuard = audit.guard(narrowedGuard);
  const mcp = await resolveRunMcp(io, settings, cwd);
  // the settings files' command hooks as functions; the hook code loads only when a file has hooks
  const hooks = settings.hooks.length
    ? audit.hooks(
        (await import('../hooks/genCommandHooks.js')).genCommandHooks(
          { settings: settings.hooks },
          { cwd, projectDir: settings.approval.root, env: process.env },
        ),
      )
    : undefined;
  const hookRuns = hooks ? genHookRunsSink({ warnings: io.warnings, redact: io.redact }) : null;
  if (hookRuns) io.sinks.add(hookRuns);
  const atom = await resolveRunAtom(io, values);
  return { settings, sandbox, addDirs, outputSchema, systemPrompt, checks, settingsGuard, permissionGuard, mcp, hooks, hookRuns, atom };
};

export type SettledRun = Awaited<ReturnType<typeof settleRun>>;
