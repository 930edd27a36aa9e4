import type { ErrorObject, ValidateFunction } from 'ajv';

import type { BrainToolDefinition } from '../core/contract/BrainMessage.js';
import { BadRequestError } from '../core/contract/errors.js';
import { compileJsonSchema, readSchemaDraft } from './structured/compileJsonSchema.js';

const typeOf = (value: unknown): string =>
  value === null ? 'null' : Array.isArray(value) ? 'array' : Number.isInteger(value) ? 'integer' : typeof value;

/**
 * .what = tool arguments an atom could read only in part, with the problem the model must be told
 * .why = a recovery that would have to guess (a missing closer, a repeated parameter) must not run the tool on the guess;
 *        the call still reaches the loop, as an inputError quoting the problem, so the model retries
 */
export class UnreadToolInput {
  constructor(
    readonly partial: Record<string, unknown>,
    readonly problem: string,
  ) {}
}

/** .what = compiled validators, once per schema object (tool definitions are long-lived values) */
const compiled = new WeakMap<object, ValidateFunction>();

const compileToolSchema = (tool: BrainToolDefinition): ValidateFunction => {
  const schema = tool.inputSchema as object;
  const cached = compiled.get(schema);
  if (cached) return cached;
  let validate: ValidateFunction;
  try {
    const draft = readSchemaDraft((schema as { $schema?: unknown }).$schema, 'toolInput');
    validate = compileJsonSchema({ schema, draft, use: 'toolInput' });
  } catch (error) {
    throw new BadRequestError(
      `the input schema of tool ${tool.name} is not a valid JSON Schema: ${(error as Error).message}. Fix the tool definition`,
      { cause: error },
    );
  }
  compiled.set(schema, validate);
  return validate;
};

/** .what = an ajv instance path (/a/0/b) written as the model reads it (input.a[0].b) */
const toPath = (instancePath: string): string =>
  'input' +
  instancePath
    .split('/')
    .slice(1)
    .map((part) => part.replace(/~1/g, '/').replace(/~0/g, '~'))
    .map((part) => (/^\d+$/.test(part) ? `[${part}]` : /^[A-Za-z_$][\w$]*$/.test(part) ? `.${part}` : `[${JSON.stringify(part)}]`))
    .join('');

/** .what = one ajv error as a line the model can act on: where, and what is wrong there */
const describeError = (error: ErrorObject): string => {
  const path = toPath(error.instancePath);
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case 'type':
      return `${path} must be ${String(params.type).split(',').join(' or ')}, got ${typeOf(error.data)}`;
    case 'required':
      return `${path}.${String(params.missingProperty)} is required`;
    case 'additionalProperties':
      return `${path}.${String(params.additionalProperty)} is not a known field`;
    case 'enum':
      return `${path} must be one of ${(params.allowedValues as unknown[]).map((option) => JSON.stringify(option)).join(', ')}, got ${JSON.stringify(error.data)}`;
    case 'const':
      return `${path} must be ${JSON.stringify(params.allowedValue)}, got ${JSON.stringify(error.data)}`;
    default:
      return `${path} ${error.message ?? `fails ${error.keyword}`}`;
  }
};

/**
 * .what = ajv's errors as readable lines; the branch errors of an anyOf/oneOf are folded into that one line
 * .why = "must match a schema in anyOf" alone does not say what each choice wanted
 */
const describeErrors = (errors: readonly ErrorObject[]): string[] => {
  const unions = errors.filter((error) => error.keyword === 'anyOf' || error.keyword === 'oneOf');
  const insideUnion = (error: ErrorObject) =>
    unions.some((union) => union !== error && error.schemaPath.startsWith(`${union.schemaPath}/`));
  return errors
    .filter((error) => !insideUnion(error))
    .map((error) => {
      if (error.keyword !== 'anyOf' && error.keyword !== 'oneOf') return describeError(error);
      const branches = errors.filter((other) => other.schemaPath.startsWith(`${error.schemaPath}/`)).map(describeError);
      const passing = (error.params as { passingSchemas?: unknown }).passingSchemas;
      if (error.keyword === 'oneOf' && Array.isArray(passing))
        return `${toPath(error.instancePath)} must match exactly one of its oneOf choices, but matches ${passing.length} (choices ${passing.join(', ')})`;
      return `${toPath(error.instancePath)} must match one of its ${error.keyword} choices: ${branches.join(', or ') || error.message}`;
    });
};

/**
 * .what = a model's raw tool-call arguments parsed: the input, or the inputError the model reads when they are not a
 *         JSON object
 * .why = malformed arguments become an inputError the model reads and corrects, never a crash; whether readable
 *        arguments fit the tool's schema is checked once, where the session runs the call (the tool's own check)
 */
export const readToolArguments = (input: { raw: string; name: string }): { input: Record<string, unknown>; inputError?: string } => {
  let parsed: unknown;
  try {
    parsed = input.raw.trim() === '' ? {} : JSON.parse(input.raw);
  } catch (error) {
    // the raw text is not quoted back: it may hold a secret, which redaction recognises only in a value it can parse
    const problem = (error as Error).message.replace(/, (?:\.\.\.)?".*"(?:\.\.\.)? is not valid JSON$/s, '');
    return {
      input: {},
      inputError: `the arguments of ${input.name} are not valid JSON (${problem}; ${input.raw.length} characters received). Call ${input.name} again with a JSON object`,
    };
  }
  return readToolValue({ value: parsed, name: input.name });
};

/**
 * .what = already-parsed arguments (a native tool_use input, or a call recovered from text) as the call's input, or the
 *         inputError the model reads: read only in part (UnreadToolInput), or not an object
 * .why = the provider says what it could not read; the tool says what does not fit
 */
export const readToolValue = (input: { value: unknown; name: string }): { input: Record<string, unknown>; inputError?: string } => {
  if (input.value instanceof UnreadToolInput)
    return {
      input: input.value.partial,
      inputError: `the call to ${input.name} could not be read exactly: ${input.value.problem}. Call ${input.name} again with every parameter closed by </parameter> and the call closed by </function></tool_call>`,
    };
  if (typeOf(input.value) !== 'object')
    return {
      input: {},
      inputError: `the arguments of ${input.name} must be a JSON object, got ${typeOf(input.value)}`,
    };
  return { input: input.value as Record<string, unknown> };
};

/**
 * .what = checks arguments against a tool's JSON Schema, with ajv (compiled once per schema)
 * .why = anyOf, oneOf, enum, const, nested objects and arrays are enforced the same way for every JSON Schema tool (MCP,
 *        custom, a plain box's), and for the examples a definition teaches (renderToolDescription); a zod tool checks
 *        its input with zod
 */
export const checkToolInput = (input: {
  value: unknown;
  name: string;
  tools: readonly BrainToolDefinition[];
}): { input: Record<string, unknown>; inputError?: string } => {
  const read = readToolValue(input);
  if (read.inputError !== undefined) return read;
  const record = read.input;
  const tool = input.tools.find((candidate) => candidate.name === input.name);
  if (!tool) return { input: record };
  const validate = compileToolSchema(tool);
  if (validate(record)) return { input: record };
  const problems = describeErrors(validate.errors ?? []);
  return {
    input: record,
    inputError: `the arguments of ${input.name} do not fit its schema: ${problems.join('; ')}. Call ${input.name} again with corrected arguments`,
  };
};
