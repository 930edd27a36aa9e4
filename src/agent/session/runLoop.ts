import { randomUUID } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import type { BrainAtomGenerateInput, BrainAtomGeneration, BrainTruncatedToolCall } from '../../core/contract/BrainAtom.js';
import { silentLog } from '../../core/contract/BrainContext.js';
import type { BrainMessage, BrainToolDefinition } from '../../core/contract/BrainMessage.js';
import { AbortedError, BhrainError, ContextOverflowError, EmptyAnswerError, LoopError } from '../../core/contract/errors.js';
import { addCash, addTokens, emptyTokens } from '../../core/contract/tokens.js';
import { hashBhrainConfig, readDenialOf, type BhrainConfigResolved } from '../BhrainConfig.js';
import type { BhrainContext } from '../BhrainContext.js';
import type { BhrainSession, BhrainSessionResult, BhrainSubagentRecord, BhrainToolCallCounts } from '../BhrainSessionResult.js';
import { CLARIFICATION_REQUEST, EMPTY_ANSWER_NUDGE } from '../constants.js';
import type { BhrainEvent } from '../events.js';
import { genSystemPrompt } from '../genSystemPrompt.js';
import { readGitCredentials } from '../instructions/readGitCredentials.js';
import { readGitStatus } from '../instructions/readGitStatus.js';
import type { BhrainCompactionResult, BhrainMemoryContext } from '../memory/BhrainMemoryManager.js';
import { genSessionApprovals, type BhrainSessionApprovals } from '../permission/genSessionApprovals.js';
import { attachTaskTool } from '../subagents/withTaskTool.js';
import type { BhrainToolRegistry } from '../tool/genToolRegistry.js';
import { genSecretRedactor } from '../../core/secrets/genSecretRedactor.js';
import { checkBudget, describeBudgetReached, type BhrainBudgetReached, type BhrainSpend } from './checkBudget.js';
import { genSpendLedger, type BhrainSpendLedger } from './genSpendLedger.js';
import { trackSession } from './trackSession.js';
import { genRunawayDetector } from './detectRunaway.js';
import { estimateMessagesTokens, estimateTokens } from './estimateTokens.js';
import { repairToolPairs } from './repairToolPairs.js';
import type { ToolCallOutcome } from './executeToolCall.js';
import { runToolCalls } from './runToolCalls.js';

/** .what = the counts of a session's tool calls with one turn's outcomes added */
const tallyToolCalls = (counts: BhrainToolCallCounts, outcomes: readonly ToolCallOutcome[]): BhrainToolCallCounts => {
  const denied = outcomes.filter((outcome) => outcome.denied);
  return {
    made: counts.made + outcomes.length,
    failed: counts.failed + outcomes.filter((outcome) => outcome.message.isError && !outcome.denied).length,
    denied: counts.denied + denied.length,
    promptedDenied: counts.promptedDenied + denied.filter((outcome) => outcome.denied!.by !== 'guard').length,
    denials: [
      ...counts.denials,
      ...denied.map(({ message, denied }) => ({
        callId: message.toolCallId,
        toolName: message.toolName,
        reason: denied!.reason,
        by: denied!.by,
      })),
    ],
  };
};

/**
 * .what = what the model is told when the output-token limit cut its tool call(s) off mid-arguments
 * .why = the call was not run (half-parsed arguments would write half a file); a smaller step fits the limit
 */
const describeTruncatedToolCalls = (calls: readonly BrainTruncatedToolCall[]): string =>
  `[bhrain: your last tool call (${calls.map((call) => `${call.name}, ${call.receivedChars} characters of arguments received`).join('; ')}) was cut off by the output-token limit and was not run. Continue in smaller steps so each call fits the output limit: e.g. write a big file in parts (write the first part, then add the rest with further edit calls), or split a long command or edit into several.]`;

const isMessageList = (value: unknown): value is BrainMessage[] =>
  Array.isArray(value) &&
  value.every((message) => ['system', 'user', 'assistant', 'tool'].includes(message?.role) && typeof message.content === 'string');

