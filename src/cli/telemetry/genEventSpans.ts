import { findSupplierBySlugPrefix } from '../../core/contract/supplierTable.js';
import {
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
  type Context,
  type Meter,
  type Span,
  type Tracer,
} from '@opentelemetry/api';

import type {
  BhrainEvent,
  BhrainHookCompletedEvent,
  BhrainHookStartedEvent,
  BhrainIterationCompletedEvent,
  BhrainRequestRetriedEvent,
  BhrainSessionCompletedEvent,
  BhrainSessionStartedEvent,
  BhrainSubagentStartedEvent,
  BhrainToolCallStartedEvent,
  BhrainToolExecutionCompletedEvent,
} from '../../agent/events.js';

/**
 * .what = what the spans and metrics of a run need besides its events: the skill, the redactors, and whether prompt
 *         and output text may be exported
 */
export interface EventSpansInput {
  tracer: Tracer;
  meter: Meter;
  /** ask or act: an attribute of every span and metric */
  skill: string;
  /** the run's redactor: every text that is exported passes through it */
  redact: (text: string) => string;
  /** a JSON-able value redacted string by string, then encoded (a tool call's input) */
  redactJson: (value: unknown) => string;
  /** BHRAIN_TELEMETRY_LOG_PROMPTS=1: the task, the answer, tool inputs and outputs, denial reasons and subagent descriptions are exported */
  logPrompts: boolean;
}

/** .what = an open session span and what its model-call spans need from it */
interface OpenSession {
  span: Span;
  context: Context;
  atom: string;
  /** the top session of the run: its span ends with the run (end), which adds the answer and the exit code */
  top: boolean;
  /** retries announced since this session's last model call: events of the next model-call span */
  retries: BhrainRequestRetriedEvent[];
  endedAt: string | null;
}

/**
 * .what = the GenAI system of an atom: its supplier (claude → anthropic, qwen → qwen), as the GenAI conventions name it
 * .why = the atom slug names the supplier by its slug prefix first (`claude/sonnet`, `qwen/qwen3-coder-plus`)
 */
const systemOf = (atom: string): string => {
  const prefix = atom.split('/')[0];
  return findSupplierBySlugPrefix(prefix)?.supplier ?? prefix;
};

const timeOf = (iso: string): Date => new Date(iso);

/**
 * .what = the metric instruments of a run: the GenAI client metrics where the conventions define one, bhrain.* for the rest
 * .why = one place that names every metric docs/telemetry.md lists
 */
const genInstruments = (meter: Meter) => ({
  tokenUsage: meter.createHistogram('gen_ai.client.token.usage', {
    unit: '{token}',
    description: 'tokens per model call, by gen_ai.token.type (input, output)',
  }),
  operationDuration: meter.createHistogram('gen_ai.client.operation.duration', {
    unit: 's',
    description: 'model call latency, retries included',
  }),
  tokens: meter.createCounter('bhrain.tokens', {
    unit: '{token}',
    description: 'tokens spent, by bhrain.token.type (input, output, cache_read, cache_write)',
  }),
  cost: meter.createCounter('bhrain.cost', {
    unit: 'USD',
    description: 'what model calls cost, at the atom’s price (calls of an unpriced model are not counted)',
  }),
  modelCalls: meter.createCounter('bhrain.model.calls', { unit: '{call}', description: 'model calls that answered' }),
  retries: meter.createCounter('bhrain.model.retries', {
    unit: '{retry}',
    description: 'model requests sent again after a transient failure',
  }),
  toolCalls: meter.createCounter('bhrain.tool.calls', {
    unit: '{call}',
    description: 'tool calls, by gen_ai.tool.name and bhrain.tool.outcome',
  }),
  toolDuration: meter.createHistogram('bhrain.tool.duration', { unit: 's', description: 'tool call latency' }),
  sessions: meter.createCounter('bhrain.sessions', {
    unit: '{session}',
    description: 'sessions ended (subagents included), by bhrain.termination',
  }),
});

/** .what = what the handlers share: the input, the instruments, and the spans open now */
interface SpansState {
  input: EventSpansInput;
  metrics: ReturnType<typeof genInstruments>;
  sessions: Map<string, OpenSession>;
  tools: Map<string, Span>;
  hooks: Map<string, Span[]>;
  /** a subagent's session: the context of the task call that spawned it, its type and description */
  spawned: Map<string, { context: Context; type: string; description: string }>;
}

const callKey = (sessionUuid: string, callId: string) => `${sessionUuid}\u0000${callId}`;
const hookKey = (event: BhrainHookStartedEvent | BhrainHookCompletedEvent) =>
  [event.sessionUuid, event.hookEventName, event.hookName, event.callId ?? ''].join('\u0000');
