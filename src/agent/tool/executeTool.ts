import type { BrainToolCall, BrainToolDefinition } from '../../core/contract/BrainMessage.js';
import type { BhrainToolBox } from './BhrainToolBox.js';
import { BhrainToolError, BhrainToolFatalError } from './BhrainToolError.js';
import { preloadToolInputAjv, readSchemaDraft } from '../../providers/structured/compileJsonSchema.js';
import {
  isCheckedByAjv,
  makeTool,
  type BhrainTool,
  type BhrainToolContext,
  type BhrainToolEffect,
  type BhrainToolOutput,
  type BhrainToolPath,
  type BhrainToolResult,
} from './makeTool.js';

/** .what = a call found and checked, ready to run: its tool, typed input, effect and paths; or the result that answers it */
export type PreparedToolCall =
  | { ok: true; tool: BhrainTool; input: unknown; effect: BhrainToolEffect | null; paths: readonly BhrainToolPath[] }
  | { ok: false; output: string };

/** .what = the effect-unknown tools a plain ({ name, definitions, execute }) box's definitions stand for, made once per box and name */
const plainTools = new WeakMap<BhrainToolBox, Map<string, BhrainTool>>();

/**
 * .what = the tool a box runs a name with: the one it declares (defineTool), or, for a plain box, its definition as an
 *         effect-unknown tool whose input is the definition's JSON Schema and whose execute is the box's
 * .why = the session treats every call alike, declared or not; a plain box stays "may change anything", with no paths
 */
export const toolOfBox = (box: BhrainToolBox, name: string): BhrainTool => {
  const declared = box.tools?.find((tool) => tool.name === name);
  if (declared) return declared;
  const made = plainTools.get(box) ?? new Map<string, BhrainTool>();
  plainTools.set(box, made);
  const known = made.get(name);
  if (known) return known;
  const definition = box.definitions.find((each) => each.name === name);
  const tool = makeTool({
    name,
    description: definition?.description ?? '',
    // a name the box answers without defining it (a refusal) takes any input
    input: definition?.inputSchema ?? { type: 'object' },
    effect: null,
    execute: (input: Record<string, unknown>, context): Promise<BhrainToolOutput> =>
      box.execute({ call: { id: context.callId, name, input } }, context),
  });
  made.set(name, tool);
  return tool;
};

/**
 * .what = finds a call's tool and checks its input: the one place an unknown tool, unreadable arguments (the provider's
 *         inputError) and input that does not fit the schema are answered; then the files the call touches
 * .why = validated once, before the guard sees the call: the guard judges the paths of the input that will run, and
 *        execute receives it typed
 */
export const prepareToolCall = async (input: {
  call: BrainToolCall;
  /** the tool a name runs with, or null when nothing offers it */
  find: (name: string) => BhrainTool | null;
  /** the names offered, listed to the model when it calls another */
  offered: () => readonly string[];
  cwd: string;
}): Promise<PreparedToolCall> => {
  const { call } = input;
  const tool = input.find(call.name);
  if (!tool)
    return {
      ok: false,
      output: `tool not found: '${call.name}'. Available tools: ${input.offered().join(', ') || '(none)'}. Call one of these instead.`,
    };
  if (call.inputError) return { ok: false, output: call.inputError };
  const checked = await tool.check(call.input ?? {});
  if (!checked.ok) return { ok: false, output: checked.problem };
  try {
    return { ok: true, tool, input: checked.value, effect: tool.effect, paths: tool.paths(checked.value, { cwd: input.cwd }) };
  } catch (error) {
    // which files a call touches is unknown: it is not run, rather than run unchecked
    return {
      ok: false,
      output: `${call.name} was not run: the files it would touch could not be read from its input (${(error as Error)?.message ?? error})`,
    };
  }
};

/**
 * .what = runs a prepared call and returns its result: a BhrainToolError is a failed result with its message, any other
 *         throw a failed result saying so (logged), a BhrainToolFatalError is thrown on, to end the session
 * .why = a tool failure is a result the model reads, never an exception that ends the loop, unless the tool says so
 */