/**
 * .what = the agentic loop: generate → permission → execute tools → append results → consult memory → repeat
 * .why = it ends when a response has no tool calls, at maxIterations or at a budget limit with a partial answer, or on
 *        an error with the partial transcript kept; no tool call is ever left without a result
 * .note = the budget (limits.maxBudgetUsd, maxTokens, maxWallTimeMs) is checked before every request to the model, the
 *         memory manager's summaries included, over what the session spent plus spentBefore (what the caller spent
 *         toward the same limits: a corrective turn's first session, a recap); maxWallTimeMs also aborts a request or
 *         tool call still running at the deadline
 * .note = the calls of one response run in a fixed order, at most 8 at once (runToolCalls): first bash and every other
 *         call that may change the file system, concurrently; then write and edit one at a time in the model's order, each
 *         checked right before it runs; then read, glob and grep; results are appended in the model's order
 * .note = with config.subagents, the session offers the task tool (below subagents.maxDepth): each call runs a child
 *         session of this loop (subagents/runSubagent) that shares this session's budget (one ledger), signal and
 *         prompter; the child's tokens and cost are added to this session's, its record to result.subagents
 */
export const runLoop = async (input: {
  config: BhrainConfigResolved;
  registry: BhrainToolRegistry;
  prompt: string;
  history: readonly BrainMessage[];
  instructions?: string;
  /** spend made before this session that counts toward its budget */
  spentBefore?: BhrainSpend;
  emit: (event: BhrainEvent) => void;
  context: BhrainContext;
  /** the session's uuid; a new one when absent (a subagent's is chosen by its parent, to announce it first) */
  sessionUuid?: string;
  /** how deep this session is nested: 0 for the caller's, 1 for its subagents, ... */
  depth?: number;
  /** the budget's ledger of a parent session, for a subagent; absent = a new one over spentBefore */
  ledger?: BhrainSpendLedger;
  /** receives the session entity at its start, after every iteration and subagent, and at its end */
  onSession?: (session: BhrainSession) => void;
  /** the approvals remembered in a parent session, for a subagent; absent = a new, empty set */
  approvals?: BhrainSessionApprovals;
}): Promise<BhrainSessionResult> => {
  const { config, emit } = input;
  const log = input.context.log ?? silentLog;
  const cwd = input.context.cwd ?? process.cwd();
  const env = input.context.env ?? process.env;
  // secrets never reach the model: the caller's redactor, or one over the environment and the repository's git
  // credentials, read once here; a subagent's context is its parent's, redactor included
  const redact = input.context.redact ?? genSecretRedactor(env, readGitCredentials({ cwd }, { env }).secrets);
  const context: BhrainContext = { ...input.context, redact };
  const sessionUuid = input.sessionUuid ?? randomUUID();
  const depth = input.depth ?? 0;
  const started = performance.now();
  // one ledger per session tree: a child's requests count toward the budget its parent and siblings check
  const ledger = input.ledger ?? genSpendLedger({ spentBefore: input.spentBefore, startedAtMs: started });
  const subagents: BhrainSubagentRecord[] = [];
  // "don't ask again" holds for the whole session tree: a child is not asked again what its parent's user approved
  const approvals = input.approvals ?? genSessionApprovals();
  let tracker: ReturnType<typeof trackSession> | null = null;
  // the child's spend is this session's too: its result and session entity show the whole tree's
  const registry = attachTaskTool(
    { config, registry: input.registry, sessionUuid, depth, ledger, approvals, context, emit, run: runLoop },
    ({ record, descendants }) => {
      tokens = addTokens(tokens, record.tokens);
      cash = cash === undefined ? record.cash : addCash(cash, record.cash);
      subagents.push(...descendants, record);
      tracker?.update({ iterationCount: tracker.current().iterationCount, tokens });
    },
  );
  const extra = [config.systemPrompt, input.instructions].filter((part): part is string => !!part).join('\n\n');
  // read once per session: the system prompt stays the same across its iterations (a cacheable prefix)
  const git = config.gitStatus ? await readGitStatus({ cwd }, { env: context.env, log }) : null;
  // what every request carries besides the messages: the tool definitions, the system prompt made from them, and their
  // size; made again only when the tool set changed (toolboxes added or removed at runtime), not on every iteration
  let shaped: { tools: readonly BrainToolDefinition[]; systemText: string; fixed: number } | null = null;
  const shape = () => {
    const tools = registry.definitions();
    const known = shaped;
    if (known && tools.length === known.tools.length && tools.every((tool, index) => tool === known.tools[index])) return known;
    const systemText = genSystemPrompt({
      cwd,
      tools,
      git,
      instructions: config.instructions ?? undefined,
      systemPrompt: extra || undefined,
    });
    return (shaped = { tools, systemText, fixed: estimateTokens(systemText) + estimateTokens(JSON.stringify(tools)) });
  };
  let fixed = shape().fixed;

  // a history given by the caller may have lost results (interrupted, compacted): repaired once, up front
  let messages: BrainMessage[] = repairToolPairs(input.history);
  const transcript: BrainMessage[] = [...input.history];
  let tokens = emptyTokens();
  let cash: BhrainSessionResult['cash'] | undefined = undefined;
  let toolCalls: BhrainToolCallCounts = { made: 0, failed: 0, denied: 0, promptedDenied: 0, denials: [] };
  const compactions: BhrainSessionResult['compactions'] = [];
  const finish = (
    rest: Pick<BhrainSessionResult, 'output' | 'termination' | 'iterations'> & { error?: BhrainError; budgetReached?: BhrainBudgetReached },
  ): BhrainSessionResult => {
    const session = tracker!.end({ termination: rest.termination, iterationCount: rest.iterations, tokens });
    const result: BhrainSessionResult = {
      sessionUuid,
      output: rest.output,
      termination: rest.termination,
      iterations: rest.iterations,
      tokens,
      cash: cash ?? null,
      elapsedMs: Math.round(performance.now() - started),
      transcript,
      messages,
      compactions,
      error: rest.error ?? null,
      toolCalls,
      budgetReached: rest.budgetReached ?? null,
      session,
      subagents,
    };
    log.info(`session ${rest.termination} after ${rest.iterations} iterations`, {
      termination: rest.termination,
      iterations: rest.iterations,
      tokens,
      costUsd: result.cash?.total ?? null,
      elapsedMs: result.elapsedMs,
    });
    emit({
      type: 'SessionCompleted',
      sessionUuid,
      termination: result.termination,
      iterations: result.iterations,
      tokens: result.tokens,
      cash: result.cash,
      elapsedMs: result.elapsedMs,
      occurredAt: new Date().toISOString(),
    });
    return result;
  };

  // boundary.2: input that cannot fit the window fails before anything runs (and before any event)
  const inputTokens = fixed + estimateMessagesTokens([...messages, { role: 'user', content: input.prompt }]);
  if (input.prompt.trim() && inputTokens > config.limits.contextTokens)
    throw new ContextOverflowError(
      `the input is about ${inputTokens} tokens, more than the context window of ${config.limits.contextTokens} tokens (${config.atom.slug}${config.limits.contextTokens < config.atom.spec.contextWindowTokens ? ', limits.contextTokens' : ''}): shorten the input, or split the task`,
      { tokens: config.limits.contextTokens, actual: inputTokens },
    );
  tracker = trackSession({ uuid: sessionUuid, configUuid: hashBhrainConfig(config, input.registry.boxes()), onChange: input.onSession });
  emit({ type: 'SessionStarted', sessionUuid, atom: config.atom.slug, cwd, occurredAt: new Date().toISOString() });

  // boundary.1: an empty request gets a clarification, and no loop
  if (!input.prompt.trim()) return finish({ output: CLARIFICATION_REQUEST, termination: 'clarification', iterations: 0 });

  // the session's own signal: the caller's abort, or the wall-time deadline, stops requests and tools under way
  const stop = new AbortController();
  const forwardAbort = () => stop.abort(context.signal?.reason);
  if (context.signal?.aborted) forwardAbort();
  else context.signal?.addEventListener('abort', forwardAbort, { once: true });
  const wallLeftMs = config.limits.maxWallTimeMs === undefined ? null : config.limits.maxWallTimeMs - ledger.spentNow().elapsedMs;
  let deadlinePassed = false;
  const deadline =
    wallLeftMs === null
      ? null
      : setTimeout(
          () => {
            deadlinePassed = true;
            stop.abort(new Error(`the wall-time budget of ${config.limits.maxWallTimeMs} ms was reached`));
          },
          Math.max(0, wallLeftMs),
        );

  // what the session tree spent so far (and the caller before it), toward the budget; every request is counted there
  const spentNow = (): BhrainSpend => ledger.spentNow();
  const budgetReached = (): BhrainBudgetReached | null => {
    const reached = checkBudget({ spent: spentNow(), budget: config.limits });
    if (reached || !deadlinePassed || config.limits.maxWallTimeMs === undefined) return reached;
    // the timer fired: the wall time is up, whatever a clock read a moment early says
    return { limit: 'maxWallTimeMs', spent: Math.max(spentNow().elapsedMs, config.limits.maxWallTimeMs), cap: config.limits.maxWallTimeMs };
  };
  const generate = async (request: BrainAtomGenerateInput): Promise<BrainAtomGeneration> => {
    const withRetryHook: BrainAtomGenerateInput = {
      ...request,
      onRetry: (retry) => emit({ type: 'RequestRetried', sessionUuid, ...retry, occurredAt: new Date().toISOString() }),
    };
    // a signal per request: what the SDK hangs on it goes with the request, instead of piling up on the session's
    const requestStop = new AbortController();
    const forward = () => requestStop.abort(stop.signal.reason);
    if (stop.signal.aborted) forward();
    else stop.signal.addEventListener('abort', forward, { once: true });
    try {
      const generation = await config.atom.generate(withRetryHook, { ...context, signal: requestStop.signal });
      tokens = addTokens(tokens, generation.tokens);
      cash = cash === undefined ? generation.cash : addCash(cash, generation.cash);
      ledger.add(generation);
      return generation;
    } finally {
      stop.signal.removeEventListener('abort', forward);
    }
  };

  messages.push({ role: 'user', content: input.prompt });
  transcript.push(messages[messages.length - 1]);

  const spillDir = context.spillDir ?? join(tmpdir(), 'bhrain-tool-output', sessionUuid);
  const session = {
    sessionUuid,
    registry,
    guard: config.permissionGuard,
    prompter: context.prompter ?? null,
    approvals,
    toolContext: { cwd, log, env, signal: stop.signal, spillDir, redact },
    redact,
    guardTimeoutMs: config.limits.guardTimeoutMs,
    maxToolOutputChars: config.limits.maxToolOutputChars,
    spillDir,
    log,
    emit,
    readDenial: readDenialOf(config),
  };
  const runaway = genRunawayDetector();
  let pendingUpdate: BhrainCompactionResult | null = null;
  let lastText = '';
  let nudgedEmpty = false;
  let measuredTokens: number | null = null; // the supplier's count of the context as of the last generation

  // kept as messages change, so sizing the context costs nothing per iteration however long the history grows
  let historyTokens = estimateMessagesTokens(messages);
  const append = (added: readonly BrainMessage[]) => {
    messages.push(...added);
    transcript.push(...added);
    historyTokens += estimateMessagesTokens(added);
  };
  const contextTokens = (sinceMeasured: readonly BrainMessage[]) =>
    Math.max(fixed + historyTokens, (measuredTokens ?? 0) + estimateMessagesTokens(sinceMeasured));
  const memoryContext = (size: number): BhrainMemoryContext => ({
    atom: config.atom,
    // a summary is a request like any other: checked against the budget before, counted after
    generate: async (request) => {
      const reached = budgetReached();
      if (reached) throw new Error(`no summary was requested: ${describeBudgetReached(reached)}`);
      return generate(request);
    },
    contextTokens: size,
    limitTokens: config.limits.contextTokens,
    fixedTokens: fixed,
    log,
  });
  const applyUpdate = (update: BhrainCompactionResult, tokensBefore: number) => {
    if (!update.shouldUpdate) return;
    if (!isMessageList(update.newMessages))
      return log.error(
        `memory manager '${config.memoryManager.name}' proposed an update without a valid message list; the context is unchanged`,
      );
    messages = repairToolPairs(update.newMessages);
    measuredTokens = null;
    historyTokens = estimateMessagesTokens(messages);
    const tokensAfter = fixed + historyTokens;
    compactions.push({ strategy: config.memoryManager.name, tokensBefore, tokensAfter });
    log.info(`context compacted by ${config.memoryManager.name}: ${tokensBefore} → ${tokensAfter} tokens`);
    emit({
      type: 'Compacted',
      sessionUuid,
      strategy: config.memoryManager.name,
      tokensBefore,
      tokensAfter,
      occurredAt: new Date().toISOString(),
    });
  };

  const stopAtBudget = (reached: BhrainBudgetReached, iterations: number) => {
    const why = describeBudgetReached(reached);
    log.warn(`session stopped: ${why}`);
    return finish({
      output: `${lastText ? `${lastText}\n\n` : ''}[bhrain stopped before the task was complete: ${why}. The answer above is partial. Continue from this session's refs, or raise the limit.]`,
      termination: 'budget',
      iterations,
      budgetReached: reached,
    });
  };

  try {
    for (let iteration = 1; ; iteration++) {
      if (iteration > config.maxIterations)
        return finish({
          output: `${lastText ? `${lastText}\n\n` : ''}[bhrain stopped after ${config.maxIterations} iterations (maxIterations) before the task was complete: the answer above is partial. Continue from this session's refs, or allow more iterations.]`,
          termination: 'max-iterations',
          iterations: config.maxIterations,
        });
      if (pendingUpdate) {
        applyUpdate(pendingUpdate, contextTokens([]));
        pendingUpdate = null;
      }
      if (context.signal?.aborted)
        return finish({
          output: lastText,
          termination: 'error',
          iterations: iteration - 1,
          error: new AbortedError(`the session was interrupted after ${iteration - 1} iterations; its transcript is kept`),
        });
      const reached = budgetReached();
      if (reached) return stopAtBudget(reached, iteration - 1);
      const { tools, systemText, fixed: fixedNow } = shape();
      fixed = fixedNow;

      let generation;
      try {
        generation = await generate({
          system: systemText,
          messages,
          tools,
          onTextDelta: context.onTextDelta,
          onTextReset: context.onTextReset,
          onReasoningDelta: context.onReasoningDelta,
        });
      } catch (error) {
        // the wall-time deadline cut the request short: a budget stop, not a failure
        const cut = context.signal?.aborted ? null : budgetReached();
        if (cut) return stopAtBudget(cut, iteration - 1);
        const typed =
          error instanceof BhrainError ? error : new LoopError(`the loop failed: ${(error as Error)?.message ?? error}`, { cause: error });
        log.error(`iteration ${iteration}: ${typed.message}`);
        return finish({ output: lastText, termination: 'error', iterations: iteration - 1, error: typed });
      }
      const prompted = generation.tokens.input + generation.tokens.cache.get + generation.tokens.cache.set;
      measuredTokens = prompted > 0 ? prompted + generation.tokens.output : null;
      append([generation.message]);
      if (generation.message.content) lastText = generation.message.content;

      const calls = generation.message.toolCalls;
      // a runaway notice depends on the calls alone: judged in the model's order before they run, so each result carries it
      const notices = calls.map((call) => runaway.observe(call));
      const outcomes = await runToolCalls({ calls, notices, maxConcurrent: config.limits.maxConcurrentToolCalls }, session);
      toolCalls = tallyToolCalls(toolCalls, outcomes);
      const answered = outcomes.map((outcome) => outcome.message);
      append(answered);
      // a tool that threw a BhrainToolFatalError ends the session; its call and the turn's others are answered above
      const fatal = outcomes.find((outcome) => outcome.fatal)?.fatal;
      if (fatal) return finish({ output: lastText, termination: 'error', iterations: iteration, error: fatal });

      const size = contextTokens(answered);
      log.info(`iteration ${iteration}: ${calls.length} tool call${calls.length === 1 ? '' : 's'}, context ~${size} tokens`, {
        iteration,
        toolCalls: calls.length,
        contextTokens: size,
      });
      emit({
        type: 'IterationCompleted',
        sessionUuid,
        iterationNumber: iteration,
        hadToolCalls: calls.length > 0,
        toolCallCount: calls.length,
        tokenUsage: {
          inputTokens: generation.tokens.input,
          outputTokens: generation.tokens.output,
          totalTokens: generation.tokens.input + generation.tokens.output,
          cacheGetTokens: generation.tokens.cache.get,
          cacheSetTokens: generation.tokens.cache.set,
        },
        contextTokens: size,
        occurredAt: new Date().toISOString(),
      });
      tracker.update({ iterationCount: iteration, tokens });
      // a refusal ends the session as such: its text is the answer, and the refused request is never sent again
      if (generation.stopReason === 'refusal') {
        log.warn(`iteration ${iteration}: ${config.atom.slug} refused the request (stop reason refusal); it is not retried`);
        return finish({
          output: generation.message.content.trim()
            ? generation.message.content
            : `[${config.atom.slug} refused the request (stop reason refusal) and gave no text]`,
          termination: 'refusal',
          iterations: iteration,
        });
      }
      // a call cut off by the output-token limit was not run: the model is told so, and to continue in smaller steps
      const truncated = generation.truncatedToolCalls ?? [];
      if (truncated.length) {
        log.warn(
          `iteration ${iteration}: ${truncated.map((call) => call.name).join(', ')} was cut off by the output-token limit and not run; the model is asked to continue in smaller steps`,
        );
        append([{ role: 'user', content: describeTruncatedToolCalls(truncated) }]);
        nudgedEmpty = false;
        if (!calls.length) continue;
      } else if (generation.stopReason === 'pause_turn' && !calls.length) {
        // anthropic paused a long turn: its content, already appended, is sent back as is and the model continues it
        log.info(`iteration ${iteration}: the supplier paused the turn (pause_turn); it is continued`);
        continue;
      }
      if (!calls.length && !generation.message.content.trim()) {
        // an empty answer ends nothing: the model is told once, then the session ends with a clear error
        if (nudgedEmpty)
          return finish({
            output: lastText,
            termination: 'error',
            iterations: iteration,
            error: new EmptyAnswerError(
              `${config.atom.slug} returned an empty answer twice in a row (no text, no tool call); the session stopped with its transcript kept`,
            ),
          });
        nudgedEmpty = true;
        log.warn(`iteration ${iteration}: the model returned an empty answer; it is asked to continue`);
        append([{ role: 'user', content: EMPTY_ANSWER_NUDGE }]);
        continue;
      }
      // only empty answers in a row end the session: one that said something earns the model a fresh nudge
      nudgedEmpty = false;
      if (!calls.length) {
        if (generation.stopReason === 'max_tokens') log.warn('the answer reached the output token limit and may be cut short');
        return finish({ output: generation.message.content, termination: 'complete', iterations: iteration });
      }

      // the memory manager is consulted after every iteration; its failures never end the loop
      const manager = config.memoryManager;
      const observeFailed = (error: unknown) =>
        log.error(`memory manager '${manager.name}' observe failed: ${(error as Error)?.message ?? error}`);
      try {
        // not awaited: observation runs in the background and signals updates applied between iterations
        Promise.resolve(
          manager.observe?.({ messages }, { ...memoryContext(size), signalUpdate: (update) => void (pendingUpdate = update) }),
        ).catch(observeFailed);
      } catch (error) {
        observeFailed(error);
      }
      try {
        if (await manager.shouldUpdate({ messages }, memoryContext(size)))
          applyUpdate(await manager.getUpdate({ messages }, memoryContext(size)), size);
      } catch (error) {
        log.error(`memory manager '${manager.name}' failed: ${(error as Error).message}; the context is unchanged`);
      }
    }
  } finally {
    if (deadline) clearTimeout(deadline);
    context.signal?.removeEventListener('abort', forwardAbort);
  }
};
