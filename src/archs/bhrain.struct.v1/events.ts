/**
 * .what = the domain events of a bhrain session: records of what happened, emitted to subscribers
 * .why = observability without coupling: a caller can trace, meter or persist a run from these alone
 */
export type BhrainEvent = BhrainIterationCompletedEvent | BhrainToolExecutionCompletedEvent | BhrainCompactedEvent;

/** .what = one loop iteration finished (a generation, and the tool calls it asked for) */
export interface BhrainIterationCompletedEvent {
  type: 'IterationCompleted';
  sessionUuid: string;
  iterationNumber: number;
  hadToolCalls: boolean;
  toolCallCount: number;
  /** this iteration's generation */
  tokenUsage: { inputTokens: number; outputTokens: number; totalTokens: number; cacheGetTokens: number; cacheSetTokens: number };
  /** the size of the context the model saw this iteration */
  contextTokens: number;
  occurredAt: string;
}

/** .what = one tool call was answered (executed, denied, or refused) */
export interface BhrainToolExecutionCompletedEvent {
  type: 'ToolExecutionCompleted';
  sessionUuid: string;
  callId: string;
  toolName: string;
  durationMs: number;
  success: boolean;
  occurredAt: string;
}

/** .what = the memory manager replaced the context */
export interface BhrainCompactedEvent {
  type: 'Compacted';
  sessionUuid: string;
  strategy: string;
  tokensBefore: number;
  tokensAfter: number;
  occurredAt: string;
}

/** .what = a subscriber to session events */
export type BhrainEventListener = (event: BhrainEvent) => void;
