import type { BrainToolDefinition, JsonSchema } from '../contract/BrainMessage.js';

const typeOf = (value: unknown): string =>
  value === null ? 'null' : Array.isArray(value) ? 'array' : Number.isInteger(value) ? 'integer' : typeof value;

const fitsType = (value: unknown, type: string): boolean => {
  const actual = typeOf(value);
  return actual === type || (type === 'number' && actual === 'integer');
};

/** .what = the problems of a value against a JSON schema node (the subset tools use), as readable lines */
export const checkJsonSchema = (value: unknown, schema: JsonSchema, path = 'input'): string[] => {
  const types = schema.type === undefined ? [] : Array.isArray(schema.type) ? schema.type : [schema.type as string];
  if (types.length && !types.some((type) => fitsType(value, type)))
    return [`${path} must be ${types.join(' or ')}, got ${typeOf(value)}`];
  const problems: string[] = [];
  if (schema.enum && !schema.enum.some((option) => option === value))
    problems.push(`${path} must be one of ${schema.enum.map((option) => JSON.stringify(option)).join(', ')}`);
  if (typeof value === 'number') {
    if (typeof schema.minimum === 'number' && value < schema.minimum) problems.push(`${path} must be >= ${schema.minimum}`);
    if (typeof schema.maximum === 'number' && value > schema.maximum) problems.push(`${path} must be <= ${schema.maximum}`);
  }
  if (Array.isArray(value) && schema.items)
    value.forEach((item, index) => problems.push(...checkJsonSchema(item, schema.items!, `${path}[${index}]`)));
  if (typeOf(value) === 'object') {
    const record = value as Record<string, unknown>;
    for (const key of schema.required ?? [])
      if (record[key] === undefined) problems.push(`${path}.${key} is required`);
    for (const [key, child] of Object.entries(record)) {
      const childSchema = schema.properties?.[key];
      if (childSchema) problems.push(...checkJsonSchema(child, childSchema, `${path}.${key}`));
      else if (schema.additionalProperties === false) problems.push(`${path}.${key} is not a known field`);
    }
  }
  return problems;
};

/**
 * .what = parses a model's raw tool-call arguments and checks them against the tool's schema
 * .why = malformed arguments become an inputError the model reads and corrects, never a crash
 */
export const readToolArguments = (input: {
  raw: string;
  name: string;
  tools: readonly BrainToolDefinition[];
}): { input: Record<string, unknown>; inputError?: string } => {
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
  return checkToolInput({ value: parsed, name: input.name, tools: input.tools });
};

/** .what = checks already-parsed arguments against the tool's schema */
export const checkToolInput = (input: {
  value: unknown;
  name: string;
  tools: readonly BrainToolDefinition[];
}): { input: Record<string, unknown>; inputError?: string } => {
  if (typeOf(input.value) !== 'object')
    return {
      input: {},
      inputError: `the arguments of ${input.name} must be a JSON object, got ${typeOf(input.value)}`,
    };
  const record = input.value as Record<string, unknown>;
  const tool = input.tools.find((candidate) => candidate.name === input.name);
  if (!tool) return { input: record }; // an unknown tool is answered by the loop, which lists the tools that exist
  const problems = checkJsonSchema(record, tool.inputSchema as JsonSchema);
  return problems.length
    ? {
        input: record,
        inputError: `the arguments of ${input.name} do not fit its schema: ${problems.join('; ')}. Call ${input.name} again with corrected arguments`,
      }
    : { input: record };
};
