import { randomUUID } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { silentLog } from '../../../contract/BrainContext.js';
import type { BrainMessage, BrainToolDefinition } from '../../../contract/BrainMessage.js';
import { AbortedError, BhrainError, ContextOverflowError, EmptyAnswerError, LoopError } from '../../../contract/errors.js';
import { addCash, addTokens, emptyTokens } from '../../../contract/tokens.js';
import type { BhrainConfigResolved } from '../BhrainConfig.js';
import type { BhrainContext } from '../BhrainContext.js';
import type { BhrainSessionResult } from '../BhrainSessionResult.js';
import { CLARIFICATION_REQUEST, EMPTY_ANSWER_NUDGE } from '../constants.js';
import type { BhrainEvent } from '../events.js';
import { genSystemPrompt } from '../genSystemPrompt.js';
import type { BhrainCompactionResult, BhrainMemoryContext } from '../memory/BhrainMemoryManager.js';
import type { BhrainToolRegistry } from '../tools/genToolRegistry.js';
import { genSecretRedactor } from '../../../security/genSecretRedactor.js';
import { genRunawayDetector } from './detectRunaway.js';
import { estimateMessagesTokens, estimateTokens } from './estimateTokens.js';
import { executeToolCall } from './executeToolCall.js';
import { repairToolPairs } from './repairToolPairs.js';

const isMessageList = (value: unknown): value is BrainMessage[] =>
  Array.isArray(value) &&
  value.every((message) => ['system', 'user', 'assistant', 'tool'].includes(message?.role) && typeof message.content === 'string');

/**
 * .what = the agentic loop: generate → permission → execute tools → append results → consult memory → repeat
 * .why = it ends when a response has no tool calls, at maxIterations with a partial answer, or on an error with the
 *        partial transcript kept; no tool call is ever left without a result
 */