/** .what = the attributes of every metric: the skill and the atom of the session it is about */
const baseOf = (state: SpansState, sessionUuid: string): Attributes => ({
  'bhrain.skill': state.input.skill,
  'bhrain.atom': state.sessions.get(sessionUuid)?.atom ?? 'unknown',
});

const onSessionStarted = (state: SpansState, event: BhrainSessionStartedEvent) => {
  const { tracer, skill, logPrompts, redact } = state.input;
  const parent = state.spawned.get(event.sessionUuid);
  const agent = parent?.type ?? 'bhrain';
  const span = tracer.startSpan(
    `invoke_agent ${agent}`,
    {
      kind: SpanKind.INTERNAL,
      startTime: timeOf(event.occurredAt),
      attributes: {
        'gen_ai.operation.name': 'invoke_agent',
        'gen_ai.agent.name': agent,
        'gen_ai.conversation.id': event.sessionUuid,
        'gen_ai.system': systemOf(event.atom),
        'gen_ai.provider.name': systemOf(event.atom),
        'bhrain.skill': skill,
        'bhrain.atom': event.atom,
        'bhrain.session.subagent': !!parent,
        ...(parent && logPrompts ? { 'bhrain.subagent.description': redact(parent.description) } : {}),
      },
    },
    parent?.context ?? ROOT_CONTEXT,
  );
  state.sessions.set(event.sessionUuid, {
    span,
    context: trace.setSpan(ROOT_CONTEXT, span),
    atom: event.atom,
    top: !parent,
    retries: [],
    endedAt: null,
  });
};

/** .what = the retries of a model call as events of its span (or of the session's, when the call failed in the end) */
const addRetries = (state: SpansState, span: Span, retries: readonly BhrainRequestRetriedEvent[]) => {
  for (const retry of retries)
    span.addEvent(
      'bhrain.model.retry',
      {
        'bhrain.retry.attempt': retry.attempt,
        'bhrain.retry.delay_ms': retry.delayMs,
        'bhrain.retry.reason': state.input.redact(retry.reason),
      },
      timeOf(retry.occurredAt),
    );
};

/** .what = the model-call span of an iteration, made once the call is known (its start and length are in the event) */
const onIterationCompleted = (state: SpansState, event: BhrainIterationCompletedEvent) => {
  const session = state.sessions.get(event.sessionUuid);
  const { generation, tokens } = event;
  const system = systemOf(session?.atom ?? 'unknown');
  const started = timeOf(generation.requestedAt);
  const span = state.input.tracer.startSpan(
    `chat ${generation.model}`,
    {
      kind: SpanKind.CLIENT,
      startTime: started,
      attributes: {
        'gen_ai.operation.name': 'chat',
        'gen_ai.system': system,
        'gen_ai.provider.name': system,
        'gen_ai.request.model': generation.model,
        'gen_ai.response.finish_reasons': [generation.stopReason],
        'gen_ai.usage.input_tokens': tokens.input,
        'gen_ai.usage.output_tokens': tokens.output,
        'gen_ai.usage.cache_read.input_tokens': tokens.cache.get,
        'gen_ai.usage.cache_creation.input_tokens': tokens.cache.set,
        ...(generation.costUsd === null ? {} : { 'bhrain.cost.usd': generation.costUsd }),
        'bhrain.model.attempts': generation.attempts,
        'bhrain.iteration': event.iterationNumber,
        'bhrain.context_tokens': event.contextTokens,
        'bhrain.tool_calls': event.toolCallCount,
      },
    },
    session?.context ?? ROOT_CONTEXT,
  );
  if (session) addRetries(state, span, session.retries.splice(0));
  span.end(new Date(started.getTime() + generation.elapsedMs));
  const { metrics } = state;
  const attributes = { ...baseOf(state, event.sessionUuid), 'gen_ai.request.model': generation.model, 'gen_ai.system': system };
  const chat = { ...attributes, 'gen_ai.operation.name': 'chat' };
  metrics.tokenUsage.record(tokens.input, { ...chat, 'gen_ai.token.type': 'input' });
  metrics.tokenUsage.record(tokens.output, { ...chat, 'gen_ai.token.type': 'output' });
  metrics.operationDuration.record(generation.elapsedMs / 1000, chat);
  metrics.modelCalls.add(1, attributes);
  const byType = {
    input: tokens.input,
    output: tokens.output,
    cache_read: tokens.cache.get,
    cache_write: tokens.cache.set,
  };
  for (const [type, count] of Object.entries(byType))
    if (count > 0) metrics.tokens.add(count, { ...attributes, 'bhrain.token.type': type });
  if (generation.costUsd !== null) metrics.cost.add(generation.costUsd, attributes);
};

