import type { $ZodType } from 'zod/v4/core';

import type { BrainLog } from '../../core/contract/BrainContext.js';
import type { BrainToolDefinition, BrainToolEffect, BrainToolExample, JsonSchemaObject } from '../../core/contract/BrainMessage.js';
import { BadRequestError } from '../../core/contract/errors.js';
import type { SecretRedactor } from '../../core/secrets/genSecretRedactor.js';
import type { BhrainSubagent } from '../BhrainSession.js';
import { preloadAjv } from '../../providers/structured/compileJsonSchema.js';
import { checkToolInput } from '../../providers/readToolArguments.js';
import { describeInputIssues, describeInputProblems } from './describeInputIssues.js';
import type { ProtectedChange } from '../../sandbox/genProtectedTree.js';

/**
 * .what = what a tool does to the world: reads it, writes files, runs programs, reaches the network, or delegates to a
 *         subagent; null = unknown, "may change anything"
 * .why = one declaration drives the call order of a turn, the guards (readOnly, promptForWrites), the read-only subagent
 *        types and the sandbox, instead of lists of tool names kept in several places
 */
export type BhrainToolEffect = BrainToolEffect;

/** .what = every effect a tool may declare, in the order a turn runs them after the unknown ones */
export const BHRAIN_TOOL_EFFECTS: readonly BhrainToolEffect[] = ['exec', 'network', 'delegate', 'write', 'read'];

/**
 * .what = one file a call touches, as the model named it (relative to cwd, or absolute), and whether it reads or changes it
 * .why = every path-taking tool, custom ones too, is checked the same way: outside the workspace, protected paths, hard
 *        links, hidden paths, remembered approvals and rules such as `write(src/**)`
 */
export interface BhrainToolPath {
  path: string;
  access: 'read' | 'write';
}

/**
 * .what = the output of one tool execution, which the model reads
 * .why = a failure is a result (success false) with an explanation, never an exception that ends the loop
 */
export interface BhrainToolResult {
  callId: string;
  success: boolean;
  output: string;
  /** true when the output was cut: by the tool itself (bash's bounded capture) or by the loop's truncation policy */
  truncated?: boolean;
  /** where the full, uncut output was kept, so the model can page it with read */
  fullOutputPath?: string;
  /** for a tool that runs a process (bash): its exit code, null when killed by a signal or a timeout */
  exitCode?: number | null;
  /** the tool threw an unexpected error: it broke, where a failed result is a call it refused or could not do */
  malfunction?: true;
  /** for bash in a sandbox: the protected entries the command made or changed, put right when it ended, and the git
   *  repositories it made (for the audit; the model reads them in the output's notes) */
  protectedChanges?: readonly ProtectedChange[];
}

/** .what = what a tool's execute returns: a result, without the call id the contract adds */
export type BhrainToolOutput = Omit<BhrainToolResult, 'callId'>;

/** .what = what a tool execution may use: where it runs, how to log, when to stop */
export interface BhrainToolContext {
  /** the working directory: relative paths resolve here, bash runs here */
  cwd: string;
  /** the directories the tools may change besides cwd, real paths (BhrainContext.addDirs, checked by resolveAddDirs) */
  addDirs?: readonly string[];
  log: BrainLog;
  env: Record<string, string | undefined>;
  signal?: AbortSignal;
  /** where the session spills truncated outputs: the files tools may read it even inside a hidden path ($BHRAIN_HOME) */
  spillDir?: string;
  /** the session's redactor: the environment's secrets and the repository's git credentials (bash redacts what it cuts) */
  redact?: SecretRedactor;
  /**
   * runs a subagent of the calling session (docs/design/loop.md#subagents): a child session of a configured type, with a fresh context,
   * the same budget, approvals, signal and prompter; present when config.subagents is on and the session is below
   * subagents.maxDepth. The task tool spawns through it; so may a tool of your own
   */
  spawn?: BhrainSpawn;
}

/** .what = what a tool asks of spawn: which subagent type, the whole task, a short label, and the call it serves */
export interface BhrainSpawnRequest {
  /** a type of config.subagents: explore, plan, general-purpose, or a custom one */
  type: string;
  /** the task, with everything the subagent needs to know: it sees none of the parent's conversation */
  prompt: string;
  /** a short label, 3-5 words */
  description: string;
  /** the tool call it serves (in SubagentStarted and SubagentCompleted) */
  callId: string;
}

