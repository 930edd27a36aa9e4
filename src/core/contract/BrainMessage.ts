/**
 * .what = the normalized conversation model every atom speaks and the loop keeps
 * .why = the loop never sees vendor shapes; each atom maps these to its native protocol (tool_use blocks, tool_calls)
 */
export type BrainMessage = BrainSystemMessage | BrainUserMessage | BrainAssistantMessage | BrainToolMessage;

/** .what = instructions; atoms hoist these into the supplier's system slot */
export interface BrainSystemMessage {
  readonly role: 'system';
  readonly content: string;
  /** when the loop appended it (ISO 8601); absent on messages made elsewhere (a history rebuilt from an episode) */
  readonly timestamp?: string;
}

/** .what = what the user said */
export interface BrainUserMessage {
  readonly role: 'user';
  readonly content: string;
  /** when the loop appended it (ISO 8601); absent on messages made elsewhere (a history rebuilt from an episode) */
  readonly timestamp?: string;
}

/** .what = what the model said: text plus the tool calls it made, in its own order */
export interface BrainAssistantMessage {
  readonly role: 'assistant';
  readonly content: string;
  readonly toolCalls: readonly BrainToolCall[];
  /** what the model thought before it answered, when the supplier sent it; never part of the answer (content) */
  readonly reasoning?: BrainReasoning;
  /** when the loop appended it (ISO 8601); absent on messages made elsewhere (a history rebuilt from an episode) */
  readonly timestamp?: string;
}

/**
 * .what = a turn's reasoning: its readable text and, for claude, the signed blocks the API needs back unchanged
 * .why = anthropic rejects a tool-use turn whose thinking blocks are not sent back with the results; OpenAI-compatible
 *        servers (DeepSeek, Qwen3 thinking mode) want reasoning_content back after a tool call
 */
export interface BrainReasoning {
  /** the reasoning as text: claude's thinking, reasoning_content, or a <think> block ('' when only redacted) */
  readonly text: string;
  /** anthropic thinking / redacted_thinking blocks with their signatures, in order, sent back exactly as received */
  readonly blocks?: readonly BrainReasoningBlock[];
}

/** .what = one anthropic reasoning block, kept opaque: sent back byte for byte, never edited */
export type BrainReasoningBlock =
  | { readonly type: 'thinking'; readonly thinking: string; readonly signature: string }
  | { readonly type: 'redacted_thinking'; readonly data: string };

/** .what = the result of one tool call, answering the call with the same id */
export interface BrainToolMessage {
  readonly role: 'tool';
  readonly toolCallId: string;
  readonly toolName: string;
  readonly content: string;
  readonly isError: boolean;
  /**
   * the tool broke (it threw unexpectedly, or ended the session), rather than refused or reported a failed call; absent
   * on every other result. An atom whose protocol tells the two apart (rhachet's error:malfunction) reads it
   */
  readonly malfunction?: true;
  /** when the loop appended it (ISO 8601); absent on messages made elsewhere (a history rebuilt from an episode) */
  readonly timestamp?: string;
  /** the output was cut: by the tool itself or by the loop's truncation policy (docs/design/tools.md#truncation-and-spill) */
  readonly truncated?: boolean;
  /** for a tool that runs a process (bash): its exit code, null when killed by a signal or a timeout */
  readonly exitCode?: number | null;
}

/**
 * .what = a structured request by the model to run a tool
 * .note = inputError is set when the model's arguments could not be read (not valid JSON, not an object, a text call
 *         read only in part); such a call is answered with an error result, never executed. Whether readable
 *         arguments fit the tool's schema is checked once, where the session runs the call
 */
export interface BrainToolCall {
  readonly id: string;
  readonly name: string;
  readonly input: Record<string, unknown>;
  readonly inputError?: string;
}

/**
 * .what = what a tool does to the world: reads it, writes files, runs programs, reaches the network, or delegates to a
 *         subagent
 * .why = declared once per tool (defineTool), it drives the call order, the guards and the sandbox, and tells an atom
 *        which calls change nothing (so a tool call written as text may be read more leniently for them)
 */
export type BrainToolEffect = 'read' | 'write' | 'exec' | 'network' | 'delegate';

/**
 * .what = a tool's model-facing definition: name, description, JSON schema of its input, and strict and examples (docs/design/tools.md#definition)
 * .why = examples teach usage the schema cannot (docs/design/tools.md#definition); atoms render them into the description the model reads
 */
export interface BrainToolDefinition {
  readonly name: string;
  readonly description: string;
  readonly inputSchema: JsonSchemaObject;
  /** enforce exact schema match: anthropic's `strict`, OpenAI-compatible `function.strict`; omitted when absent */
  readonly strict?: boolean;
  /** example calls, rendered after the description (renderToolDescription); each input must fit inputSchema */
  readonly examples?: readonly BrainToolExample[];
  /** what a call does (defineTool's effect), never sent to the model; absent = unknown, "may change anything" */
  readonly effect?: BrainToolEffect;
}

/** .what = one example call of a tool (BhrainToolExample, docs/design/tools.md#definition): an input, and what it shows */
export interface BrainToolExample {
  readonly input: Record<string, unknown>;
  readonly description?: string;
}

/** .what = the subset of JSON Schema that tool inputs use */
export interface JsonSchemaObject {
  readonly type: 'object';
  readonly properties?: Record<string, JsonSchema>;
  readonly required?: readonly string[];
  readonly additionalProperties?: boolean;
  readonly [key: string]: unknown;
}

/** .what = a JSON Schema node (open: unknown keywords are kept and passed to the supplier) */
export interface JsonSchema {
  readonly type?: string | readonly string[];
  readonly description?: string;
  readonly enum?: readonly unknown[];
  readonly items?: JsonSchema;
  readonly properties?: Record<string, JsonSchema>;
  readonly required?: readonly string[];
  readonly minimum?: number;
  readonly maximum?: number;
  readonly [key: string]: unknown;
}
