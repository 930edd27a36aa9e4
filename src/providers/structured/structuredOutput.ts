import type { ErrorObject, ValidateFunction } from 'ajv';
import type * as z from 'zod';

import { BadRequestError } from '../../core/contract/errors.js';
import { compileJsonSchema, JSON_SCHEMA_DRAFTS, readSchemaDraft } from './compileJsonSchema.js';

/**
 * .what = the shape an answer must have: a zod schema (library callers, typed), or a plain JSON Schema object (the CLI's
 *         --json-schema), validated by ajv
 */
export type OutputSchema<T = unknown> = z.ZodType<T> | { jsonSchema: object };

/** .what = an output schema made ready once per call: the JSON Schema the model is shown, and a check of a parsed value */
export interface CompiledOutputSchema<T = unknown> {
  jsonSchema: object;
  validateValue: (value: unknown) => { ok: true; value: T } | { ok: false; errors: string[] };
}

const WHERE = 'the output schema (--json-schema; schema.jsonSchema in the library)';

/** .what = one ajv error as a line a model or a user can act on: where in the answer, and what is wrong there */
const describeAjvError = (error: ErrorObject): string => {
  const where = error.instancePath || '(root)';
  const params = error.params as { allowedValues?: unknown[]; additionalProperty?: string; allowedValue?: unknown };
  const detail = params.allowedValues
    ? `: ${params.allowedValues.map((value) => JSON.stringify(value)).join(', ')}`
    : params.additionalProperty !== undefined
      ? `: '${params.additionalProperty}'`
      : params.allowedValue !== undefined
        ? `: ${JSON.stringify(params.allowedValue)}`
        : '';
  return `${where} ${error.message ?? error.keyword}${detail}`;
};

/** .what = a plain JSON Schema compiled by ajv, or a BadRequestError saying what is wrong with it */
const compileOutputJsonSchema = (jsonSchema: unknown): CompiledOutputSchema => {
  if (typeof jsonSchema !== 'object' || jsonSchema === null || Array.isArray(jsonSchema))
    throw new BadRequestError(`${WHERE} must be a JSON object, got ${Array.isArray(jsonSchema) ? 'an array' : JSON.stringify(jsonSchema)}`);
  const declared = (jsonSchema as { $schema?: unknown }).$schema;
  const draft = readSchemaDraft(declared, 'output');
  if (!draft)
    throw new BadRequestError(
      `${WHERE} declares $schema ${JSON.stringify(declared)}, a draft bhrain does not read: use ${JSON_SCHEMA_DRAFTS.map((candidate) => candidate.uris[0]).join(', ')}, or omit $schema (2020-12)`,
    );
  let validate: ValidateFunction;
  try {
    validate = compileJsonSchema({ schema: jsonSchema, draft, use: 'output' });
  } catch (error) {
    throw new BadRequestError(`${WHERE} is not a valid JSON Schema: ${(error as Error).message}. Fix the schema and run again`, {
      cause: error,
    });
  }
  return {
    jsonSchema,
    validateValue: (value) =>
      validate(value) ? { ok: true, value } : { ok: false, errors: (validate.errors ?? []).map(describeAjvError) },
  };
};

/** .what = a zod issue as a line, with the path written as ajv writes it (/a/0/b) */
const describeZodIssue = (issue: z.core.$ZodIssue): string =>
  `${issue.path.length ? `/${issue.path.map(String).join('/')}` : '(root)'} ${issue.message}`;

/**
 * .what = checks an output schema and makes it ready to validate answers
 * .why = a JSON Schema that ajv rejects fails before any request, as a bad request naming the problem
 */
export const compileOutputSchema = <T>(schema: OutputSchema<T>): CompiledOutputSchema<T> => {
  // a zod schema by what it can do, so one from another copy of zod works too
  if (typeof (schema as { safeParse?: unknown }).safeParse === 'function') {
    const zod = schema as z.ZodType<T>;
    // the schema's own method (zod 4.1+): zod itself is not loaded here, so a run without a zod schema never loads it
    if (typeof zod.toJSONSchema !== 'function')
      throw new BadRequestError(
        `${WHERE} is a zod schema without toJSONSchema(): use zod 4.1 or newer, or give { jsonSchema: <a JSON Schema object> }`,
      );
    return {
      jsonSchema: zod.toJSONSchema(),
      validateValue: (value) => {
        const parsed = zod.safeParse(value);
        return parsed.success ? { ok: true, value: parsed.data } : { ok: false, errors: parsed.error.issues.map(describeZodIssue) };
      },
    };
  }
  if (typeof schema === 'object' && schema !== null && 'jsonSchema' in schema)
    return compileOutputJsonSchema(schema.jsonSchema) as CompiledOutputSchema<T>;
  throw new BadRequestError(`${WHERE} must be a zod schema or { jsonSchema: <a JSON Schema object> }`);
};

const compiled = <T>(schema: OutputSchema<T> | CompiledOutputSchema<T>): CompiledOutputSchema<T> =>
  'validateValue' in schema ? schema : compileOutputSchema(schema);

/** .what = the instruction that asks for JSON fitting a schema */
export const instructSchema = (schema: OutputSchema | CompiledOutputSchema): string =>
  [
    'Answer with only a JSON value that conforms to this JSON Schema: no prose, no code fences.',
    JSON.stringify(compiled(schema).jsonSchema),
  ].join('\n');

/** .what = the JSON value inside a model's answer, tolerating code fences and surrounding prose */
export const readJsonAnswer = (text: string): unknown => {
  const fenced = /```(?:json)?\s*([\s\S]*?)```/.exec(text);
  const body = (fenced ? fenced[1] : text).trim();
  try {
    return JSON.parse(body);
  } catch (error) {
    const start = body.search(/[[{]/);
    const end = Math.max(body.lastIndexOf('}'), body.lastIndexOf(']'));
    if (start >= 0 && end > start) return JSON.parse(body.slice(start, end + 1));
    throw error;
  }
};

/**
 * .what = the answer validated against the schema, or why it does not fit: each error as a line (errors) and all of
 *         them on one line (reason), for the corrective turn and for OutputInvalidError
 */
export const validateAnswer = <T>(
  text: string,
  schema: OutputSchema<T> | CompiledOutputSchema<T>,
): { ok: true; value: T } | { ok: false; reason: string; errors: string[] } => {
  let json: unknown;
  try {
    json = readJsonAnswer(text);
  } catch (error) {
    const errors = [`it is not JSON (${(error as Error).message})`];
    return { ok: false, reason: errors[0], errors };
  }
  const verdict = compiled(schema).validateValue(json);
  return verdict.ok ? verdict : { ok: false, reason: verdict.errors.join('; '), errors: verdict.errors };
};
