import { randomUUID } from 'node:crypto';

import { silentLog } from '../../core/contract/BrainContext.js';
import type { BrainMessage } from '../../core/contract/BrainMessage.js';
import { ContextOverflowError } from '../../core/contract/errors.js';
import { estimateMessagesTokens, estimateTokens } from '../../core/contract/tokens.js';
import { genSecretRedactor } from '../../core/secrets/genSecretRedactor.js';
import { hashBhrainConfig, type BhrainConfigResolved } from '../config/BhrainConfig.js';
import type { BhrainContext } from '../BhrainContext.js';
import type { BhrainEvent } from '../events.js';
import { genSystemPrompt } from '../genSystemPrompt.js';
import { readGitCredentials } from '../git/readGitCredentials.js';
import { readGitStatus } from '../git/readGitStatus.js';
import { genSessionApprovals } from '../permission/genSessionApprovals.js';
import { resolveAddDirs } from '../permission/resolveAddDirs.js';
import { attachTaskTool } from '../subagents/withTaskTool.js';
import type { BhrainToolRegistry } from '../tool/genToolRegistry.js';
import { preloadToolChecks } from '../tool/executeTool.js';
import type { BhrainSpend } from './checkBudget.js';
import { genDefaultSpillDir } from './defaultSpillDir.js';
import { genRunawayDetector } from './detectRunaway.js';
import { genSpendLedger } from './genSpendLedger.js';
import {
  genSessionState,
  type BhrainSessionPlugins,
  type RunChildSession,
  type SessionContext,
  type SessionLineage,
  type SessionRequestShape,
  type SessionState,
} from './SessionState.js';

/** .what = what starts a session: the config and tools, the task and what came before it, where it reports, its lineage */
export interface RunSessionInput {
  config: BhrainConfigResolved;
  /** the memory manager and guard as they are now (a brain's may be swapped while it runs); the config's when absent */
  plugins?: () => BhrainSessionPlugins;
  registry: BhrainToolRegistry;
  prompt: string;
  history: readonly BrainMessage[];
  /** extra system instructions for this session only */
  instructions?: string;
  /** spend made before this session that counts toward its budget */
  spentBefore?: BhrainSpend;
  emit: (event: BhrainEvent) => void;
  context: BhrainContext;
  /** the session's uuid; a new one when absent (a subagent's is chosen by its parent, to announce it first) */
  uuid?: string;
  /** the parent's share, for a subagent (SessionState.fork); absent for a session a caller starts */
  lineage?: SessionLineage;
  /** receives the session's state once it is open (before SessionStarted): a caller reads its entity with sessionOf */
  onOpen?: (state: SessionState) => void;
}

/**
 * .what = the context of a session with its defaults: cwd, env, log, a spill dir, and a redactor over the environment
 *         and the repository's git credentials, read once here (a subagent's context is its parent's, redactor included)
 * .why = secrets never reach the model
 */
const resolveContext = (context: BhrainContext, uuid: string): SessionContext => {
  const cwd = context.cwd ?? process.cwd();
  const env = context.env ?? process.env;
  return {
    ...context,
    cwd,
    // a child's context is its parent's, already resolved: real paths resolve to themselves
    addDirs: resolveAddDirs(context.addDirs ?? [], { env }),
    env,
    log: context.log ?? silentLog,
    redact: context.redact ?? genSecretRedactor(env, readGitCredentials({ cwd }, { env }).secrets),
    spillDir: context.spillDir ?? genDefaultSpillDir(uuid),
  };
};

/**
 * .what = what every request carries besides the messages, made again only when the tool set changed (toolboxes added
 *         or removed at runtime), not on every iteration
 * .why = the system prompt stays the same across iterations: a cacheable prefix
 */
