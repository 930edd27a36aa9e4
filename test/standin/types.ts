// Public types of the LLM stand-in, shared by the server (standin.ts) and the wire-format modules.

/** Options for startStandin; every field is optional and the defaults behave like a permissive real API. */
export interface StandinOptions {
  /** When set, requests with a different x-api-key (anthropic) or `Authorization: Bearer` (openai) get a 401. */
  apiKey?: string;
  /** Minimum prefix tokens before anything is cached (default 1024, like the real Anthropic API; OpenAI uses it too). */
  cacheMinTokens?: number;
  /** When set, requests whose estimated input tokens exceed it get the protocol's real context-overflow 400. */
  contextLimitTokens?: number;
  /** Delay before every response on the API routes (default 0). */
  latencyMs?: number;
}

/** A running stand-in server: where to point the SDKs, how to script it, and what it received. */
export interface Standin {
  /** "http://127.0.0.1:PORT": the Anthropic SDK baseURL (no /v1). */
  url: string;
  /** url + "/v1": the OpenAI SDK baseURL. */
  openaiUrl: string;
  /** Append turns to the FIFO queue. */
  script(...turns: StandinTurn[]): void;
  /** Optional dynamic responder, consulted before the queue; returning undefined falls through to the queue. */
  respond: ((request: StandinRequest) => StandinTurn | undefined) | null;
  /** Every model request received (/v1/messages and /v1/chat/completions only), in order. */
  requests: StandinRequest[];
  /** Turns left in the queue. */
  pending(): number;
  /** Clear queue, requests, cache state and responder. */
  reset(): void;
  /** Stop listening and destroy open (keep-alive) sockets so tests never hang. */
  close(): Promise<void>;
}

/** One tool call of a scripted assistant turn; `rawArguments` is sent verbatim (to script malformed JSON). */
export interface StandinToolCall {
  id?: string;
  name: string;
  input?: unknown;
  rawArguments?: string;
}

/** One scripted answer of the stand-in: a model answer, an HTTP error, or a transport fault. */
export type StandinTurn =
  | { text: string; usage?: { outputTokens?: number; reasoningTokens?: number } }
  | { toolCalls: StandinToolCall[]; text?: string; usage?: { reasoningTokens?: number } }
  | { refusal: string }
  | { error: { status: number; retryAfterSeconds?: number; retryAfterMs?: number; message?: string } }
  | { cut: 'text' | 'tool' }
  | { stall: 'text' | 'tool' }
  | { reset: true }
  | { invalidBody: true }
  | { delayMs: number; then: StandinTurn }
  | { contextOverflow: true };

/** Token usage the stand-in reported for one request, in that protocol's convention (openai `input` includes cached). */
export interface StandinUsage {
  input: number;
  /** openai: completion_tokens, which include the reasoning tokens */
  output: number;
  /** openai: completion_tokens_details.reasoning_tokens, when the turn scripted some */
  reasoning?: number;
  cacheRead: number;
  cacheWrite: number;
}

/** A model request as received, plus the usage the stand-in reported for it (null for errors and faults). */
export interface StandinRequest {
  protocol: 'anthropic' | 'openai';
  method: string;
  path: string;
  query: Record<string, string>;
  headers: Record<string, string | string[] | undefined>;
  body: any;
  stream: boolean;
  usage: StandinUsage | null;
  at: number;
}
