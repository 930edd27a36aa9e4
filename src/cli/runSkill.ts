import { realpathSync } from 'node:fs';
import { join } from 'node:path';

import { BRAIN_ATOM_SLUGS, genBrainAtom } from '../providers/genBrainAtom.js';
import { CONFIG_CHECKED_BY_CALLER } from '../agent/config/BhrainConfig.js';
import { genSummarizeOnLimit } from '../agent/memory/genSummarizeOnLimit.js';
import { genTruncate } from '../agent/memory/genTruncate.js';
import { loadProjectInstructions } from '../agent/instructions/loadProjectInstructions.js';
import { readGitCredentials } from '../agent/git/readGitCredentials.js';
import type { BhrainEvent } from '../agent/events.js';
import { checkRuleTools } from '../agent/permission/checkRuleTools.js';
import { findUnmatchedMcpDenyRules } from '../agent/permission/findUnmatchedMcpDenyRules.js';
import { genRulesGuard } from '../agent/permission/genRulesGuard.js';
import { getBhrainConfigDir } from '../agent/config/getBhrainConfigDir.js';
import { checkBashSandbox, checkSandboxForwarder } from '../sandbox/checkBashSandbox.js';
import { resolveAllowedUnixSockets } from '../sandbox/resolveAllowedUnixSockets.js';
import type { DomainProxy } from '../sandbox/network/startDomainProxy.js';
import { genMaskedCredentials, hostsOfEnvMask, type MaskedCredential } from '../sandbox/network/genMaskedCredentials.js';
import { getBhrainHome, openBrainRefStore, type BrainRefStore } from '../core/continuation/genBrainRefStore.js';
import { AbortedError, BadRequestError, BhrainError } from '../core/contract/errors.js';
import { genSecretRedactor, type KnownSecret, type SecretRedactor } from '../core/secrets/genSecretRedactor.js';
import { redactBrainEpisode, redactBrainSeries } from '../core/secrets/redactBrainRefs.js';
import { redactDeep } from '../core/secrets/redactDeep.js';
import { genBrainRepl, type BrainReplOn, type BrainReplOutput } from '../agent/repl/genBrainRepl.js';
import type { BhrainContext } from '../agent/BhrainContext.js';
import type { BhrainPermissionGuard } from '../agent/permission/BhrainPermissionGuard.js';
import { EXIT_CODES, exitCodeOf, exitCodeOfError } from './exitCodes.js';
import { onStopSignals } from './onStopSignals.js';
import type { BrainLog } from '../core/contract/BrainContext.js';
import type { SkillName, SkillOptions } from './genSkillCommand.js';
import { genProgressLog } from './genProgressLog.js';
import { genTtyPrompter } from './genTtyPrompter.js';
import { nodeHttpFetch } from '../providers/transport/nodeHttpFetch.js';
import { readSkillInput } from './readSkillInput.js';
import { readJsonSchema, readSystemPromptAdditions, readThinking, validateOptions } from './readSkillOptions.js';
import { resolveOnRef } from './resolveOnRef.js';
import { resolveMcpServers } from './mcp/resolveMcpServers.js';
import { readMcpTimeoutMs, startMcpServers, type McpServersRunning } from './mcp/startMcpServers.js';
import { resolveAgentFiles } from './resolveAgentFiles.js';

// `bhrain skills` and `bhrain agents` reach their readers through this module, which a run loads anyway: a module of
// their own, shared with the run, would be one more file every run loads
export { listAgentSkills, listAgentTypes } from './resolveAgentFiles.js';
import { resolvePermission } from './resolvePermission.js';
import { resolveOutputFile, type OutputFile } from './resolveOutputFile.js';
import { openRunRecord } from './runRecord.js';
import { resolveSkillSettings, SETTINGS_FILE_NAME, type ResolvedSkillSettings } from './settings/resolveSkillSettings.js';
import { nameSettingOrigin, type MemoryStrategy, type SkillSettingsFlags } from './settings/settingsTable.js';
import { genUsageErrorJson, OUTPUT_SCHEMA_VERSION, type SkillOutputJson } from './skillOutputJson.js';
import type { GithubRun } from './github/genGithubRun.js';
import { startRunAudit, type RunAuditing } from './audit/genRunAudit.js';
import type { RunTelemetry } from './telemetry/startRunTelemetry.js';

const MEMORY: Record<MemoryStrategy, typeof genTruncate> = { 'summarize-on-limit': genSummarizeOnLimit, truncate: genTruncate };

/** .what = lowers each budget of the resolved settings to the host's cap, where the host gives one: never raises one */
const narrowLimits = (values: ResolvedSkillSettings['values'], limits: NonNullable<SkillHost['limits']>): void => {
  for (const key of ['maxIterations', 'maxBudgetUsd', 'maxTokens', 'maxWallTime'] as const) {
    const cap = limits[key];
    if (cap === undefined) continue;
    const current = values[key];
    values[key] = current === undefined ? cap : Math.min(current, cap);
  }
};

/**
 * .what = how much progress a run hosted by rhachet writes on stderr
 * .why = rhachet runs a skill in spawnSync with stderr buffered, and spawnSync kills a child whose stderr passes its
 *        maxBuffer (1 MiB by default); rhachet shows that stderr only when the skill fails
 */
const RHACHET_STDERR_MAX_BYTES = 256 * 1024;

/** .what = the lines that name a run's refs and record: on stderr, and after the answer when rhachet hides stderr */
const formatRefLines = (refs: { episode: string; series: string; record: string | null }): string =>
  `episode: ${refs.episode}\nseries: ${refs.series}\n${refs.record ? `record: ${refs.record}\n` : ''}`;