const genRequestShaper = (input: {
  registry: BhrainToolRegistry;
  cwd: string;
  addDirs: readonly string[];
  git: Awaited<ReturnType<typeof readGitStatus>> | null;
  instructions: string | null;
  skills: BhrainConfigResolved['skills'];
  systemPrompt: string | undefined;
  baseSystemPrompt: string | null;
}): (() => SessionRequestShape) => {
  let shaped: SessionRequestShape | null = null;
  return () => {
    const tools = input.registry.definitions();
    const known = shaped;
    if (known && tools.length === known.tools.length && tools.every((tool, index) => tool === known.tools[index])) return known;
    const systemText = genSystemPrompt({
      cwd: input.cwd,
      addDirs: input.addDirs,
      tools,
      git: input.git,
      instructions: input.instructions ?? undefined,
      skills: input.skills,
      systemPrompt: input.systemPrompt,
      baseSystemPrompt: input.baseSystemPrompt ?? undefined,
    });
    return (shaped = { tools, systemText, fixed: estimateTokens(systemText) + estimateTokens(JSON.stringify(tools)) });
  };
};

/**
 * .what = opens a session: its context, lineage, tools (the task tool at its depth), system prompt; checks the input fits
 *         the window (a ContextOverflowError before any event), then publishes it ACTIVE and emits
 *         SessionStarted
 * .why = everything a session needs is resolved once, up front, into its state
 */
export const openSession = async (input: RunSessionInput, runChild: RunChildSession): Promise<SessionState> => {
  const { config, lineage } = input;
  const uuid = input.uuid ?? randomUUID();
  const startedMs = performance.now();
  const context = resolveContext(lineage?.context ?? input.context, uuid);
  const depth = lineage?.depth ?? 0;
  const registry = attachTaskTool({ registry: input.registry, subagents: config.subagents, depth });
  // read once per session: the system prompt stays the same across its iterations
  const git = config.gitStatus ? await readGitStatus({ cwd: context.cwd }, { env: context.env, log: context.log }) : null;
  const systemPrompt = [config.systemPrompt, input.instructions].filter((part): part is string => !!part).join('\n\n') || undefined;
  const state = genSessionState({
    uuid,
    configUuid: hashBhrainConfig(config, input.registry.boxes()),
    depth,
    parent: lineage?.parent ?? null,
    config,
    plugins: input.plugins ?? (() => ({ memoryManager: config.memoryManager, permissionGuard: config.permissionGuard })),
    toolBoxes: input.registry,
    registry,
    context,
    emit: input.emit,
    // one ledger and one set of approvals per session tree: a child's spend and "don't ask again" are its parent's too
    ledger: lineage?.ledger ?? genSpendLedger({ spentBefore: input.spentBefore, startedAtMs: startedMs }),
    approvals: lineage?.approvals ?? genSessionApprovals(),
    runaway: genRunawayDetector(),
    shape: genRequestShaper({
      registry,
      cwd: context.cwd,
      addDirs: context.addDirs,
      git,
      instructions: config.instructions,
      skills: config.skills,
      systemPrompt,
      baseSystemPrompt: config.baseSystemPrompt,
    }),
    runChild,
    history: input.history,
    startedMs,
  });
  const inputTokens = state.shape().fixed + estimateMessagesTokens([...state.messages, { role: 'user', content: input.prompt }]);
  if (input.prompt.trim() && inputTokens > config.limits.contextTokens)
    throw new ContextOverflowError(
      `the input is about ${inputTokens} tokens, more than the context window of ${config.limits.contextTokens} tokens (${config.atom.slug}${config.limits.contextTokens < config.atom.spec.contextWindowTokens ? ', limits.contextTokens' : ''}): shorten the input, or split the task`,
      { tokens: config.limits.contextTokens, actual: inputTokens },
    );
  void preloadToolChecks(registry.boxes());
  input.onOpen?.(state);
  state.emit({ type: 'SessionStarted', sessionUuid: uuid, atom: config.atom.slug, cwd: context.cwd, occurredAt: new Date().toISOString() });
  return state;
};