/** .what = a spawned subagent's end: whether it answered, what the parent's model should read, and the subagent entity */
export interface BhrainSpawned {
  success: boolean;
  /** its answer when it completed; why it failed and what it said before, when it did not */
  output: string;
  subagent: BhrainSubagent;
}

/** .what = the spawn capability of a tool context: runs one subagent to its end; never throws for the child's failures */
export type BhrainSpawn = (request: BhrainSpawnRequest) => Promise<BhrainSpawned>;

/** .what = the context one execution gets: the tool context, and the id of the call it answers */
export type BhrainToolExecuteContext = BhrainToolContext & { callId: string };

/**
 * .what = a zod input built on the tool's first call, with the JSON Schema the model reads given as it is (deferInput)
 * .why = bhrain's own tools: a run that calls none of them (a one-turn answer) builds no zod schema and converts none
 *        to JSON Schema, about 9 ms of start-up; a test holds each given JSON Schema equal to its zod schema's
 */
export interface BhrainDeferredToolInput<TInput> {
  readonly jsonSchema: JsonSchemaObject;
  /** builds the zod schema (importing zod itself when it must), once */
  readonly zod: () => Promise<$ZodType<TInput>>;
}

/** .what = a deferred input: the JSON Schema the model reads, and the zod schema that checks a call, built once on the first */
export const deferInput = <TSchema extends $ZodType>(
  jsonSchema: JsonSchemaObject,
  zod: () => Promise<TSchema>,
): BhrainDeferredToolInput<TSchema['_zod']['output']> => {
  let built: Promise<TSchema> | null = null;
  return { jsonSchema, zod: () => (built ??= zod()) };
};

/**
 * .what = what makeTool needs to take a zod schema as it is: its JSON Schema, made at once, and its check
 * .why = zod is loaded by defineTool's module, which gives this; bhrain's own tools defer their zod (deferInput), so a
 *        run that calls none of them never loads it
 */
export interface ZodToolSupport {
  jsonSchemaOf: (name: string, schema: $ZodType) => JsonSchemaObject;
  safeParse: typeof import('zod/v4/core').safeParse;
}

/** .what = a tool's input as declared: a zod schema (classic zod or zod/mini), a JSON Schema object (MCP, custom tools), or a deferred zod input (bhrain's own tools) */
export type BhrainToolInputSchema<TInput> = $ZodType<TInput> | JsonSchemaObject | BhrainDeferredToolInput<TInput>;

/** .what = a call's input checked against the tool's schema: the typed value, or the problems the model reads */
export type BhrainToolInputCheck<TInput> = { ok: true; value: TInput } | { ok: false; problem: string };

/**
 * .what = a tool as declared by defineTool: its definition, effect, paths and typed executor
 * .why = docs/design/tools.md#declaring-a-tool: one declaration per tool, validated once, read by ordering, guards and the sandbox
 */
// `any` by default: a list of tools holds tools of different inputs, each checked before its own execute
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export interface BhrainTool<TInput = any, TOutput extends BhrainToolOutput = BhrainToolOutput> {
  readonly name: string;
  /** null = unknown: "may change anything" */
  readonly effect: BhrainToolEffect | null;
  /** what the model sees: name, description, JSON Schema of the input (made from a zod schema on first use), strict, examples */
  readonly definition: BrainToolDefinition;
  /** the files a call with this (checked) input touches; [] for a tool that names none */
  readonly paths: (input: TInput, context: { cwd: string }) => readonly BhrainToolPath[];
  /** checks a call's input against the schema: the typed (and, for zod, transformed) value, or the problem the model reads */
  readonly check: (input: unknown) => Promise<BhrainToolInputCheck<TInput>>;
  /** runs a call whose input check passed */
  readonly execute: (input: TInput, context: BhrainToolExecuteContext) => Promise<TOutput>;
}