const onToolStarted = (state: SpansState, event: BhrainToolCallStartedEvent) => {
  const span = state.input.tracer.startSpan(
    `execute_tool ${event.toolName}`,
    {
      startTime: timeOf(event.occurredAt),
      attributes: {
        'gen_ai.operation.name': 'execute_tool',
        'gen_ai.tool.name': event.toolName,
        'gen_ai.tool.call.id': event.callId,
        ...(state.input.logPrompts ? { 'bhrain.tool.input': state.input.redactJson(event.input) } : {}),
      },
    },
    state.sessions.get(event.sessionUuid)?.context ?? ROOT_CONTEXT,
  );
  state.tools.set(callKey(event.sessionUuid, event.callId), span);
};

const onToolCompleted = (state: SpansState, event: BhrainToolExecutionCompletedEvent) => {
  const { logPrompts, redact } = state.input;
  const key = callKey(event.sessionUuid, event.callId);
  const span = state.tools.get(key);
  state.tools.delete(key);
  const outcome = event.denied ? 'denied' : event.isError ? 'error' : 'success';
  if (span) {
    span.setAttributes({
      'bhrain.tool.outcome': outcome,
      'bhrain.tool.duration_ms': event.durationMs,
      'bhrain.tool.denied': !!event.denied,
      ...(event.denied ? { 'bhrain.tool.denied_by': event.denied.by } : {}),
      ...(event.denied && logPrompts ? { 'bhrain.tool.denial_reason': redact(event.denied.reason) } : {}),
      ...(event.exitCode === undefined ? {} : { 'bhrain.tool.exit_code': event.exitCode ?? -1 }),
      ...(event.truncated ? { 'bhrain.tool.truncated': true } : {}),
      ...(logPrompts ? { 'bhrain.tool.output': redact(event.output) } : {}),
    });
    if (outcome === 'error') span.setStatus({ code: SpanStatusCode.ERROR, message: 'the tool call failed' });
    span.end(timeOf(event.occurredAt));
  }
  const attributes = { ...baseOf(state, event.sessionUuid), 'gen_ai.tool.name': event.toolName, 'bhrain.tool.outcome': outcome };
  state.metrics.toolCalls.add(1, attributes);
  state.metrics.toolDuration.record(event.durationMs / 1000, attributes);
};

const onHookStarted = (state: SpansState, event: BhrainHookStartedEvent) => {
  const parent = event.callId ? state.tools.get(callKey(event.sessionUuid, event.callId)) : undefined;
  const span = state.input.tracer.startSpan(
    `hook ${event.hookEventName}`,
    {
      startTime: timeOf(event.occurredAt),
      attributes: {
        'bhrain.hook.event': event.hookEventName,
        'bhrain.hook.name': state.input.redact(event.hookName),
        ...(event.toolName ? { 'gen_ai.tool.name': event.toolName } : {}),
        ...(event.callId ? { 'gen_ai.tool.call.id': event.callId } : {}),
      },
    },
    parent ? trace.setSpan(ROOT_CONTEXT, parent) : (state.sessions.get(event.sessionUuid)?.context ?? ROOT_CONTEXT),
  );
  const key = hookKey(event);
  state.hooks.set(key, [...(state.hooks.get(key) ?? []), span]);
};

const onHookCompleted = (state: SpansState, event: BhrainHookCompletedEvent) => {
  const span = state.hooks.get(hookKey(event))?.shift();
  if (!span) return;
  span.setAttributes({
    'bhrain.hook.duration_ms': event.durationMs,
    'bhrain.hook.exit_code': event.exitCode ?? -1,
    'bhrain.hook.decision': event.decision ?? 'none',
  });
  if (event.error) span.setStatus({ code: SpanStatusCode.ERROR, message: state.input.redact(event.error) });
  span.end(timeOf(event.occurredAt));
};

