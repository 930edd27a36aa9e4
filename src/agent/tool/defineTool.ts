import type { $ZodType } from 'zod/v4/core';
import { safeParse, toJSONSchema } from 'zod/v4/core';

import type { JsonSchemaObject } from '../../core/contract/BrainMessage.js';
import { BadRequestError } from '../../core/contract/errors.js';
import { makeTool, type BhrainTool, type BhrainToolOutput, type BhrainToolSpec, type ZodToolSupport } from './makeTool.js';

// the tool contract lives in makeTool.ts, which loads no zod; this module adds the reading of zod inputs
export * from './makeTool.js';

/** .what = zod's int() bounds, which say nothing to the model that `type: integer` does not */
const SAFE_INTEGER_BOUNDS = new Set([Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER]);

/**
 * .what = the JSON Schema the model sees for a zod input: zod's toJSONSchema of its input side, without `$schema` and
 *         without the safe-integer bounds zod adds to int()
 * .why = the schema is a tool's contract with the model, so it must read as a hand-written one would: descriptions,
 *        required, additionalProperties false; a preprocess (a number sent as "10") shows its target type
 */
export const jsonSchemaOfZod = (name: string, schema: $ZodType): JsonSchemaObject => {
  const { $schema: _ignored, ...json } = toJSONSchema(schema, {
    io: 'input',
    unrepresentable: 'any',
    override: ({ jsonSchema }) => {
      const node = jsonSchema as { minimum?: number; maximum?: number };
      if (node.minimum !== undefined && SAFE_INTEGER_BOUNDS.has(node.minimum)) delete node.minimum;
      if (node.maximum !== undefined && SAFE_INTEGER_BOUNDS.has(node.maximum)) delete node.maximum;
    },
  }) as Record<string, unknown>;
  if (json.type !== 'object')
    throw new BadRequestError(
      `the input of tool ${name} must be an object schema (z.object({ ... }) or { type: 'object', ... }): the suppliers take tool input as an object`,
    );
  return json as JsonSchemaObject;
};

/** .what = zod's two services to makeTool: the JSON Schema of an input, and the check of a call */
const ZOD: ZodToolSupport = { jsonSchemaOf: jsonSchemaOfZod, safeParse };

/**
 * .what = declares a tool (docs/design/tools.md#declaring-a-tool), after opencode's Tool.define, vercel's tool({ inputSchema }) and codex's
 *         is_mutating
 * .why = the input is validated once, where the session runs the call, and `execute` receives typed input; the effect
 *        and paths tell ordering, guards and the sandbox what the call does
 * .note = a zod input's JSON Schema is made on first use of `definition` (at configuration time, when a toolbox joins a
 *         session); a JSON Schema input is checked with ajv, loaded only then
 */
export function defineTool<TSchema extends $ZodType, TOutput extends BhrainToolOutput = BhrainToolOutput>(
  spec: Omit<BhrainToolSpec<TSchema['_zod']['output'], TOutput>, 'input'> & { input: TSchema },
): BhrainTool<TSchema['_zod']['output'], TOutput>;
export function defineTool<TInput = Record<string, unknown>, TOutput extends BhrainToolOutput = BhrainToolOutput>(
  spec: BhrainToolSpec<TInput, TOutput>,
): BhrainTool<TInput, TOutput>;
export function defineTool<TInput, TOutput extends BhrainToolOutput>(spec: BhrainToolSpec<TInput, TOutput>): BhrainTool<TInput, TOutput> {
  if (typeof spec?.name !== 'string' || !/^[a-zA-Z0-9_-]{1,64}$/.test(spec.name))
    throw new BadRequestError(
      `a tool's name must be 1-64 letters, digits, _ or - (what every supplier accepts), got ${JSON.stringify(spec?.name)}`,
    );
  return makeTool(spec, ZOD);
}