/** .what = what defineTool takes: the definition's fields, the effect, the paths a call touches and the executor */
export interface BhrainToolSpec<TInput, TOutput extends BhrainToolOutput = BhrainToolOutput> {
  name: string;
  /** the model-facing text, from the .txt beside the tool */
  description: string;
  input: BhrainToolInputSchema<TInput>;
  effect: BhrainToolEffect | null;
  paths?: (input: TInput, context: { cwd: string }) => readonly BhrainToolPath[];
  strict?: boolean;
  examples?: readonly BrainToolExample[];
  execute: (input: TInput, context: BhrainToolExecuteContext) => Promise<TOutput>;
}

/** .what = whether a tool input is a zod schema (classic or mini: both carry `_zod`) rather than JSON Schema */
const isZodSchema = (input: unknown): input is $ZodType => typeof input === 'object' && input !== null && '_zod' in input;

/** .what = whether a tool input is a deferred zod input (deferInput) */
const isDeferredInput = (input: unknown): input is BhrainDeferredToolInput<unknown> =>
  typeof input === 'object' && input !== null && typeof (input as { zod?: unknown }).zod === 'function' && 'jsonSchema' in input;

/**
 * .what = a tool from its spec, its name taken as given
 * .why = defineTool's work without its name check and without zod: a plain box's definitions (named by their author or
 *        an MCP server) become tools under the names they were offered with, and bhrain's own tools (deferred inputs)
 *        are made without loading zod; a zod schema given as it is needs the support defineTool passes
 */
export const makeTool = <TInput, TOutput extends BhrainToolOutput>(
  spec: BhrainToolSpec<TInput, TOutput>,
  zod: ZodToolSupport | null = null,
): BhrainTool<TInput, TOutput> => {
  const { name, input } = spec;
  // the input's kind, read once: a deferred zod input, a zod schema given as it is, or JSON Schema
  const deferred = isDeferredInput(input) ? (input as BhrainDeferredToolInput<TInput>) : null;
  const given = isZodSchema(input) ? input : null;
  const json = deferred || given ? null : (input as JsonSchemaObject);
  if (!deferred && !given && (typeof input !== 'object' || input === null || (input as JsonSchemaObject).type !== 'object'))
    throw new BadRequestError(`the input of tool ${name} must be a zod object schema or a JSON Schema with type 'object'`);
  if (given && !zod)
    throw new BadRequestError(`the input of tool ${name} is a zod schema: declare the tool with defineTool, which reads zod`);
  let definition: BrainToolDefinition | null = null;
  const check = json
    ? async (value: unknown): Promise<BhrainToolInputCheck<TInput>> => {
        // ajv is loaded once a JSON Schema tool is called, never at start-up
        await preloadAjv();
        const checked = checkToolInput({ value, name, tools: [{ name, description: spec.description, inputSchema: json }] });
        return checked.inputError === undefined ? { ok: true, value: checked.input as TInput } : { ok: false, problem: checked.inputError };
      }
    : async (value: unknown): Promise<BhrainToolInputCheck<TInput>> => {
        // a deferred input loads zod (and builds its schema) on its tool's first call
        const { safeParse } = zod ?? (await import('./zodCheck.js'));
        const parsed = safeParse(deferred ? await deferred.zod() : given!, value, { reportInput: true });
        return parsed.success
          ? { ok: true, value: parsed.data as TInput }
          : { ok: false, problem: describeInputProblems(name, describeInputIssues(parsed.error.issues)) };
      };
  const tool: BhrainTool<TInput, TOutput> = {
    name,
    effect: spec.effect ?? null,
    get definition() {
      definition ??= Object.freeze({
        name,
        description: spec.description,
        inputSchema: deferred ? deferred.jsonSchema : given ? zod!.jsonSchemaOf(name, given) : json!,
        ...(spec.strict === undefined ? {} : { strict: spec.strict }),
        ...(spec.examples === undefined ? {} : { examples: spec.examples }),
        ...(spec.effect ? { effect: spec.effect } : {}),
      });
      return definition;
    },
    paths: spec.paths ?? (() => []),
    check,
    execute: spec.execute,
  };
  if (json) checkedByAjv.add(tool);
  return tool;
};

/** .what = the tools whose input a JSON Schema checks (ajv's, loaded on the first check) */
const checkedByAjv = new WeakSet<BhrainTool>();

/** .what = whether a tool's input is checked by ajv: a JSON Schema input (an MCP tool, a custom tool declared so) */
export const isCheckedByAjv = (tool: BhrainTool): boolean => checkedByAjv.has(tool);