/** .what = the final result written to --output-file; a failure is added to the run's failures and shown, never thrown */
const writeOutput = async (file: OutputFile, text: string, failures: string[], redact: (text: string) => string): Promise<void> => {
  await file.write(text).catch((error: Error) => {
    failures.push(`--output-file ${file.path} could not be written: ${redact(error.message)}`);
  });
};

/**
 * .what = a run hosted by another program in this process (`bhrain mcp serve`): where it works, its task, what stops it,
 *         where its events go, and how the host narrows its budgets and its guard
 * .why = the host runs a skill through this same path (settings, sandbox, budgets, records, refs), never a second
 *        assembly; its stdin and stdout are the host's channel, so a hosted run reads neither, writes nothing to stdout,
 *        registers no signal handler, and never prompts (as the CLI without a terminal)
 */
export interface SkillHost {
  /** the run's working directory (the CLI's is process.cwd()) */
  cwd: string;
  /** the task, as given: stdin is never read */
  prompt: string;
  /** aborted: the run stops as on Ctrl-C (its tools killed, its refs saved, termination interrupted) */
  signal: AbortSignal;
  /** every event of the session, as --output stream-json would write it (unredacted: the host redacts what it shows) */
  onEvent?: (event: BhrainEvent) => void;
  /** caps over the resolved settings: each one only lowers a budget (a lower one of the settings stays) */
  limits?: { maxIterations?: number; maxBudgetUsd?: number; maxTokens?: number; maxWallTime?: number };
  /** the run's guard, from the settings, given back narrowed: the host may only tighten it */
  narrowGuard?: (guard: BhrainPermissionGuard) => BhrainPermissionGuard;
}

/**
 * .what = what every step of one run shares: the flags, how it writes (redacted, to stderr and stdout), its warnings, and
 *         what it must close or report on every way out (the output file, the run record, MCP servers, the domain proxy)
 */
interface RunScope {
  skill: SkillName;
  options: SkillOptions;
  redact: SecretRedactor;
  /** redacts these too, from now on, wherever `redact` is used (the values of masked credentials, once read) */
  addSecrets: (secrets: readonly KnownSecret[]) => void;
  log: ReturnType<typeof genProgressLog>;
  /** --output json or stream-json: stdout ends with exactly one result object */
  machine: boolean;
  /** rhachet passes its --skill on to the skill: it buffers stderr, drops it on success, and prints a header on stdout */
  viaRhachet: boolean;
  writeLine: (value: unknown) => void;
  warnings: string[];
  warn: (message: string) => void;
  /** --output-file gets the final result as well: the answer, or the one result object */
  outputFile: OutputFile | null;
  atomSlug: string | null;
  runRecord: Awaited<ReturnType<typeof openRunRecord>> | null;
  /** every MCP server started is closed (its process group killed) on every way out of the run */
  mcp: McpServersRunning | null;
  /** every hook run of the run (HookCompleted), for its record; null when no settings file has hooks */
  hookRuns: BhrainEvent[] | null;
  /** the domain proxy too: it stops listening and its directory goes */
  network: DomainProxy | null;
  /** where the run works: the host's cwd, else process.cwd() */
  cwd: string;
  /** the program hosting the run (`bhrain mcp serve`), or null for the CLI */
  host: SkillHost | null;
  /** a hosted run's one result object (what --output json prints), kept instead of written */
  result: SkillOutputJson | null;
  /** GitHub Actions' group, annotations and job summary (docs/ci.md): only in a CLI run on GitHub with CI integration on */
  github: GithubRun | null;
  /** the end-of-run audit (docs/cli-reference.md#the-audit): the working directory walked at start, events counted */
  audit: RunAuditing | null;
  /** OpenTelemetry traces and metrics (docs/telemetry.md): only with BHRAIN_TELEMETRY=1 */
  telemetry: RunTelemetry | null;
  /** the task and the answer, as the run printed them: telemetry exports them only with BHRAIN_TELEMETRY_LOG_PROMPTS=1 */
  said: { prompt: string | null; output: string | null };
}

/**
 * .what = the values of the OTLP exporters' headers (OTEL_EXPORTER_OTLP_[TRACES_|METRICS_|LOGS_]HEADERS, `k=v,k=v`,
 *         values percent-encoded), and the credential after a scheme (`Bearer <token>`), as secrets to redact
 * .why = they carry a collector's API key under a name that does not look secret, and a shell the model drives can print
 *        the environment: redacted everywhere, whether telemetry is on or not
 */
const readOtlpHeaderSecrets = (env: Record<string, string | undefined>): KnownSecret[] =>
  ['', 'TRACES_', 'METRICS_', 'LOGS_'].flatMap((signal) => {
    const name = `OTEL_EXPORTER_OTLP_${signal}HEADERS`;
    return (env[name] ?? '').split(',').flatMap((pair) => {
      const raw = pair.slice(pair.indexOf('=') + 1).trim();
      if (!pair.includes('=') || !raw) return [];
      let decoded = raw;
      try {
        decoded = decodeURIComponent(raw);
      } catch {
        // not percent-encoded after all: the raw value is the value
      }
      const credential = decoded.split(/\s+/).at(-1)!;
      return [...new Set([raw, decoded, credential])].map((value) => ({ name, value }));
    });
  });

