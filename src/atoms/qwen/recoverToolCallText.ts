import type { BrainToolDefinition } from '../../contract/BrainMessage.js';

/** .what = a tool call recovered from text: parsed arguments, or the raw text when they would not parse */
export type RecoveredToolCall = { name: string; value: unknown } | { name: string; raw: string };

/** .what = a parameter's text coerced to the type its schema declares (qwen3-coder's xml format sends everything as text) */
const coerce = (text: string, type: unknown): unknown => {
  if (type === 'string' || type === undefined) return text;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
};

/** .what = one <tool_call> body: hermes json `{"name","arguments"}` or qwen3-coder xml `<function=x><parameter=k>v</parameter></function>` */
const readBody = (body: string, tools: readonly BrainToolDefinition[]): RecoveredToolCall | null => {
  const xml = /<function=([^>\s]+)>([\s\S]*?)(?:<\/function>|$)/.exec(body);
  if (xml) {
    const name = xml[1];
    const properties = tools.find((tool) => tool.name === name)?.inputSchema.properties ?? {};
    const value: Record<string, unknown> = {};
    for (const match of xml[2].matchAll(/<parameter=([^>\s]+)>\n?([\s\S]*?)\n?<\/parameter>/g))
      value[match[1]] = coerce(match[2], properties[match[1]]?.type);
    return { name, value };
  }
  try {
    const json = JSON.parse(body) as { name?: unknown; arguments?: unknown; parameters?: unknown };
    if (typeof json.name !== 'string') return null;
    const args = json.arguments ?? json.parameters ?? {};
    return typeof args === 'string' ? { name: json.name, raw: args } : { name: json.name, value: args };
  } catch {
    const name = /"name"\s*:\s*"([^"]+)"/.exec(body)?.[1];
    return name ? { name, raw: body } : null;
  }
};

/**
 * .what = recovers tool calls that a qwen server without a tool parser returned as `<tool_call>…</tool_call>` text
 * .why = without this, such a model's calls would be shown to the user as text and never run
 */
export const recoverToolCallText = (
  text: string,
  tools: readonly BrainToolDefinition[],
): { text: string; toolCalls: RecoveredToolCall[] } => {
  if (!text.includes('<tool_call>')) return { text, toolCalls: [] };
  const toolCalls: RecoveredToolCall[] = [];
  const rest = text.replace(/<tool_call>([\s\S]*?)(?:<\/tool_call>|$)/g, (whole, body: string) => {
    const call = readBody(body.trim(), tools);
    if (!call) return whole;
    toolCalls.push(call);
    return '';
  });
  return { text: rest.trim(), toolCalls };
};
