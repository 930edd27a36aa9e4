import { CONFIG_CHECKED_BY_CALLER } from '../../agent/config/BhrainConfig.js';
import { loadProjectInstructions } from '../../agent/instructions/loadProjectInstructions.js';
import { genSummarizeOnLimit } from '../../agent/memory/genSummarizeOnLimit.js';
import { genTruncate } from '../../agent/memory/genTruncate.js';
import { checkRuleTools } from '../../agent/permission/checkRuleTools.js';
import { genBrainRepl, type BrainReplOn } from '../../agent/repl/genBrainRepl.js';
import { getBhrainHome, openBrainRefStore, type BrainRefStore } from '../../core/continuation/genBrainRefStore.js';
import type { BrainLog } from '../../core/contract/BrainContext.js';
import { BadRequestError } from '../../core/contract/errors.js';
import type { RunAuditing } from '../audit/genRunAudit.js';
import type { SkillOptions } from '../genSkillCommand.js';
import { readSkillInput } from '../readSkillInput.js';
import { resolveAgentFiles } from '../resolveAgentFiles.js';
import { resolveOnRef } from '../resolveOnRef.js';
import type { MemoryStrategy } from '../settings/settingsTable.js';
import type { RunIo } from './genRunIo.js';
import type { SettledRun } from './settleRun.js';

const MEMORY: Record<MemoryStrategy, typeof genTruncate> = { 'summarize-on-limit': genSummarizeOnLimit, truncate: genTruncate };

/** .what = --continue / --resume as the series to continue; loaded only when one is given (start-up stays as it was) */
const resolveContinued = async (input: {
  options: SkillOptions;
  cwd: string;
  store: BrainRefStore;
  log: BrainLog;
}): Promise<BrainReplOn> => {
  const { resolveRunToContinue } = await import('../resolveRunToContinue.js');
  const { options } = input;
  const { series } = await resolveRunToContinue(
    { continue: !!options.continue, resume: options.resume, cwd: input.cwd, home: getBhrainHome() },
    { store: input.store, log: input.log },
  );
  return { series };
};

/**
 * .what = the rest of a run's preparation, each part checked: the atom against the budgets, the instructions, Agent
 *         Skills and agent files, the repl, the permission rules against its tools, the store and the ref to continue,
 *         the prompt; then the sandbox and network checks awaited
 * .why = every caller mistake is exit 2 before any model request and before anything is written
 */
export const prepareRun = async (io: RunIo, settled: SettledRun, audit: RunAuditing, args: readonly string[]) => {
  const { skill, options, redact, log, host, cwd } = io;
  const { settings, atom, sandbox, systemPrompt, settingsGuard, permissionGuard, mcp, hooks, checks } = settled;
  const { values } = settings;
  // a USD cap needs a known price
  if (atom.spec.price === null && values.maxBudgetUsd !== undefined)
    throw new BadRequestError(
      `--max-budget-usd cannot be enforced on model ${atom.spec.model}: its price is unknown. Cap the run with --max-tokens or --max-wall-time instead`,
    );
  if (atom.spec.price === null)
    io.warn(
      `unknown model ${atom.spec.model}: its cost is reported as null; its context window is assumed to be ${atom.spec.contextWindowTokens} tokens`,
    );
  // AGENTS.md / CLAUDE.md from the user's config dir and the repository down to here: warnings (cut, unreadable) are shown
  const projectInstructions = values.projectInstructions
    ? await loadProjectInstructions({ cwd }, { env: process.env, log: { ...log, warn: io.warn } })
    : null;
  // Agent Skills and agent files: a readdir per folder, and the rest only when one exists (warnings shown, the run goes on)
  const agentFiles = await resolveAgentFiles(
    { cwd, skills: values.skills, agents: skill === 'act' && options.subagents !== false, atom, baseUrl: values.baseUrl },
    { env: process.env, log: { ...log, warn: io.warn }, redact },
  );
  const repl = genBrainRepl({
    atom,
    config: {
      permissionGuard,
      memoryManager: MEMORY[values.memory](),
      maxIterations: values.maxIterations,
      sandbox: { ...sandbox, ...(checks.network ? { domainProxy: checks.network } : {}) },
      limits: { maxBudgetUsd: values.maxBudgetUsd, maxTokens: values.maxTokens, maxWallTimeMs: values.maxWallTime },
      // secrets in the environment never reach the model, from these files and flags neither
      systemPrompt: systemPrompt === undefined ? undefined : redact(systemPrompt),
      baseSystemPrompt: values.systemPrompt === undefined ? undefined : redact(values.systemPrompt),
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
    io.warn(
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
    host ? host.prompt : await readSkillInput({ skill, flag: options.input, args, stdin: process.stdin }, { warn: io.warn }),
  );
  if (!prompt.trim())
    throw new BadRequestError('missing input: the task is empty. Give it as an argument, with --input "...", or on stdin');
  await checks.awaitChecks();
  return {
    cwd,
    addDirs: settled.addDirs,
    atom,
    repl,
    store,
    on,
    prompt,
    mcp,
    rules,
    timeoutMs: values.timeoutMs,
    schema: settled.outputSchema && { jsonSchema: settled.outputSchema },
    audit,
    network: checks.network,
    hookRuns: settled.hookRuns,
    // act's files are checkpointed (docs/continuation.md#rewind); the episode it goes on from is what a whole rewind returns to
    checkpoints:
      skill === 'act' && values.checkpoints
        ? {
            ignoredMaxBytes: values.checkpointIgnoredMaxBytes,
            continuedFrom: on?.episode?.hash ?? on?.series?.episodes.at(-1)?.hash ?? null,
          }
        : null,
  };
};

export type PreparedRun = Awaited<ReturnType<typeof prepareRun>>;