/** .what = a run's scope, before anything is checked */
const genRunScope = (skill: SkillName, options: SkillOptions, host: SkillHost | null = null): RunScope => {
  const cwd = host?.cwd ?? process.cwd();
  // secrets in the environment, and the credentials in the repository's git config (a checkout token), never reach the
  // model, the terminal, the run record or the refs store: the config is read once, here, and a bad one is skipped
  const known = [...readGitCredentials({ cwd }, { env: process.env }).secrets, ...readOtlpHeaderSecrets(process.env)];
  let redactor = genSecretRedactor(process.env, known);
  // every use goes through the latest redactor: the masked credentials' values are added once the settings name them
  const redact: SecretRedactor = Object.assign((text: string) => redactor(text), {
    head: (text: string) => redactor.head(text),
    tail: (text: string) => redactor.tail(text),
  });
  const addSecrets = (secrets: readonly KnownSecret[]) => {
    known.push(...secrets);
    redactor = genSecretRedactor(process.env, known);
  };
  const viaRhachet = !host && options.skill !== undefined;
  const log = genProgressLog({
    stream: process.stderr,
    quiet: !!options.quiet,
    redact,
    env: process.env,
    maxBytes: viaRhachet ? RHACHET_STDERR_MAX_BYTES : undefined,
  });
  const warnings: string[] = [];
  const scope: RunScope = {
    skill,
    options,
    redact,
    addSecrets,
    log,
    // a hosted run always ends in the one result object, which the host gets instead of stdout
    machine: !!host || options.output === 'json' || options.output === 'stream-json',
    viaRhachet,
    writeLine: host
      ? (value) => {
          scope.result = value as SkillOutputJson;
        }
      : (value) => process.stdout.write(`${JSON.stringify(value)}\n`),
    warnings,
    warn: (message) => {
      warnings.push(message);
      log.warn(message);
    },
    outputFile: null,
    atomSlug: null,
    runRecord: null,
    mcp: null,
    hookRuns: null,
    network: null,
    cwd,
    host,
    result: null,
    github: null,
    audit: null,
    telemetry: null,
    said: { prompt: null, output: null },
  };
  return scope;
};

/**
 * .what = the bash sandbox probe and, with allowed domains, the domain proxy and its forwarder check, all started now;
 *         the unix sockets allowed, each checked (exit 2 for one that is not a socket) and warned about
 * .why = fail at start, not at the model's first bash call: act runs bash, and a sandbox that cannot start refuses it.
 *        The probe (a bwrap process; the CLI started it before loading this module) runs while the rest is set up, and
 *        is awaited before anything is written; a network failure is exit 2 that says why, never a network silently
 *        off (or on)
 */
