// Protocol-neutral form of a scripted model answer (text and/or tool calls), shared by both wire formats.
import { randomBytes } from 'node:crypto';
import { estimateTokens } from './tokens.js';
import type { StandinToolCall } from './types.js';

/** A model answer ready to encode: optional text, tool calls with their exact arguments string, output tokens. */
export interface Answer {
  text: string | undefined;
  toolCalls: Array<{ id: string; name: string; arguments: string }>;
  outputTokens: number;
  /** openai: the model declined (delta.refusal, message.refusal); anthropic: stop_reason refusal with this text */
  refusal?: string;
  /** openai: tokens the model reasoned in, counted inside completion_tokens and said in completion_tokens_details */
  reasoningTokens: number;
}

/** The answer-producing turns (the others are errors and faults, handled by the server). */
export type AnswerTurn =
  | { text: string; usage?: { outputTokens?: number; reasoningTokens?: number } }
  | { toolCalls: StandinToolCall[]; text?: string; usage?: { reasoningTokens?: number } }
  | { refusal: string };

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** A random id like the real APIs use ("msg_01Ab...", "toolu_...", "call_..."). */
export const randomId = (prefix: string, length = 24): string =>
  prefix + Array.from(randomBytes(length), (byte) => ALPHABET[byte % ALPHABET.length]).join('');

/** Normalize a text or tool-call turn; ids are generated with `toolIdPrefix` when the script gave none. */
export const toAnswer = (turn: AnswerTurn, toolIdPrefix: string): Answer => {
  const toolCalls = ('toolCalls' in turn ? turn.toolCalls : []).map((call) => ({
    id: call.id ?? randomId(toolIdPrefix),
    name: call.name,
    arguments: call.rawArguments ?? JSON.stringify(call.input ?? {}),
  }));
  if ('refusal' in turn)
    return {
      text: undefined,
      toolCalls: [],
      refusal: turn.refusal,
      outputTokens: Math.max(1, estimateTokens(turn.refusal)),
      reasoningTokens: 0,
    };
  const text = turn.text;
  const usage = 'usage' in turn ? (turn.usage as { outputTokens?: number; reasoningTokens?: number } | undefined) : undefined;
  const estimated = estimateTokens(text ?? '') + toolCalls.reduce((sum, c) => sum + estimateTokens(c.name + c.arguments), 0);
  return { text, toolCalls, outputTokens: usage?.outputTokens ?? Math.max(1, estimated), reasoningTokens: usage?.reasoningTokens ?? 0 };
};

/** The answer a `cut` turn starts to send before the socket is destroyed. */
export const cutTurn = (kind: 'text' | 'tool'): AnswerTurn =>
  kind === 'text'
    ? { text: 'This answer is cut off somewhere in the middle of this sentence, after a few deltas.' }
    : {
        toolCalls: [
          { name: 'write_file', input: { path: '/tmp/standin/cut.txt', content: 'a tool call whose JSON arguments are cut midway' } },
        ],
      };

/** Split a string into a few pieces (at most 8, code-point safe) so streaming is really partial. */
export const chunks = (text: string): string[] => {
  const chars = Array.from(text);
  const size = Math.max(4, Math.ceil(chars.length / 8));
  const out: string[] = [];
  for (let i = 0; i < chars.length; i += size) out.push(chars.slice(i, i + size).join(''));
  return out;
};

/** Parse tool arguments when they are valid JSON; otherwise keep the raw string (a malformed script). */
export const parseArguments = (raw: string): unknown => {
  try {
    return JSON.parse(raw);
  } catch {
    return raw;
  }
};

/** An encoded stream: SSE frames in order, and (for cut turns) the index of the frame after which the socket dies. */
export interface StreamPlan {
  frames: string[];
  cutAfter?: number;
}

/** Index of the middle frame among `deltaIndexes` (the frame after which a cut stream is destroyed). */
export const middleOf = (deltaIndexes: number[]): number | undefined =>
  deltaIndexes.length === 0 ? undefined : deltaIndexes[Math.ceil(deltaIndexes.length / 2) - 1];
