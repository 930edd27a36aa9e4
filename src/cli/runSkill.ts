import { realpathSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';

import { BRAIN_ATOM_SLUGS, genBrainAtom } from '../providers/genBrainAtom.js';
import { CONFIG_CHECKED_BY_CALLER } from '../agent/BhrainConfig.js';
import { genSummarizeOnLimit } from '../agent/memory/genSummarizeOnLimit.js';
import { genTruncate } from '../agent/memory/genTruncate.js';
import { loadProjectInstructions } from '../agent/instructions/loadProjectInstructions.js';
import { readGitCredentials } from '../agent/instructions/readGitCredentials.js';
import type { BhrainEvent } from '../agent/events.js';
import { genRulesGuard } from '../agent/permission/genRulesGuard.js';
import { getBhrainConfigDir } from '../agent/instructions/getBhrainConfigDir.js';
import { checkBashSandbox, checkSandboxForwarder } from '../sandbox/checkBashSandbox.js';
import type { DomainProxy } from '../sandbox/network/startDomainProxy.js';
import { getBhrainHome, genBrainRefStore } from '../core/continuation/genBrainRefStore.js';
import type { BrainThinking } from '../core/contract/BrainAtom.js';
import { AbortedError, BadRequestError, BhrainError, OutputInvalidError } from '../core/contract/errors.js';
import { genSecretRedactor } from '../core/secrets/genSecretRedactor.js';
import { redactBrainEpisode, redactBrainSeries } from '../core/secrets/redactBrainRefs.js';
import { redactDeep } from '../core/secrets/redactDeep.js';
import { BRAIN_REPL_ARCHS, genBrainRepl, type BrainReplOn } from '../agent/repl/genBrainRepl.js';
import { EXIT_CODES, exitCodeOf } from './exitCodes.js';
import { OUTPUT_FORMATS, type SkillName, type SkillOptions } from './genSkillCommand.js';
import { genProgressLog } from './genProgressLog.js';
import { genTtyPrompter } from './genTtyPrompter.js';
import { readSkillInput } from './readSkillInput.js';
import { resolveOnRef } from './resolveOnRef.js';
import { resolveMcpServers } from './mcp/resolveMcpServers.js';
import { readMcpTimeoutMs, startMcpServers, type McpServersRunning } from './mcp/startMcpServers.js';
import { resolvePermission } from './resolvePermission.js';
import { resolveOutputFile, type OutputFile } from './resolveOutputFile.js';
import { openRunRecord } from './runRecord.js';
import { resolveSkillSettings, SETTINGS_FILE_NAME } from './settings/resolveSkillSettings.js';
import { nameSettingOrigin, type MemoryStrategy, type SkillSettingsFlags } from './settings/SkillSettings.js';
import { genUsageErrorJson, OUTPUT_SCHEMA_VERSION, type SkillOutputJson } from './skillOutputJson.js';

const MEMORY: Record<MemoryStrategy, typeof genTruncate> = { 'summarize-on-limit': genSummarizeOnLimit, truncate: genTruncate };

/**
 * .what = how much progress a run hosted by rhachet writes on stderr
 * .why = rhachet runs a skill in spawnSync with stderr buffered, and spawnSync kills a child whose stderr passes its
 *        maxBuffer (1 MiB by default); rhachet shows that stderr only when the skill fails
 */
const RHACHET_STDERR_MAX_BYTES = 256 * 1024;

/** .what = the lines that name a run's refs and record: on stderr, and after the answer when rhachet hides stderr */
const formatRefLines = (refs: { episode: string; series: string; record: string | null }): string =>
  `episode: ${refs.episode}\nseries: ${refs.series}\n${refs.record ? `record: ${refs.record}\n` : ''}`;

/** .what = the --json-schema value: inline JSON, or a file holding it */
const readJsonSchema = async (value: string | undefined, cwd: string): Promise<object | undefined> => {
  if (value === undefined) return undefined;
  const text = value.trim().startsWith('{')
    ? value
    : await readFile(resolve(cwd, value), 'utf8').catch((error: NodeJS.ErrnoException) => {
        throw new BadRequestError(
          `--json-schema ${value}: not inline JSON (it does not start with {) and not a readable file (${error.code ?? error.message})`,
        );
      });
  try {
    const schema = JSON.parse(text);
    if (schema && typeof schema === 'object' && !Array.isArray(schema)) return schema;
  } catch (error) {
    throw new BadRequestError(`--json-schema: not valid JSON (${(error as Error).message})`);
  }
  throw new BadRequestError('--json-schema: a JSON Schema is a JSON object, e.g. {"type":"object","required":["files"]}');
};

/**
 * .what = what the flags add at the end of the system prompt: --system-prompt-file's text, then --append-system-prompt's
 * .why = a file that cannot be read, or is not text, is the caller's mistake: exit 2 naming the flag, before anything runs
 */
const readSystemPromptAdditions = async (
  options: SkillOptions,
  appendSystemPrompt: string | undefined,
  cwd: string,
): Promise<string | undefined> => {
  let fromFile: string | undefined;
  if (options.systemPromptFile !== undefined) {
    const file = options.systemPromptFile;
    const bytes = await readFile(resolve(cwd, file)).catch((error: NodeJS.ErrnoException) => {
      throw new BadRequestError(
        `--system-prompt-file ${file}: not a readable file (${error.code ?? error.message}); give the path of a text file`,
      );
    });
    try {
      fromFile = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
    } catch {
      throw new BadRequestError(`--system-prompt-file ${file}: not UTF-8 text; give the path of a text file`);
    }
  }
  const parts = [fromFile, appendSystemPrompt].filter((part): part is string => !!part?.trim());
  return parts.length ? parts.map((part) => part.trim()).join('\n\n') : undefined;
};

/**
 * .what = --thinking as the atom's thinking option: off, or a whole number of tokens (the atom checks its minimum)
 * .why = a typo fails before the run starts, naming the flag and what it takes
 */
const readThinking = (value: string | undefined): BrainThinking | undefined => {
  if (value === undefined) return undefined;
  if (value.trim() === 'off') return 'off';
  if (!/^\d+$/.test(value.trim()))
    throw new BadRequestError(
      `--thinking '${value}' is not a thinking budget: give a whole number of tokens (claude: at least 1024), or off`,
    );
  return { budgetTokens: Number(value.trim()) };
};

/** .what = the flags that are not settings, checked before anything runs; each failure names the flag and the valid choices */
const validateOptions = (options: SkillOptions) => {
  if (!BRAIN_REPL_ARCHS.includes(options.arch as (typeof BRAIN_REPL_ARCHS)[number]))
    throw new BadRequestError(`unknown --arch '${options.arch}': choose one of ${BRAIN_REPL_ARCHS.join(', ')}`);
  if (!OUTPUT_FORMATS.includes(options.output as (typeof OUTPUT_FORMATS)[number]))
    throw new BadRequestError(`unknown --output '${options.output}': choose ${OUTPUT_FORMATS.join(', ')}`);
  if (options.includePartial && options.output !== 'stream-json') throw new BadRequestError('--include-partial needs --output stream-json');
  if (options.onEpisode && options.onSeries)
    throw new BadRequestError(
      'give --on-episode or --on-series, not both: --on-series continues a conversation, --on-episode branches from a checkpoint',
    );
  if (options.recordDir !== undefined && !options.record) throw new BadRequestError('give --record-dir or --no-record, not both');
};

/** .what = the final result written to --output-file; a failure is added to the run's failures and shown, never thrown */
const writeOutput = async (file: OutputFile, text: string, failures: string[], redact: (text: string) => string): Promise<void> => {
  await file.write(text).catch((error: Error) => {
    failures.push(`--output-file ${file.path} could not be written: ${redact(error.message)}`);
  });
};

/** .what = the exit code of an error that ended a run */
const exitCodeOfError = (error: BhrainError): number => (error instanceof OutputInvalidError ? EXIT_CODES.outputInvalid : error.exitCode);

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
  // secrets in the environment, and the credentials in the repository's git config (a checkout token), never reach the
  // model, the terminal, the run record or the refs store: the config is read once, here, and a bad one is skipped
  const redact = genSecretRedactor(process.env, readGitCredentials({ cwd: process.cwd() }, { env: process.env }).secrets);
  // rhachet passes its --skill on to the skill: it buffers stderr, drops it on success, and prints a header on stdout
  const viaRhachet = options.skill !== undefined;
  const log = genProgressLog({
    stream: process.stderr,
    quiet: !!options.quiet,
    redact,
    env: process.env,
    maxBytes: viaRhachet ? RHACHET_STDERR_MAX_BYTES : undefined,
  });
  const machine = options.output === 'json' || options.output === 'stream-json';
  const writeLine = (value: unknown) => process.stdout.write(`${JSON.stringify(value)}\n`);
  // --output-file gets the final result as well: the answer, or the one result object
  let outputFile: OutputFile | null = null;
  const warnings: string[] = [];
  const warn = (message: string) => {
    warnings.push(message);
    log.warn(message);
  };
  let atomSlug: string | null = null;
  const runRecord = { current: null as Awaited<ReturnType<typeof openRunRecord>> | null };
  // every MCP server started is closed (its process group killed) on every way out of the run
  const mcp = { current: null as McpServersRunning | null };
  // the domain proxy too: it stops listening and its directory goes
  const network = { current: null as DomainProxy | null };
  try {
    const cwd = process.cwd();
    validateOptions(options);
    outputFile = await resolveOutputFile({ path: options.outputFile, cwd });
    // flags > env > project > user > defaults; a bad settings file is a bad request naming the file and the key
    const settings = await resolveSkillSettings({ skill, flags, cwd, trustProject: !!options.trustProject }, { env: process.env });
    for (const warning of settings.warnings) warn(warning);
    const { values } = settings;
    if (!values.atom)
      throw new BadRequestError(
        `missing --atom: choose one of ${BRAIN_ATOM_SLUGS.join(', ')}; or set "atom" once in .bhrain/settings.json (the project), ${join(getBhrainConfigDir(process.env), SETTINGS_FILE_NAME)} (yours) or BHRAIN_ATOM`,
      );
    const { maxIterations, timeoutMs } = values;
    const limits = { maxBudgetUsd: values.maxBudgetUsd, maxTokens: values.maxTokens, maxWallTimeMs: values.maxWallTime };
    const memory = MEMORY[values.memory]();
    const sandbox = {
      mode: values.sandbox,
      allowNetwork: values.allowNetwork,
      allowedDomains: values.allowedDomains,
      denyRead: values.denyRead,
    };
    const outputSchema = await readJsonSchema(options.jsonSchema, cwd);
    const systemPrompt = await readSystemPromptAdditions(options, values.appendSystemPrompt, cwd);
    // fail at start, not at the model's first bash call: act runs bash, and a sandbox that cannot start refuses it. The
    // probe (a bwrap process; the CLI started it before loading this module) runs while the rest is set up, and is
    // awaited before anything is written
    const sandboxCheck = skill === 'act' && sandbox.mode !== 'off' ? checkBashSandbox({ env: process.env }) : null;
    // the network by domain: the proxy starts now, and a sandbox with its forwarder is tried, both before any model
    // request; a failure is exit 2 that says why, never a network silently off (or on)
    const domainsFrom = nameSettingOrigin('allowedDomains', settings.sources.allowedDomains);
    if (sandboxCheck && !values.allowNetwork && values.allowedDomains.length) {
      // loaded only now: a run without allowed domains never loads node's http server
      const { startDomainProxy } = await import('../sandbox/network/startDomainProxy.js');
      network.current = await startDomainProxy({ allowedDomains: values.allowedDomains }).catch((error: Error) => {
        throw new BadRequestError(
          `${domainsFrom}: the network proxy could not start (${error.message}); or run with --allow-network, or without allowed domains`,
        );
      });
    }
    const proxy = network.current;
    const forwarderCheck =
      proxy && sandboxCheck
        ? sandboxCheck.then((check) =>
            check.ok
              ? checkSandboxForwarder(
                  { check, proxy, cwdReal: realpathSync(cwd), writable: sandbox.mode === 'workspace-write' },
                  process.env,
                )
              : null,
          )
        : null;
    // a builtin name or a rules file (a flag), or inline rules (a settings file, named after it)
    const permissionGuard =
      typeof values.permission === 'string'
        ? await resolvePermission(values.permission, cwd)
        : genRulesGuard(values.permission, `rules(${settings.sources.permission.replace(/^(project|user):/, '')})`);
    // MCP servers: every source read and checked now (a bad file is exit 2); they start once the run is set up
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
    for (const notice of mcpServers.skipped) warn(notice);
    const mcpTimeoutMs = readMcpTimeoutMs(process.env);
    // a read-only run (ask, --permission readOnly) offers only the MCP tools their servers mark read-only (readOnlyHint)
    const readOnlyRun = skill === 'ask' || values.permission === 'readOnly';
    const atom = genBrainAtom({
      slug: values.atom,
      model: values.model,
      baseUrl: values.baseUrl,
      thinking: readThinking(options.thinking),
    });
    atomSlug = atom.slug;
    if (atom.spec.price === null && limits.maxBudgetUsd !== undefined)
      throw new BadRequestError(
        `--max-budget-usd cannot be enforced on model ${atom.spec.model}: its price is unknown. Cap the run with --max-tokens or --max-wall-time instead`,
      );
    if (atom.spec.price === null)
      warn(
        `unknown model ${atom.spec.model}: its cost is reported as null; its context window is assumed to be ${atom.spec.contextWindowTokens} tokens`,
      );
    // AGENTS.md / CLAUDE.md from the user's config dir and the repository down to here: warnings (cut, unreadable) are shown
    const projectInstructions = values.projectInstructions
      ? await loadProjectInstructions({ cwd }, { env: process.env, log: { ...log, warn } })
      : null;
    const repl = genBrainRepl({
      atom,
      config: {
        permissionGuard,
        memoryManager: memory,
        maxIterations,
        sandbox: { ...sandbox, ...(network.current ? { domainProxy: network.current } : {}) },
        limits,
        // secrets in the environment never reach the model, from these files and flags neither
        systemPrompt: systemPrompt === undefined ? undefined : redact(systemPrompt),
        instructions: projectInstructions?.text ? redact(projectInstructions.text) : undefined,
        gitStatus: true,
        // act delegates to subagents in fresh contexts (the task tool) unless --no-subagents
        subagents: skill === 'act' && options.subagents !== false,
        // each value above was checked where it was read (flags, env, settings files): the config's own shape check
        // (zod, ~20 ms) is not loaded
        [CONFIG_CHECKED_BY_CALLER]: true,
      },
    });
    const store = genBrainRefStore({ home: getBhrainHome() });
    const on: BrainReplOn | undefined = options.onSeries
      ? { series: await resolveOnRef({ spec: options.onSeries, kind: 'series' }, { store, log }) }
      : options.onEpisode
        ? { episode: await resolveOnRef({ spec: options.onEpisode, kind: 'episode' }, { store, log }) }
        : undefined;
    const prompt = redact(await readSkillInput({ flag: options.input, args, stdin: process.stdin }, { warn }));
    if (!prompt.trim())
      throw new BadRequestError('missing input: the task is empty. Give it as an argument, with --input "...", or on stdin');
    const check = await sandboxCheck;
    if (check && !check.ok) throw new BadRequestError(`${check.reason}, or run with --sandbox off to run bash unconfined`);
    const forwarderFailure = await forwarderCheck;
    if (forwarderFailure)
      throw new BadRequestError(`${domainsFrom}: ${forwarderFailure}; or run with --allow-network, or without allowed domains`);
    runRecord.current = await openRunRecord(
      {
        home: getBhrainHome(),
        recordDir: options.record ? options.recordDir : null,
        skill,
        atom: atom.slug,
        cwd,
      },
      { warn },
    );

    const interactive = !!process.stdin.isTTY && !!process.stderr.isTTY;
    // Ctrl-C or a CI cancel stops the run gracefully: tools are killed, the refs saved, exit 130; a second one exits at once
    const interrupt = new AbortController();
    const onSignal = (signal: NodeJS.Signals) => {
      if (interrupt.signal.aborted) process.exit(EXIT_CODES.interrupted);
      log.warn(`${signal}: stopping (the run's refs are saved); send it again to exit at once`);
      interrupt.abort();
    };
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
    // after the signal handlers: a Ctrl-C while they start still closes them. Their tools go to the brain that runs
    if (mcpServers.servers.length)
      mcp.current = await startMcpServers(
        {
          servers: mcpServers.servers,
          timeoutMs: mcpTimeoutMs,
          required: !!options.mcpRequired,
          brain: skill === 'ask' ? repl.brains.ask : repl.brains.act,
          readOnly: readOnlyRun,
        },
        { cwd, env: process.env, log, signal: interrupt.signal },
      );
    const stream = options.output === 'stream-json';
    if (stream)
      writeLine({ type: 'start', schemaVersion: OUTPUT_SCHEMA_VERSION, skill, atom: atom.slug, cwd, record: runRecord.current.dir });
    const context = {
      cwd,
      log,
      env: process.env,
      timeoutMs,
      signal: interrupt.signal,
      spillDir: runRecord.current.spillDir,
      redact,
      prompter: interactive ? genTtyPrompter({ stdin: process.stdin, stderr: process.stderr, redact, pause: log.pause }) : undefined,
      onEvent: stream
        ? (event: BhrainEvent) => writeLine(redactDeep({ schemaVersion: OUTPUT_SCHEMA_VERSION, ...event }, redact))
        : undefined,
      onTextDelta:
        stream && options.includePartial
          ? (text: string) => writeLine({ type: 'TextDelta', schemaVersion: OUTPUT_SCHEMA_VERSION, text: redact(text) })
          : undefined,
      // the text streamed so far is void (a retried attempt, or <tool_call> markup that was a call): consumers drop it
      onTextReset:
        stream && options.includePartial ? () => writeLine({ type: 'TextReset', schemaVersion: OUTPUT_SCHEMA_VERSION }) : undefined,
      onReasoningDelta:
        stream && options.includePartial
          ? (text: string) => writeLine({ type: 'ReasoningDelta', schemaVersion: OUTPUT_SCHEMA_VERSION, text: redact(text) })
          : undefined,
    };
    const schema = outputSchema ? { jsonSchema: outputSchema } : undefined;
    const result =
      skill === 'ask' ? await repl.ask({ say: prompt, on, schema }, context) : await repl.act({ do: prompt, on, schema }, context);
    const { session } = result;
    // the answer may hold a secret the model decoded from a form redaction cannot match (base64): nothing printed or kept does
    const output = redact(session.output);
    const structured = schema && session.termination === 'complete' ? redactDeep(result.output, redact) : undefined;
    const episode = redactBrainEpisode(result.episode, redact);
    const series = redactBrainSeries(result.series, redact);
    const sessionError = session.error;
    // a run stopped by Ctrl-C or SIGTERM ends in error AbortedError: scripts read it as interrupted (exit 130)
    const termination = sessionError instanceof AbortedError ? 'interrupted' : session.termination;
    let exitCode = sessionError ? exitCodeOfError(sessionError) : exitCodeOf(session.termination, null);

    // the answer first: it was paid for, and nothing that fails after it may take it away
    const answer = output && !output.endsWith('\n') ? `${output}\n` : output;
    if (!machine) process.stdout.write(answer);
    log.stop();

    // every run is a checkpoint, a failed one too (its exchange records the error), so there is always a ref to resume from
    const refsSaved = Promise.all([
      store.saveEpisode(episode),
      store.saveSeries(series),
      store.markCompacted(series.episodes.slice(0, -1).map((compacted) => compacted.hash)),
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
    // the refs and the run record are written at the same time: the record names the refs by hash, known already
    const [refsFailure, recorded] = await Promise.all([
      refsSaved,
      runRecord.current
        .finish({
          prompt,
          output,
          termination,
          refs: { episode: episode.hash, series: series.hash },
          metrics,
          transcript: session.transcript,
          error: sessionError ? { code: sessionError.code, message: redact(sessionError.message) } : null,
          redact,
        })
        .then(
          (dir) => ({ dir, failure: null }),
          (error: Error) => ({ dir: null, failure: `the run record could not be written: ${redact(error.message)}` }),
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
        atom: atom.slug,
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
        ...(network.current ? { network: network.current.audit() } : {}),
        warnings,
        error: sessionError
          ? { code: sessionError.code, message: redact(sessionError.message) }
          : failures.length
            ? { code: 'PERSIST', message: failures.join('; ') }
            : null,
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
      if (viaRhachet && !machine) process.stdout.write(`\n${refLines}`);
    }
    return exitCode;
  } catch (error) {
    log.stop();
    await runRecord.current?.dispose();
    const known = error instanceof BhrainError;
    const exitCode = known ? exitCodeOfError(error) : EXIT_CODES.crash;
    const message = redact(known ? error.message : `unexpected failure: ${(error as Error)?.message ?? error}`);
    process.stderr.write(
      `bhrain ${skill}: ${message}${!known ? (options.debug ? `\n${redact(String((error as Error)?.stack))}` : ' (run with --debug for the stack)') : ''}\n`,
    );
    const termination = error instanceof BadRequestError ? 'usage' : exitCode === EXIT_CODES.interrupted ? 'interrupted' : 'error';
    const json = machine
      ? { ...genUsageErrorJson(message, { skill, code: known ? error.code : 'CRASH', exitCode }), atom: atomSlug, warnings, termination }
      : null;
    // the file never keeps an older run's result: it gets this run's error object, or (text) the empty answer
    if (outputFile) await writeOutput(outputFile, json ? `${JSON.stringify(json)}\n` : '', [], redact);
    if (json) writeLine(json);
    return exitCode;
  } finally {
    await Promise.all([mcp.current?.close(), network.current?.close()]);
  }
};