const startSandboxChecks = async (scope: RunScope, settings: ResolvedSkillSettings, cwd: string) => {
  const { values } = settings;
  const sandboxCheck = scope.skill === 'act' && values.sandbox !== 'off' ? checkBashSandbox({ env: process.env }) : null;
  const socketsFrom = nameSettingOrigin('allowUnixSockets', settings.sources.allowUnixSockets);
  for (const socket of sandboxCheck ? resolveAllowedUnixSockets(values.allowUnixSockets, { env: process.env }) : [])
    scope.warn(`${socketsFrom} opens ${socket.listed} to bash in the sandbox: that is ${socket.grants}`);
  const masked = Object.keys(values.maskEnv).length ? readMaskedCredentials(scope, settings) : null;
  const domainsFrom = values.allowedDomains.length
    ? nameSettingOrigin('allowedDomains', settings.sources.allowedDomains)
    : nameSettingOrigin('maskEnv', settings.sources.maskEnv);
  // with masked credentials, the whole network is no way out: they need the proxy
  const otherwise = masked
    ? 'or run without masked variables and allowed domains'
    : 'or run with --allow-network, or without allowed domains';
  if (sandboxCheck && !values.allowNetwork && (values.allowedDomains.length || masked)) {
    // loaded only now: a run without allowed domains never loads node's http server
    const { startDomainProxy } = await import('../sandbox/network/startDomainProxy.js');
    scope.network = await startDomainProxy({
      // a masked variable's hosts are allowed domains, set or not: what the network reaches does not depend on the environment
      allowedDomains: [...values.allowedDomains, ...hostsOfEnvMask(values.maskEnv)],
      masked: masked ?? [],
    }).catch((error: Error) => {
      throw new BadRequestError(`${domainsFrom}: the network proxy could not start (${error.message}); ${otherwise}`);
    });
  }
  const proxy = scope.network;
  const forwarderCheck =
    proxy && sandboxCheck
      ? sandboxCheck.then((check) =>
          check.ok
            ? checkSandboxForwarder(
                { check, proxy, cwdReal: realpathSync(cwd), writable: values.sandbox === 'workspace-write' },
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
  return { awaitChecks };
};

/**
 * .what = the credentials --mask-env (sandbox.env.mask) masks, read from the environment: each redacted from now on, a
 *         variable that is not set named in a warning; exit 2 where no proxy would write them (the sandbox off, or the
 *         whole network on)
 * .why = fail closed and loud: with the sandbox off, bash could read the values from bhrain's own environment; with
 *        --allow-network, it reaches every host without the proxy, so a masked value could go nowhere
 */
const readMaskedCredentials = (scope: RunScope, settings: ResolvedSkillSettings): MaskedCredential[] => {
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
  for (const name of unset) scope.warn(`${from}: ${name} is not set, so there is nothing to mask; its hosts are still allowed domains`);
  scope.addSecrets(credentials.map(({ name, value }) => ({ name, value })));
  return credentials;
};

/** .what = the run's MCP servers: every source read and checked now (a bad file is exit 2); they start once the run is set up */
const resolveRunMcp = async (scope: RunScope, settings: ResolvedSkillSettings, cwd: string) => {
  const { skill, options } = scope;
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
  for (const notice of mcpServers.skipped) scope.warn(notice);
  const timeoutMs = readMcpTimeoutMs(process.env);
  // a read-only run (ask, --permission readOnly) offers only the MCP tools their servers mark read-only (readOnlyHint)
  const readOnly = skill === 'ask' || settings.values.permission === 'readOnly';
  return { servers: mcpServers.servers, configured: mcpServers.configured, timeoutMs, readOnly };
};

/** .what = the atom of the run, checked against the budget flags: a USD cap needs a known price */
const genRunAtom = (scope: RunScope, settings: ResolvedSkillSettings) => {
  const { values } = settings;
  const atom = genBrainAtom({
    slug: values.atom!,
    model: values.model,
    baseUrl: values.baseUrl,
    thinking: readThinking(scope.options.thinking),
  });
  scope.atomSlug = atom.slug;
  if (atom.spec.price === null && values.maxBudgetUsd !== undefined)
    throw new BadRequestError(
      `--max-budget-usd cannot be enforced on model ${atom.spec.model}: its price is unknown. Cap the run with --max-tokens or --max-wall-time instead`,
    );
  if (atom.spec.price === null)
    scope.warn(
      `unknown model ${atom.spec.model}: its cost is reported as null; its context window is assumed to be ${atom.spec.contextWindowTokens} tokens`,
    );
  return atom;
};

/** .what = --continue / --resume as the series to continue; loaded only when one is given (start-up stays as it was) */
const resolveContinued = async (input: {
  options: SkillOptions;
  cwd: string;
  store: BrainRefStore;
  log: BrainLog;
}): Promise<BrainReplOn> => {
  const { resolveRunToContinue } = await import('./resolveRunToContinue.js');
  const { options } = input;
  const { series } = await resolveRunToContinue(
    { continue: !!options.continue, resume: options.resume, cwd: input.cwd, home: getBhrainHome() },
    { store: input.store, log: input.log },
  );
  return { series };
};

/**
 * .what = everything a run needs before its first request, each part checked: flags → settings → atom → repl, the ref to
 *         continue, the prompt, the sandbox and network checks, the MCP servers to start
 * .why = every caller mistake is exit 2 before any model request and before anything is written
 */
const prepareRun = async (scope: RunScope, args: readonly string[], flags: SkillSettingsFlags) => {
  const { skill, options, redact, log, host } = scope;
  const { cwd } = scope;
  validateOptions(options);
  // the end-of-run audit: its walk of the working directory begins with the first request (startRun)
  scope.audit = startRunAudit({ cwd, redact });
  scope.outputFile = await resolveOutputFile({ path: options.outputFile, cwd });
  // flags > env > project > user > defaults; a bad settings file is a bad request naming the file and the key
  const settings = await resolveSkillSettings({ skill, flags, cwd, trustProject: !!options.trustProject }, { env: process.env });
  for (const warning of settings.warnings) scope.warn(warning);
  const { values } = settings;
  if (host?.limits) narrowLimits(values, host.limits);
  if (!values.atom)
    throw new BadRequestError(
      `missing --atom: choose one of ${BRAIN_ATOM_SLUGS.join(', ')}; or set "atom" once in .bhrain/settings.json (the project), ${join(getBhrainConfigDir(process.env), SETTINGS_FILE_NAME)} (yours) or BHRAIN_ATOM`,
    );
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
  const checks = await startSandboxChecks(scope, settings, cwd);
  // a builtin name or a rules file (a flag), or inline rules (a settings file, named after it)
  const settingsGuard =
    typeof values.permission === 'string'
      ? await resolvePermission(values.permission, cwd)
      : genRulesGuard(values.permission, `rules(${settings.sources.permission.replace(/^(project|user):/, '')})`);
  const narrowedGuard = host?.narrowGuard ? host.narrowGuard(settingsGuard) : settingsGuard;
  const permissionGuard = scope.audit.guard(narrowedGuard);
  const mcp = await resolveRunMcp(scope, settings, cwd);
  // the settings files' command hooks as functions; the hook code loads only when a file has hooks
  const hooks = settings.hooks.length
    ? scope.audit.hooks(
        (await import('./hooks/genCommandHooks.js')).genCommandHooks(
          { settings: settings.hooks },
          { cwd, projectDir: settings.approval.root, env: process.env },
        ),
      )
    : undefined;
  if (hooks) scope.hookRuns = [];
  const atom = genRunAtom(scope, settings);
  // AGENTS.md / CLAUDE.md from the user's config dir and the repository down to here: warnings (cut, unreadable) are shown
  const projectInstructions = values.projectInstructions
    ? await loadProjectInstructions({ cwd }, { env: process.env, log: { ...log, warn: scope.warn } })
    : null;
  // Agent Skills and agent files: a readdir per folder, and the rest only when one exists (warnings shown, the run goes on)
  const agentFiles = await resolveAgentFiles(
    { cwd, skills: values.skills, agents: skill === 'act' && options.subagents !== false, atom, baseUrl: values.baseUrl },
    { env: process.env, log: { ...log, warn: scope.warn }, redact },
  );
  const repl = genBrainRepl({
    atom,
    config: {
      permissionGuard,
      memoryManager: MEMORY[values.memory](),
      maxIterations: values.maxIterations,
      sandbox: { ...sandbox, ...(scope.network ? { domainProxy: scope.network } : {}) },
      limits: { maxBudgetUsd: values.maxBudgetUsd, maxTokens: values.maxTokens, maxWallTimeMs: values.maxWallTime },
      // secrets in the environment never reach the model, from these files and flags neither
      systemPrompt: systemPrompt === undefined ? undefined : redact(systemPrompt),
      instructions: projectInstructions?.text ? redact(projectInstructions.text) : undefined,
      gitStatus: true,
      // act delegates to subagents in fresh contexts (the task tool) unless --no-subagents
      subagents: skill === 'act' && options.subagents !== false && (agentFiles.types.length ? { types: agentFiles.types } : true),
      skills: agentFiles.skills,
      ...(hooks ? { hooks } : {}),
      // each value above was checked where it was read (flags, env, settings files): the config's own shape check
      // (zod, ~20 ms) is not loaded
      [CONFIG_CHECKED_BY_CALLER]: true,
    },
  });
  // a permission rule that names no tool of the run, nor a configured MCP server, is exit 2 before any request
  const rules = settingsGuard.rules?.length
    ? {
        rules: settingsGuard.rules,
        origin:
          settings.sources.permission === 'flag'
            ? `--permission ${values.permission as string}`
            : `"permission" in ${settings.sources.permission.replace(/^(project|user):/, '')}`,
      }
    : null;
  if (rules)
    checkRuleTools({
      ...rules,
      toolNames: repl.brains.act.toolBoxes.list().flatMap((box) => box.definitions.map((definition) => definition.name)),
      mcpServers: mcp.configured,
    });
  // the shared store a store setting names (its backend loaded only then), else the local one in BHRAIN_HOME
  const store = await openBrainRefStore({
    url: values.store,
    home: getBhrainHome(),
    endpoint: process.env.BHRAIN_S3_ENDPOINT || undefined,
    env: process.env,
  });
  // an endpoint without a store shares nothing: said, so a fleet that forgot BHRAIN_STORE does not think it shares refs
  if (process.env.BHRAIN_S3_ENDPOINT && values.store === undefined)
    scope.warn(
      `BHRAIN_S3_ENDPOINT is set but no store is: refs are kept in the local store (${store.location}); set BHRAIN_STORE=s3://bucket/prefix to share them`,
    );
  const on: BrainReplOn | undefined = options.onSeries
    ? { series: await resolveOnRef({ spec: options.onSeries, kind: 'series' }, { store, log }) }
    : options.continue || options.resume !== undefined
      ? await resolveContinued({ options, cwd, store, log })
      : options.onEpisode
        ? { episode: await resolveOnRef({ spec: options.onEpisode, kind: 'episode' }, { store, log }) }
        : undefined;
  // a hosted run's stdin is its host's channel: the host gives the task
  const prompt = redact(
    host ? host.prompt : await readSkillInput({ flag: options.input, args, stdin: process.stdin }, { warn: scope.warn }),
  );
  if (!prompt.trim())
    throw new BadRequestError('missing input: the task is empty. Give it as an argument, with --input "...", or on stdin');
  await checks.awaitChecks();
  return {
    cwd,
    atom,
    repl,
    store,
    on,
    prompt,
    mcp,
    rules,
    timeoutMs: values.timeoutMs,
    schema: outputSchema && { jsonSchema: outputSchema },
  };
};

type PreparedRun = Awaited<ReturnType<typeof prepareRun>>;

/**
 * .what = starts a prepared run: its record opened, Ctrl-C and SIGTERM handled, its MCP servers started, and the context
 *         the session runs in (the prompter on a terminal, the stream-json events)
 */
const startRun = async (scope: RunScope, run: PreparedRun): Promise<BhrainContext> => {
  const { skill, options, redact, log, writeLine, host } = scope;
  const record = await openRunRecord(
    { home: getBhrainHome(), recordDir: options.record ? options.recordDir : null, skill, atom: run.atom.slug, cwd: run.cwd },
    { warn: scope.warn },
  );
  scope.runRecord = record;
  // a hosted run never prompts: its host's stdin is not a terminal to ask on
  const interactive = !host && !!process.stdin.isTTY && !!process.stderr.isTTY;
  // Ctrl-C or a CI cancel stops the run gracefully: tools are killed, the refs saved, exit 130; a second one exits at once.
  // A hosted run stops when its host aborts it (the host handles the process's signals)
  const interrupt = new AbortController();
  if (host) {
    if (host.signal.aborted) interrupt.abort();
    else host.signal.addEventListener('abort', () => interrupt.abort(), { once: true });
  } else {
    onStopSignals((signal) => {
      log.warn(`${signal}: stopping (the run's refs are saved); send it again to exit at once`);
      interrupt.abort();
    });
  }
  // after the signal handlers: a Ctrl-C while they start still closes them. Their tools go to the brain that runs
  if (run.mcp.servers.length)
    scope.mcp = await startMcpServers(
      {
        servers: run.mcp.servers,
        timeoutMs: run.mcp.timeoutMs,
        required: !!options.mcpRequired,
        brain: skill === 'ask' ? run.repl.brains.ask : run.repl.brains.act,
        readOnly: run.mcp.readOnly,
      },
      { cwd: run.cwd, env: process.env, log, signal: interrupt.signal },
    );
  // an MCP tool is known once its server lists it: a deny rule naming a started server's tool it does not have is said
  if (run.rules)
    for (const box of scope.mcp?.boxes ?? [])
      for (const warning of findUnmatchedMcpDenyRules({
        ...run.rules,
        server: box.server,
        toolNames: box.definitions.map((definition) => definition.name),
      }))
        scope.warn(warning);
  // the working directory's start state is walked while the first request is answered: the first tool call waits for it
  scope.audit?.begin();
  const stream = options.output === 'stream-json';
  const partial = stream && !!options.includePartial;
  if (stream)
    writeLine({ type: 'start', schemaVersion: OUTPUT_SCHEMA_VERSION, skill, atom: run.atom.slug, cwd: run.cwd, record: record.dir });
  return {
    cwd: run.cwd,
    log,
    env: process.env,
    fetch: nodeHttpFetch, // the SDKs send over node:http: a one-shot run never loads undici (its wasm parser holds exit)
    timeoutMs: run.timeoutMs,
    signal: interrupt.signal,
    spillDir: record.spillDir,
    redact,
    prompter: interactive ? genTtyPrompter({ stdin: process.stdin, stderr: process.stderr, redact, pause: log.pause }) : undefined,
    onEvent: (event: BhrainEvent) => {
      scope.audit?.onEvent(event);
      scope.telemetry?.onEvent(event);
      // every hook run goes in the run record (hooks.json); a failed one, or one that exited other than 0 or 2,
      // in the JSON's warnings too (the log has shown it on stderr already)
      if (event.type === 'HookCompleted') {
        scope.hookRuns?.push(event);
        const what = `${event.hookEventName} hook '${event.hookName}'`;
        if (event.error) scope.warnings.push(redact(`${what} failed: ${event.error}`));
        else if (event.exitCode !== null && event.exitCode !== 0 && event.exitCode !== 2)
          scope.warnings.push(redact(`${what} exited ${event.exitCode}`));
      }
      if (stream) writeLine(redactDeep({ schemaVersion: OUTPUT_SCHEMA_VERSION, ...event }, redact));
      host?.onEvent?.(event);
    },
    // telemetry follows the subagents too: their sessions, model calls and tool calls; the audit, what their bash put right
    onSubagentEvent: (event) => {
      scope.telemetry?.onEvent(event);
      scope.audit?.onSubagentEvent(event);
    },
    onTextDelta: partial ? (text) => writeLine({ type: 'TextDelta', schemaVersion: OUTPUT_SCHEMA_VERSION, text: redact(text) }) : undefined,
    // the text streamed so far is void (a retried attempt, or <tool_call> markup that was a call): consumers drop it
    onTextReset: partial ? () => writeLine({ type: 'TextReset', schemaVersion: OUTPUT_SCHEMA_VERSION }) : undefined,
    onReasoningDelta: partial
      ? (text) => writeLine({ type: 'ReasoningDelta', schemaVersion: OUTPUT_SCHEMA_VERSION, text: redact(text) })
      : undefined,
  };
};

/**
 * .what = the end of a run that answered: the answer printed first, then the refs and the run record saved together,
 *         the output file written, the exit code decided, the result object (json) and the refs lines printed
 * .why = the answer was paid for: nothing that fails after it may take it away, and a failure after it changes the exit
 *        code (5), never swallows it
 */
const finishRun = async (scope: RunScope, run: PreparedRun, result: BrainReplOutput<unknown>): Promise<number> => {
  const { skill, options, redact, log, machine, writeLine, outputFile, warnings } = scope;
  const { session } = result;
  // the answer may hold a secret the model decoded from a form redaction cannot match (base64): nothing printed or kept does
  const output = redact(session.output);
  scope.said = { prompt: run.prompt, output };
  const structured = run.schema && session.termination === 'complete' ? redactDeep(result.output, redact) : undefined;
  const episode = redactBrainEpisode(result.episode, redact);
  const series = redactBrainSeries(result.series, redact);
  const sessionError = session.error;
  // a run stopped by Ctrl-C or SIGTERM ends in error AbortedError: scripts read it as interrupted (exit 130)
  const termination = sessionError instanceof AbortedError ? 'interrupted' : session.termination;
  let exitCode = exitCodeOf(session.termination, sessionError);

  // the answer first: it was paid for, and nothing that fails after it may take it away
  const answer = output && !output.endsWith('\n') ? `${output}\n` : output;
  if (!machine) process.stdout.write(answer);
  log.stop();

  // every run is a checkpoint, a failed one too (its exchange records the error), so there is always a ref to resume from
  const refsSaved = Promise.all([
    run.store.saveEpisode(episode),
    run.store.saveSeries(series),
    run.store.markCompacted(series.episodes.slice(0, -1).map((compacted) => compacted.hash)),
  ]).then(
    () => null,
    (error: Error) => `the refs could not be saved: ${redact(error.message)}`,
  );
  const metrics = {
    iterations: session.iterations,
    tokens: session.tokens,
    cost: { usd: session.cash?.total ?? null },
    elapsedMs: session.elapsedMs,
  };
  const { toolCalls } = session;
  // the end walk reads only the files whose stat changed since the start walk (their hashes are kept)
  const audit = await scope.audit!.finish({
    network: scope.network?.audit() ?? null,
    tokens: session.tokens,
    costUsd: metrics.cost.usd,
    subagents: session.subagents,
  });
  const error = sessionError ? { code: sessionError.code, message: redact(sessionError.message) } : null;
  // the refs and the run record are written at the same time: the record names the refs by hash, known already
  const [refsFailure, recorded] = await Promise.all([
    refsSaved,
    scope
      .runRecord!.finish({
        prompt: run.prompt,
        output,
        termination,
        refs: { episode: episode.hash, series: series.hash },
        metrics,
        transcript: session.transcript,
        ...(scope.hookRuns ? { hooks: scope.hookRuns } : {}),
        audit,
        error,
        redact,
      })
      .then(
        (dir) => ({ dir, failure: null }),
        (failure: Error) => ({ dir: null, failure: `the run record could not be written: ${redact(failure.message)}` }),
      ),
  ]);
  const record = recorded.dir;
  const failures = [refsFailure, recorded.failure].filter((failure): failure is string => failure !== null);
  // in text mode the file holds the answer printed above; in machine mode the result object, written before stdout
  // gets it, so the object stdout gets says whether the file was written
  if (outputFile && !machine) await writeOutput(outputFile, answer, failures, redact);
  if (failures.length && exitCode === EXIT_CODES.complete) exitCode = EXIT_CODES.loop;
  if (options.failOnDenied && toolCalls.denied > 0 && exitCode === EXIT_CODES.complete) exitCode = EXIT_CODES.denied;

  if (machine) {
    const genJson = (): SkillOutputJson => ({
      type: 'result',
      schemaVersion: OUTPUT_SCHEMA_VERSION,
      skill,
      atom: run.atom.slug,
      output: structured ?? output,
      termination,
      exitCode,
      episode: { hash: episode.hash },
      series: { hash: series.hash },
      record,
      metrics,
      toolCalls: {
        ...toolCalls,
        denials: toolCalls.denials.map((denial) => ({
          callId: denial.callId,
          tool: denial.toolName,
          reason: redact(denial.reason),
          by: denial.by,
        })),
      },
      // where bash went through the domain proxy: only when the network opened by domain
      ...(scope.network ? { network: scope.network.audit() } : {}),
      audit,
      warnings,
      error: error ?? (failures.length ? { code: 'PERSIST', message: failures.join('; ') } : null),
    });
    if (outputFile) {
      const failuresBefore = failures.length;
      await writeOutput(outputFile, `${JSON.stringify(genJson())}\n`, failures, redact);
      if (failures.length > failuresBefore && exitCode === EXIT_CODES.complete) exitCode = EXIT_CODES.loop;
    }
    writeLine(genJson());
  }
  if (sessionError) log.error(sessionError.message);
  for (const failure of failures) log.error(`${failure} (the answer above is complete)`);
  if (exitCode === EXIT_CODES.denied) log.error(`${toolCalls.denied} tool call(s) were denied, and --fail-on-denied was given`);
  if (!options.quiet) {
    const refLines = formatRefLines({ episode: episode.hash, series: series.hash, record });
    process.stderr.write(refLines);
    // rhachet drops stderr on success: in text mode the refs follow the answer on stdout, after a blank line
    if (scope.viaRhachet && !machine) process.stdout.write(`\n${refLines}`);
  }
  if (!scope.github) return exitCode;
  return scope.github.end({
    exitCode,
    termination,
    answer: output,
    error: error?.message ?? (failures.length ? failures.join('; ') : null),
    metrics: { ...metrics, costUsd: metrics.cost.usd },
    denials: toolCalls.denials.map((denial) => ({ tool: denial.toolName, reason: redact(denial.reason), by: denial.by })),
    audit,
  });
};

/**
 * .what = the end of a run that threw: the message (the stack with --debug, for a crash), the one result object with
 *         --output json, the output file emptied of any older result; the error's exit code
 */
const failRun = async (scope: RunScope, error: unknown): Promise<number> => {
  const { skill, options, redact, machine, outputFile } = scope;
  scope.log.stop();
  scope.audit?.stop();
  await scope.runRecord?.dispose();
  const known = error instanceof BhrainError;
  const exitCode = exitCodeOfError(error);
  const message = redact(known ? error.message : `unexpected failure: ${(error as Error)?.message ?? error}`);
  const stack = options.debug ? `\n${redact(String((error as Error)?.stack))}` : ' (run with --debug for the stack)';
  process.stderr.write(`bhrain ${skill}: ${message}${known ? '' : stack}\n`);
  const termination = error instanceof BadRequestError ? 'usage' : exitCode === EXIT_CODES.interrupted ? 'interrupted' : 'error';
  const json = machine
    ? {
        ...genUsageErrorJson(message, { skill, code: known ? error.code : 'CRASH', exitCode }),
        atom: scope.atomSlug,
        warnings: scope.warnings,
        termination,
      }
    : null;
  // the file never keeps an older run's result: it gets this run's error object, or (text) the empty answer
  if (outputFile) await writeOutput(outputFile, json ? `${JSON.stringify(json)}\n` : '', [], redact);
  if (json) scope.writeLine(json);
  if (!scope.github) return exitCode;
  return scope.github.end({ exitCode, termination, answer: null, error: message, metrics: null, denials: [], audit: null });
};

/**
 * .what = one run of a skill: flags → config → loop → answer printed → refs saved → record written
 * .why = the one implementation behind `bhrain <skill>` and the rhachet skill; returns the exit code. The answer is
 *        delivered before anything that can fail after it, and a failure after it changes the exit code (5), never
 *        swallows it; with --output json or stream-json, stdout ends with exactly one result object in every case
 */
export const runSkill = async (
  skill: SkillName,
  options: SkillOptions,
  args: readonly string[] = [],
  /** the settings flags given explicitly (pickExplicitFlags); the env, the settings files and the defaults fill in the rest */
  flags: SkillSettingsFlags = {},
): Promise<number> => {
  return runInScope(genRunScope(skill, options), args, flags);
};

/**
 * .what = one run of a skill hosted by another program in this process (`bhrain mcp serve`): the same run as the CLI's,
 *         with the task, the cwd and the stop signal the host gives; the result object --output json would print
 * .why = the host gets the answer, the termination, the refs and the cost as the CLI's JSON consumers do; nothing is
 *        read from stdin nor written to stdout (the host's channel)
 */
export const runSkillHosted = async (
  skill: SkillName,
  options: SkillOptions,
  flags: SkillSettingsFlags,
  host: SkillHost,
): Promise<SkillOutputJson> => {
  const scope = genRunScope(skill, { ...options, output: 'json', outputFile: undefined, skill: undefined }, host);
  await runInScope(scope, [], flags);
  // every way out of a machine run writes one result object: a missing one is a bug, said as one
  if (!scope.result) throw new Error('the run ended without a result object');
  return scope.result;
};

/**
 * .what = whether a run follows GitHub Actions' conventions: a CLI run (not hosted, not through rhachet, which drops
 *         stderr on success) with GITHUB_ACTIONS=true, unless --no-ci-integration or BHRAIN_CI_INTEGRATION=0
 */
const wantsGithubRun = (scope: RunScope): boolean => {
  if (scope.host || scope.viaRhachet) return false;
  const setting = process.env.BHRAIN_CI_INTEGRATION;
  if (setting !== undefined && !['0', '1', 'true', 'false', ''].includes(setting))
    throw new BadRequestError(`BHRAIN_CI_INTEGRATION=${setting}: give 0 or false (off), or 1 or true (on)`);
  if (scope.options.ciIntegration === false || setting === '0' || setting === 'false') return false;
  return process.env.GITHUB_ACTIONS === 'true';
};

/** .what = an on/off variable: 0, false or unset is off; 1 or true is on; anything else is exit 2 naming it */
const readSwitch = (name: string, on: string): boolean => {
  const setting = process.env[name];
  if (setting !== undefined && !['0', '1', 'true', 'false', ''].includes(setting))
    throw new BadRequestError(`${name}=${setting}: give 1 or true (${on}), or 0 or false (off)`);
  return setting === '1' || setting === 'true';
};

/** .what = whether OpenTelemetry's exporter variable (OTEL_TRACES_EXPORTER, OTEL_METRICS_EXPORTER) leaves the signal on */
const readOtelExporter = (name: string): boolean => {
  const value = process.env[name];
  if (value === undefined || value === '' || value === 'otlp') return true;
  if (value === 'none') return false;
  throw new BadRequestError(
    `${name}=${value}: bhrain exports over OTLP only: give otlp, or none to send no ${name.split('_')[1].toLowerCase()}`,
  );
};

/**
 * .what = the run's OpenTelemetry, with BHRAIN_TELEMETRY=1: both switches checked now (a bad value is exit 2 before
 *         anything else), the OTel code loading while the run is prepared; start() makes it once the run is prepared
 * .why = a run without it loads no OTel module (start-up stays as it was), and a run that fails its checks never
 *        touches a collector
 */
const loadTelemetry = (scope: RunScope): { start: () => Promise<RunTelemetry> } | null => {
  const { env } = process;
  // OTEL_SDK_DISABLED=true is OpenTelemetry's own off switch, over every other setting
  if (!readSwitch('BHRAIN_TELEMETRY', 'export traces and metrics over OTLP') || env.OTEL_SDK_DISABLED === 'true') return null;
  const logPrompts = readSwitch('BHRAIN_TELEMETRY_LOG_PROMPTS', 'export the task, the answer and tool inputs and outputs, redacted');
  const signals = { traces: readOtelExporter('OTEL_TRACES_EXPORTER'), metrics: readOtelExporter('OTEL_METRICS_EXPORTER') };
  for (const name of ['OTEL_EXPORTER_OTLP_ENDPOINT', 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT', 'OTEL_EXPORTER_OTLP_METRICS_ENDPOINT']) {
    const url = env[name];
    // the exporters would fall back to localhost:4318 without a word
    if (url && !/^https?:\/\/[^/]/.test(url))
      throw new BadRequestError(`${name}=${url}: give the collector's http:// or https:// URL, e.g. http://localhost:4318`);
  }
  for (const name of ['OTEL_EXPORTER_OTLP_PROTOCOL', 'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL', 'OTEL_EXPORTER_OTLP_METRICS_PROTOCOL'])
    if (env[name] && env[name] !== 'http/json')
      scope.warn(`${name}=${env[name]} is not used: bhrain's telemetry sends OTLP over HTTP with JSON bodies (http/json)`);
  const loading = import('./telemetry/startRunTelemetry.js');
  // a failed preparation leaves the import unawaited: its failure, if any, is then nobody's to report
  loading.catch(() => {});
  const { redact } = scope;
  return {
    start: async () =>
      (await loading).startRunTelemetry(
        { skill: scope.skill, logPrompts, signals, redact, redactJson: (value) => JSON.stringify(redactDeep(value ?? null, redact)) },
        { env, warn: scope.log.warn },
      ),
  };
};

/** .what = a run in its scope: prepared, started, run, finished (or failed); every MCP server and proxy closed after */
const runInScope = async (scope: RunScope, args: readonly string[], flags: SkillSettingsFlags): Promise<number> => {
  const { skill } = scope;
  let exitCode: number;
  try {
    // loaded only on GitHub: an ordinary run's start-up does not change
    if (wantsGithubRun(scope))
      scope.github = (await import('./github/genGithubRun.js')).startGithubRun({
        skill,
        stderr: process.stderr,
        redact: scope.redact,
        summaryPath: process.env.GITHUB_STEP_SUMMARY || null,
        persistFailureExitCode: EXIT_CODES.loop,
      });
    const telemetry = loadTelemetry(scope);
    const run = await prepareRun(scope, args, flags);
    if (telemetry) scope.telemetry = await telemetry.start();
    const context = await startRun(scope, run);
    const { prompt, on, schema } = run;
    const result =
      skill === 'ask' ? await run.repl.ask({ say: prompt, on, schema }, context) : await run.repl.act({ do: prompt, on, schema }, context);
    exitCode = await finishRun(scope, run, result);
  } catch (error) {
    exitCode = await failRun(scope, error);
  } finally {
    await Promise.all([scope.mcp?.close(), scope.network?.close()]);
  }
  // last, after the answer and the refs: a collector that is down or slow delays the exit at most 2 s, never changes it
  await scope.telemetry?.close({ exitCode, ...scope.said });
  return exitCode;
};