export const runPreparedCall = async (
  prepared: Extract<PreparedToolCall, { ok: true }>,
  call: BrainToolCall,
  context: BhrainToolContext,
): Promise<BhrainToolResult> => {
  try {
    const result = await prepared.tool.execute(prepared.input, { ...context, callId: call.id });
    return { ...result, callId: call.id, success: result?.success === true, output: String(result?.output ?? '') };
  } catch (error) {
    if (error instanceof BhrainToolFatalError) throw error;
    if (error instanceof BhrainToolError) return { callId: call.id, success: false, output: error.message };
    if (context.signal?.aborted) return { callId: call.id, success: false, output: `${call.name} was cancelled.` };
    context.log.error(`tool ${call.name} threw`, { callId: call.id, error: String((error as Error)?.stack ?? error) });
    return {
      callId: call.id,
      success: false,
      malfunction: true,
      output: `tool ${call.name} failed with an unexpected error: ${(error as Error)?.message ?? String(error)}`,
    };
  }
};

/**
 * .what = starts loading ajv when a box offers a tool whose input a JSON Schema checks (a plain box, an MCP tool, a custom
 *         one declared so), and makes the ajv of each draft they are written in; null when no box does (bhrain's own
 *         tools check with zod). The session does not wait for it
 * .why = ajv takes ~25 ms to load from node_modules (~9 ms from the CLI's bundle) and ~7 ms to make: begun as a session
 *        opens, that happens while the first request is out, instead of holding up the first call the model makes
 */
export const preloadToolChecks = (boxes: readonly BhrainToolBox[]): Promise<void> | null => {
  const schemas = boxes.flatMap((box) =>
    box.tools
      ? box.tools.filter(isCheckedByAjv).map((tool) => tool.definition.inputSchema)
      : box.definitions.map((each) => each.inputSchema),
  );
  if (!schemas.length) return null;
  // a failed load is not lost: the first check loads ajv again, and its error answers that call
  return preloadToolInputAjv(schemas.map((schema) => readSchemaDraft(schema?.$schema, 'toolInput'))).catch(() => undefined);
};

/** .what = the names a box offers, in its order */
const namesOf = (box: BhrainToolBox): string[] => box.definitions.map((definition) => definition.name);

/**
 * .what = runs one call through a box: finds the tool, checks the input, executes (docs/design/tools.md#executing-a-call)
 * .why = a box is also called on its own (a test, a library caller, a plain box wrapping another); it answers exactly as
 *        the session would, without the session's permission check
 */
export const executeTool = async (
  input: { call: BrainToolCall; box: BhrainToolBox },
  context: BhrainToolContext,
): Promise<BhrainToolResult> => {
  const { call, box } = input;
  const prepared = await prepareToolCall({
    call,
    find: (name) => (namesOf(box).includes(name) ? toolOfBox(box, name) : null),
    offered: () => namesOf(box),
    cwd: context.cwd,
  });
  if (!prepared.ok) return { callId: call.id, success: false, output: prepared.output };
  return runPreparedCall(prepared, call, context);
};

/**
 * .what = a toolbox made of defined tools: their definitions (made on first use), the tools themselves, and an execute
 *         that runs a call through them
 * .why = the plugin unit stays { name, definitions, execute } (docs/design/tools.md#toolboxes), while the session reads each tool's effect and
 *        paths from `tools`
 */
export const toolBoxOf = <TTool extends BhrainTool>(input: {
  name: string;
  tools: readonly TTool[];
}): BhrainToolBox & { tools: readonly TTool[] } => {
  let definitions: readonly BrainToolDefinition[] | null = null;
  const box: BhrainToolBox & { tools: readonly TTool[] } = {
    name: input.name,
    tools: Object.freeze([...input.tools]),
    get definitions() {
      definitions ??= Object.freeze(input.tools.map((tool) => tool.definition));
      return definitions;
    },
    execute: (call, context) => executeTool({ call: call.call, box }, context),
  };
  return box;
};
