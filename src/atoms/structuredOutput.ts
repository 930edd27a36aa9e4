import { z } from 'zod';

/** .what = the instruction that asks for JSON fitting a schema */
export const instructSchema = (schema: z.ZodType): string =>
  [
    'Answer with only a JSON value that conforms to this JSON Schema: no prose, no code fences.',
    JSON.stringify(z.toJSONSchema(schema)),
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

/** .what = the answer validated against the schema, or the reason it does not fit */
export const validateAnswer = <T>(text: string, schema: z.ZodType<T>): { ok: true; value: T } | { ok: false; reason: string } => {
  let json: unknown;
  try {
    json = readJsonAnswer(text);
  } catch (error) {
    return { ok: false, reason: `it is not JSON (${(error as Error).message})` };
  }
  const parsed = schema.safeParse(json);
  return parsed.success ? { ok: true, value: parsed.data } : { ok: false, reason: z.prettifyError(parsed.error) };
};