export const runLoop = async (input: {
  config: BhrainConfigResolved;
  registry: BhrainToolRegistry;
  prompt: string;
  history: readonly BrainMessage[];
  instructions?: string;
  emit: (event: BhrainEvent) => void;
  context: BhrainContext;
}): Promise<BhrainSessionResult> => {
  const { config, registry, context, emit } = input;
  const log = context.log ?? silentLog;
  const cwd = context.cwd ?? process.cwd();
  const sessionUuid = randomUUID();
  const started = performance.now();
  const extra = [config.systemPrompt, input.instructions].filter((part): part is string => !!part).join('\n\n');
  const system = () => genSystemPrompt({ cwd, tools: registry.definitions(), systemPrompt: extra || undefined });
  // what every request carries besides the messages: the system prompt and the tool definitions
  const sizeFixed = (systemText: string, tools: readonly BrainToolDefinition[]) => estimateTokens(systemText) + estimateTokens(JSON.stringify(tools));
  let fixed = sizeFixed(system(), registry.definitions());

  // a history given by the caller may have lost results (interrupted, compacted): repaired once, up front
  let messages: BrainMessage[] = repairToolPairs(input.history);
  const transcript: BrainMessage[] = [...input.history];
  let tokens = emptyTokens();
  let cash: BhrainSessionResult['cash'] | undefined = undefined;
  const compactions: BhrainSessionResult['compactions'] = [];
  const finish = (rest: Pick<BhrainSessionResult, 'output' | 'termination' | 'iterations'> & { error?: BhrainError }): BhrainSessionResult => {
    const result: BhrainSessionResult = {
      sessionUuid,
      ...rest,
      tokens,
      cash: cash ?? null,
      elapsedMs: Math.round(performance.now() - started),
      transcript,
      messages,
      compactions,
      error: rest.error ?? null,
    };
    log.info(`session ${rest.termination} after ${rest.iterations} iterations`, {
      termination: rest.termination,
      iterations: rest.iterations,
      tokens,
      costUsd: result.cash?.total ?? null,
      elapsedMs: result.elapsedMs,
    });
    return result;
  };

  // boundary.1: an empty request gets a clarification, and no loop
  if (!input.prompt.trim()) return finish({ output: CLARIFICATION_REQUEST, termination: 'clarification', iterations: 0 });

  // boundary.2: input that cannot fit the window fails before anything runs
  const inputTokens = fixed + estimateMessagesTokens([...messages, { role: 'user', content: input.prompt }]);
  if (inputTokens > config.limits.contextTokens)
    throw new ContextOverflowError(
      `the input is about ${inputTokens} tokens, more than the context window of ${config.limits.contextTokens} tokens (${config.atom.slug}${config.limits.contextTokens < config.atom.spec.contextWindowTokens ? ', limits.contextTokens' : ''}): shorten the input, or split the task`,
      { tokens: config.limits.contextTokens, actual: inputTokens },
    );

  messages.push({ role: 'user', content: input.prompt });
  transcript.push(messages[messages.length - 1]);

  const session = {
    sessionUuid,
    registry,
    guard: config.permissionGuard,
    prompter: context.prompter ?? null,
    toolContext: { cwd, log, env: context.env ?? process.env, signal: context.signal },
    redact: genSecretRedactor(context.env ?? process.env),
    guardTimeoutMs: config.limits.guardTimeoutMs,
    maxToolOutputChars: config.limits.maxToolOutputChars,
    spillDir: context.spillDir ?? join(tmpdir(), 'bhrain-tool-output', sessionUuid),
    log,
    emit,
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
    generate: (request) => config.atom.generate(request, context),
    contextTokens: size,
    limitTokens: config.limits.contextTokens,
    fixedTokens: fixed,
    log,
  });
  const applyUpdate = (update: BhrainCompactionResult, tokensBefore: number) => {
    if (!update.shouldUpdate) return;
    if (!isMessageList(update.newMessages))
      return log.error(`memory manager '${config.memoryManager.name}' proposed an update without a valid message list; the context is unchanged`);
    messages = repairToolPairs(update.newMessages);
    measuredTokens = null;
    historyTokens = estimateMessagesTokens(messages);
    const tokensAfter = fixed + historyTokens;
    compactions.push({ strategy: config.memoryManager.name, tokensBefore, tokensAfter });
    log.info(`context compacted by ${config.memoryManager.name}: ${tokensBefore} → ${tokensAfter} tokens`);
    emit({ type: 'Compacted', sessionUuid, strategy: config.memoryManager.name, tokensBefore, tokensAfter, occurredAt: new Date().toISOString() });
  };

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
        error: new AbortedError(`the session was aborted by the caller after ${iteration - 1} iterations; its transcript is kept`),
      });
    // the tool set may change between iterations (toolboxes added or removed at runtime)
    const tools = registry.definitions();
    const systemText = system();
    fixed = sizeFixed(systemText, tools);

    let generation;
    try {
      generation = await config.atom.generate(
        { system: systemText, messages, tools, onTextDelta: context.onTextDelta, onTextReset: context.onTextReset },
        context,
      );
    } catch (error) {
      const typed = error instanceof BhrainError ? error : new LoopError(`the loop failed: ${(error as Error)?.message ?? error}`, { cause: error });
      log.error(`iteration ${iteration}: ${typed.message}`);
      return finish({ output: lastText, termination: 'error', iterations: iteration - 1, error: typed });
    }
    tokens = addTokens(tokens, generation.tokens);
    cash = cash === undefined ? generation.cash : addCash(cash, generation.cash);
    const prompted = generation.tokens.input + generation.tokens.cache.get + generation.tokens.cache.set;
    measuredTokens = prompted > 0 ? prompted + generation.tokens.output : null;
    append([generation.message]);
    if (generation.message.content) lastText = generation.message.content;

    const calls = generation.message.toolCalls;
    const results = await Promise.all(calls.map((call) => executeToolCall(call, session)));
    const answered = results.map((result, index) => {
      const notice = runaway.observe(calls[index]);
      return notice ? { ...result, content: `${result.content}\n\n${notice}` } : result;
    });
    append(answered);

    const size = contextTokens(answered);
    log.info(`iteration ${iteration}: ${calls.length} tool calls, context ~${size} tokens`, { iteration, toolCalls: calls.length, contextTokens: size });
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
    if (!calls.length && !generation.message.content.trim()) {
      // an empty answer ends nothing: the model is told once, then the session ends with a clear error
      if (nudgedEmpty)
        return finish({
          output: lastText,
          termination: 'error',
          iterations: iteration,
          error: new EmptyAnswerError(`${config.atom.slug} returned an empty answer twice in a row (no text, no tool call); the session stopped with its transcript kept`),
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
    const observeFailed = (error: unknown) => log.error(`memory manager '${manager.name}' observe failed: ${(error as Error)?.message ?? error}`);
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
};