const onSessionCompleted = (state: SpansState, event: BhrainSessionCompletedEvent) => {
  const session = state.sessions.get(event.sessionUuid);
  if (!session) return;
  const { span } = session;
  // retries with no model call after them: the call failed in the end, and the session says why
  addRetries(state, span, session.retries.splice(0));
  span.setAttributes({
    'bhrain.termination': event.termination,
    'bhrain.iterations': event.iterations,
    'gen_ai.usage.input_tokens': event.tokens.input,
    'gen_ai.usage.output_tokens': event.tokens.output,
    'gen_ai.usage.cache_read.input_tokens': event.tokens.cache.get,
    'gen_ai.usage.cache_creation.input_tokens': event.tokens.cache.set,
    ...(event.cash ? { 'bhrain.cost.usd': event.cash.total } : {}),
    'bhrain.elapsed_ms': event.elapsedMs,
  });
  if (event.termination === 'error') span.setStatus({ code: SpanStatusCode.ERROR, message: 'the session ended in an error' });
  state.metrics.sessions.add(1, {
    ...baseOf(state, event.sessionUuid),
    'bhrain.termination': event.termination,
    'bhrain.session.subagent': !session.top,
  });
  session.endedAt = event.occurredAt;
  // the top session's span waits for the run's end (its exit code)
  if (session.top) return;
  span.end(timeOf(event.occurredAt));
  state.sessions.delete(event.sessionUuid);
};

const onSubagentStarted = (state: SpansState, event: BhrainSubagentStartedEvent) => {
  const task = state.tools.get(callKey(event.parentSessionUuid, event.callId));
  const context = task ? trace.setSpan(ROOT_CONTEXT, task) : (state.sessions.get(event.parentSessionUuid)?.context ?? ROOT_CONTEXT);
  state.spawned.set(event.sessionUuid, { context, type: event.subagentType, description: event.description });
  task?.setAttributes({ 'bhrain.subagent.type': event.subagentType, 'bhrain.subagent.session_id': event.sessionUuid });
};

/** .what = one event into its span or span event, and its metrics */
const onEventOf = (state: SpansState, event: BhrainEvent): void => {
  switch (event.type) {
    case 'SessionStarted':
      return onSessionStarted(state, event);
    case 'RequestRetried':
      state.sessions.get(event.sessionUuid)?.retries.push(event);
      state.metrics.retries.add(1, baseOf(state, event.sessionUuid));
      return;
    case 'IterationCompleted':
      return onIterationCompleted(state, event);
    case 'ToolCallStarted':
      return onToolStarted(state, event);
    case 'ToolExecutionCompleted':
      return onToolCompleted(state, event);
    case 'Compacted':
      state.sessions.get(event.sessionUuid)?.span.addEvent(
        'bhrain.compacted',
        {
          'bhrain.compaction.strategy': event.strategy,
          'bhrain.compaction.tokens_before': event.tokensBefore,
          'bhrain.compaction.tokens_after': event.tokensAfter,
        },
        timeOf(event.occurredAt),
      );
      return;
    case 'SubagentStarted':
      return onSubagentStarted(state, event);
    case 'SubagentCompleted':
      state.tools.get(callKey(event.parentSessionUuid, event.callId))?.setAttributes({ 'bhrain.subagent.status': event.status });
      state.spawned.delete(event.sessionUuid);
      return;
    case 'HookStarted':
      return onHookStarted(state, event);
    case 'HookCompleted':
      return onHookCompleted(state, event);
    case 'SessionCompleted':
      return onSessionCompleted(state, event);
  }
};

/**
 * .what = the spans and metrics of a run, built from its events (the top session's, and its subagents' through
 *         onSubagentEvent): a span per session, model call, tool call and hook run; a subagent's session span is a child
 *         of the task call that spawned it
 * .why = the CLI already receives every event: telemetry reads them, so no OTel type reaches the agent layers
 */
export const genEventSpans = (input: EventSpansInput) => {
  const state: SpansState = {
    input,
    metrics: genInstruments(input.meter),
    sessions: new Map(),
    tools: new Map(),
    hooks: new Map(),
    spawned: new Map(),
  };
  /**
   * .what = the run's end: the top session's span gets the exit code (and, with LOG_PROMPTS, the task and the answer) and
   *         ends; any span still open (a run stopped mid-call) ends now
   */
  const end = (outcome: { exitCode: number; prompt: string | null; output: string | null }): void => {
    const { logPrompts, redact } = input;
    for (const session of state.sessions.values()) {
      if (session.top) {
        session.span.setAttribute('bhrain.exit_code', outcome.exitCode);
        if (logPrompts && outcome.prompt !== null) session.span.setAttribute('bhrain.prompt', redact(outcome.prompt));
        if (logPrompts && outcome.output !== null) session.span.setAttribute('bhrain.output', redact(outcome.output));
      }
      session.span.end(session.endedAt ? timeOf(session.endedAt) : undefined);
    }
    for (const span of [...state.tools.values(), ...[...state.hooks.values()].flat()]) span.end();
    state.sessions.clear();
    state.tools.clear();
    state.hooks.clear();
  };
  return { onEvent: (event: BhrainEvent) => onEventOf(state, event), end };
};

export type EventSpans = ReturnType<typeof genEventSpans>;
