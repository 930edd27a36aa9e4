import type { BrainToolDefinition, JsonSchema } from '../../core/contract/BrainMessage.js';
import { UnreadToolInput } from '../readToolArguments.js';

/** .what = a tool call recovered from text: parsed arguments (or an UnreadToolInput naming the problem), or the raw json text */
export type RecoveredToolCall = { name: string; value: unknown } | { name: string; raw: string };

const OPEN = '<tool_call>';
const CLOSE = '</tool_call>';
const FUNCTION = '<function=';
const FUNCTION_END = '</function>';
const PARAMETER = '<parameter=';
const PARAMETER_END = '</parameter>';
const CLOSERS = [PARAMETER_END, FUNCTION_END, CLOSE] as const;

/** how many body readings one call may try before it is called ambiguous (each literal closer in a value is a fork) */
const MAX_READINGS = 2000;

/** a function or parameter name: no whitespace, quotes, braces or markup (an unrendered `{{ name }}` is not a call) */
const isName = (name: string): boolean => name.length > 0 && !/[\s<>{}"'=/]/.test(name);

const skipSpace = (text: string, at: number): number => {
  let index = at;
  while (index < text.length && /\s/.test(text[index])) index += 1;
  return index;
};

/**
 * .what = `<function=NAME>` or `<parameter=NAME>` at `at`: the name and where the tag ends
 * .note = whitespace around the name is not part of it (`<function= read_file >` is read_file), as vLLM and SGLang
 *         strip it; whitespace inside it still makes it no name
 */
const readTag = (text: string, at: number, prefix: string): { name: string; after: number } | null => {
  if (!text.startsWith(prefix, at)) return null;
  const close = text.indexOf('>', at + prefix.length);
  if (close < 0) return null;
  const name = text.slice(at + prefix.length, close).trim();
  return isName(name) ? { name, after: close + 1 } : null;
};

/** a short quote of the text at `at`, for a problem the model reads */
const quote = (text: string, at: number): string => JSON.stringify(text.slice(at, at + 60) + (text.length > at + 60 ? '…' : ''));

/** .what = what one call is read against: the tool's parameter names, and how a call may start (with or without <tool_call>) */
interface CallContext {
  text: string;
  tagged: boolean;
  known: ReadonlySet<string> | undefined;
}

/** one complete reading of a function body: its parameters in order, and where the call ends */
interface Reading {
  params: Array<{ name: string; value: string }>;
  end: number;
}

/** where the next call may start after `at`: a `<tool_call>`, or (without openers) a `<function=` of a known tool */
const nextStart = (text: string, at: number, tagged: boolean, toolNames: ReadonlySet<string>): number => {
  if (tagged) return text.indexOf(OPEN, at);
  for (let index = text.indexOf(FUNCTION, at); index >= 0; index = text.indexOf(FUNCTION, index + 1)) {
    const tag = readTag(text, index, FUNCTION);
    if (tag && toolNames.has(tag.name)) return index;
  }
  return -1;
};

/**
 * .what = the end of a call whose `</function>` (or missing `</function>`) is at `at`, if that end is clean: the text up to
 *         the next call holds no stray `</parameter>`, `</function>` or `</tool_call>`
 * .why = a stray closer after the call means a literal closer inside a value was taken for the real one
 */
const endCall = (context: CallContext, at: number, toolNames: ReadonlySet<string>): number | null => {
  const { text } = context;
  const afterSpace = skipSpace(text, at);
  const end = text.startsWith(CLOSE, afterSpace) ? afterSpace + CLOSE.length : at;
  const next = nextStart(text, end, context.tagged, toolNames);
  const between = text.slice(end, next < 0 ? text.length : next);
  return CLOSERS.some((closer) => between.includes(closer)) ? null : end;
};

/**
 * .what = every `</parameter>` after `from` that may end a value: followed (after whitespace) by `<parameter=` of a
 *         parameter not yet given, by `</function>`, by `</tool_call>`, or by the end of the text
 * .why = when `balanced`, a `<parameter=` opened inside the value pairs with the next `</parameter>` (vLLM's depth rule), so
 *        a literal call inside a value is stepped over whole; a value never runs over a `</parameter><parameter=` of a
 *        parameter already given, nor (unbalanced) over a bare `<parameter=` of one not yet given: that is a repeated
 *        parameter or a missing `</parameter>`, which only the lenient reading reports
 */
/** how values may end: closers paired with inner opens (balanced), or not (unbalanced), or implicitly too (implicit) */
type ReadMode = 'balanced' | 'unbalanced' | 'implicit';

/** where a value ends, and how much markup there is to step over before the rest of the call (0 for an implicit end) */
interface ValueEnd {
  at: number;
  skip: number;
}

const valueEnds = (context: CallContext, from: number, seen: ReadonlySet<string>, mode: ReadMode): ValueEnd[] => {
  if (mode === 'implicit') return implicitValueEnds(context, from, seen);
  const balanced = mode === 'balanced';
  const { text } = context;
  const ends: ValueEnd[] = [];
  let depth = 0;
  let open = text.indexOf(PARAMETER, from);
  for (let index = text.indexOf(PARAMETER_END, from); index >= 0; index = text.indexOf(PARAMETER_END, index + 1)) {
    for (; open >= 0 && open < index; open = text.indexOf(PARAMETER, open + 1)) {
      const tag = readTag(text, open, PARAMETER);
      if (!tag) continue;
      if (!balanced && !seen.has(tag.name)) return ends;
      depth += 1;
    }
    if (balanced && depth > 0) {
      depth -= 1;
      continue;
    }
    const after = skipSpace(text, index + PARAMETER_END.length);
    const tag = readTag(text, after, PARAMETER);
    if (tag && seen.has(tag.name)) return ends;
    if (tag || after === text.length || text.startsWith(FUNCTION_END, after) || text.startsWith(CLOSE, after))
      ends.push({ at: index, skip: PARAMETER_END.length });
  }
  return ends;
};

/** the first of the markers after `from`, and which one it is */
const nextMarker = (text: string, from: number): { at: number; marker: string } | null => {
  let best: { at: number; marker: string } | null = null;
  for (const marker of [PARAMETER, PARAMETER_END, FUNCTION_END]) {
    const at = text.indexOf(marker, from);
    if (at >= 0 && (!best || at < best.at)) best = { at, marker };
  }
  return best;
};

/**
 * .what = where a value may end when its `</parameter>` may be missing: at a `</parameter>` (as in valueEnds), at the
 *         next `<parameter=` of a parameter of the tool not yet given, or at `</function>` (the implicit closes vLLM's
 *         and SGLang's qwen3-coder parsers read), shortest first
 * .why = a model that forgets a `</parameter>` meant the next parameter to start there; only a name the tool has, and
 *        has not had yet, can close a value, and a name it already had is a repeat that no value runs over; a
 *        `<parameter=…>` of a name the tool lacks stays text of the value, and a literal `</parameter>` or `</function>`
 *        in a value still ends it only where the rest of the call reads
 * .note = the end of the text never closes a value: a call cut off inside a value is not run
 */
const implicitValueEnds = (context: CallContext, from: number, seen: ReadonlySet<string>): ValueEnd[] => {
  const { text, known } = context;
  const ends: ValueEnd[] = [];
  for (let found = nextMarker(text, from); found; found = nextMarker(text, found.at + 1)) {
    if (found.marker === FUNCTION_END) {
      ends.push({ at: found.at, skip: 0 });
      continue;
    }
    if (found.marker === PARAMETER) {
      const tag = readTag(text, found.at, PARAMETER);
      if (!tag || !known?.has(tag.name)) continue;
      // the next parameter of the tool closes the value, and nothing after it is this value's text; one already given
      // is a repeat (or a value holding one), which is never merged into a value: no reading past it
      if (!seen.has(tag.name)) ends.push({ at: found.at, skip: 0 });
      return ends;
    }
    const after = skipSpace(text, found.at + PARAMETER_END.length);
    const tag = readTag(text, after, PARAMETER);
    // a parameter already given may not follow: that is a repeated parameter, never read past
    if (tag && seen.has(tag.name)) return ends;
    if (tag || after === text.length || text.startsWith(FUNCTION_END, after) || text.startsWith(CLOSE, after))
      ends.push({ at: found.at, skip: PARAMETER_END.length });
  }
  return ends;
};

/**
 * .what = the complete readings of a function body from `at`, shortest values first (a generator: the caller takes the first)
 * .why = a value ends only where the rest of the call still reads cleanly, so a literal `</parameter>`, `</function>` or
 *        a whole `<tool_call>` block inside a value is kept, not cut
 */
function* readBody(
  context: CallContext,
  at: number,
  seen: ReadonlySet<string>,
  budget: { left: number },
  toolNames: ReadonlySet<string>,
  mode: ReadMode,
): Generator<Reading> {
  budget.left -= 1;
  if (budget.left < 0) return;
  const { text } = context;
  const index = skipSpace(text, at);
  if (index === text.length || text.startsWith(CLOSE, index)) {
    // a missing </function> (and </tool_call>) after a closed parameter: the call is complete
    const end = endCall(context, index, toolNames);
    if (end !== null) yield { params: [], end };
    return;
  }
  if (text.startsWith(FUNCTION_END, index)) {
    const end = endCall(context, index + FUNCTION_END.length, toolNames);
    if (end !== null) yield { params: [], end };
    return;
  }
  const tag = readTag(text, index, PARAMETER);
  if (!tag || seen.has(tag.name)) return;
  const nextSeen = new Set(seen).add(tag.name);
  for (const valueEnd of valueEnds(context, tag.after, nextSeen, mode))
    for (const rest of readBody(context, valueEnd.at + valueEnd.skip, nextSeen, budget, toolNames, mode))
      yield { params: [{ name: tag.name, value: text.slice(tag.after, valueEnd.at) }, ...rest.params], end: rest.end };
}

/**
 * .what = a lenient reading of a body that has no clean reading, naming each problem it met
 * .why = what a model meant can be shown back to it (the partial arguments), but never run on a guess
 */
const readBodyLeniently = (context: CallContext, at: number): Reading & { problems: string[] } => {
  const { text } = context;
  const params: Reading['params'] = [];
  const problems: string[] = [];
  let index = skipSpace(text, at);
  let end = text.length;
  while (index < text.length) {
    if (text.startsWith(FUNCTION_END, index) || text.startsWith(CLOSE, index)) {
      const closeAt = text.startsWith(FUNCTION_END, index) ? skipSpace(text, index + FUNCTION_END.length) : index;
      end = text.startsWith(CLOSE, closeAt) ? closeAt + CLOSE.length : closeAt;
      break;
    }
    const tag = readTag(text, index, PARAMETER);
    if (!tag) {
      problems.push(`unexpected text inside <function=…> at ${quote(text, index)}`);
      break;
    }
    if (params.some((param) => param.name === tag.name)) problems.push(`<parameter=${tag.name}> is given twice`);
    // the first of: a </parameter>, the next <parameter= on a line of its own, a </function>, the end
    const candidates = [
      { at: text.indexOf(PARAMETER_END, tag.after), skip: PARAMETER_END.length, kind: 'closed' },
      { at: text.indexOf(`\n${PARAMETER}`, tag.after), skip: 1, kind: 'next' },
      { at: text.indexOf(FUNCTION_END, tag.after), skip: 0, kind: 'function' },
      { at: text.indexOf(CLOSE, tag.after), skip: 0, kind: 'function' },
    ].filter((candidate) => candidate.at >= 0);
    const first = candidates.sort((a, b) => a.at - b.at)[0] ?? { at: text.length, skip: 0, kind: 'end' };
    params.push({ name: tag.name, value: text.slice(tag.after, first.at) });
    if (first.kind === 'next') problems.push(`<parameter=${tag.name}> is not closed by </parameter> before ${quote(text, first.at + 1)}`);
    else if (first.kind !== 'closed')
      problems.push(`<parameter=${tag.name}> is not closed by </parameter>${first.kind === 'end' ? ' (the text ends inside it)' : ''}`);
    index = skipSpace(text, first.at + first.skip);
  }
  if (!problems.length)
    problems.push(
      `the call's markup does not read one way only: a </parameter>, </function> or </tool_call> stands where no value or call can end, near ${quote(text, end)}`,
    );
  return { params, problems, end };
};

/** .what = the JSON Schema types a parameter admits, looking through anyOf/oneOf, type arrays and enum/const values */
const typesOf = (schema: JsonSchema): string[] => {
  const own = schema.type === undefined ? [] : Array.isArray(schema.type) ? [...(schema.type as string[])] : [schema.type as string];
  const union = [...((schema.anyOf as JsonSchema[] | undefined) ?? []), ...((schema.oneOf as JsonSchema[] | undefined) ?? [])];
  const values = [...((schema.enum as unknown[] | undefined) ?? []), ...('const' in schema ? [schema.const] : [])];
  const fromValues = values.map((value) => (value === null ? 'null' : Array.isArray(value) ? 'array' : typeof value));
  return [...new Set([...own, ...union.flatMap(typesOf), ...fromValues])];
};

/**
 * .what = a parameter's text as the type its schema declares (qwen3-coder's xml sends every value as text)
 * .why = the first declared type the text reads as wins, so anyOf/oneOf/nullable parameters get real values; text that
 *        fits no declared type stays text and the schema check tells the model what was expected
 */
export const coerceParameter = (text: string, schema: JsonSchema | undefined): unknown => {
  if (!schema) return text;
  const types = typesOf(schema);
  if (!types.length) return text;
  const trimmed = text.trim();
  if (types.includes('null') && /^(null|none)$/i.test(trimmed)) return null;
  for (const type of types) {
    if (type === 'string') return text;
    if (type === 'integer' && /^[-+]?\d+$/.test(trimmed)) return Number(trimmed);
    if (type === 'number' && /^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(trimmed)) return Number(trimmed);
    if (type === 'boolean' && /^(true|false)$/i.test(trimmed)) return trimmed.toLowerCase() === 'true';
    if (type === 'object' || type === 'array')
      try {
        const parsed: unknown = JSON.parse(trimmed);
        if (type === 'array' ? Array.isArray(parsed) : typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed))
          return parsed;
      } catch {
        // not JSON: the next declared type may fit
      }
  }
  return text;
};

/** one value's text as vLLM reads it: exactly one leading and one trailing newline are the template's, not the value's */
const trimTemplateNewlines = (value: string): string => {
  const start = value.startsWith('\n') ? 1 : 0;
  const end = value.endsWith('\n') && value.length > start ? value.length - 1 : value.length;
  return value.slice(start, end);
};

/** .what = the first reading with implicit closes in which every parameter is one of the tool's, if there is one */
const readImplicitly = (
  context: CallContext,
  at: number,
  budget: { left: number },
  toolNames: ReadonlySet<string>,
): Reading | undefined => {
  for (const reading of readBody(context, at, new Set(), budget, toolNames, 'implicit'))
    if (reading.params.every((param) => context.known!.has(param.name))) return reading;
  return undefined;
};

/** .what = one qwen3-coder xml call from its `<function=` at `at`: the call and where it ends, or null when it is not a call */
const readXmlCall = (
  text: string,
  at: number,
  tagged: boolean,
  tools: readonly BrainToolDefinition[],
  toolNames: ReadonlySet<string>,
): { call: RecoveredToolCall; end: number } | null => {
  const tag = readTag(text, at, FUNCTION);
  if (!tag) return null;
  const tool = tools.find((candidate) => candidate.name === tag.name);
  const properties = tool?.inputSchema.properties;
  const context: CallContext = { text, tagged, known: properties ? new Set(Object.keys(properties)) : undefined };
  const budget = { left: MAX_READINGS };
  // the first clean reading wins: values as short as the rest of the call allows (vLLM's first structural close);
  // pairing <parameter= opens inside values first, then without, for a value holding an unpaired literal <parameter=
  // last, and only for a tool whose parameters are known and whose calls change nothing (effect read): values whose
  // </parameter> is missing, closed by the next parameter of the tool or by </function> (vLLM's and SGLang's implicit
  // close); a reading that names anything else is not taken, and a tool that writes, runs or is unknown gets no implicit
  // close (a value cut where the markup was only text of it would write or run on a guess), so what is left unread is
  // reported, never guessed
  const reading: Reading | undefined =
    readBody(context, tag.after, new Set(), budget, toolNames, 'balanced').next().value ||
    readBody(context, tag.after, new Set(), budget, toolNames, 'unbalanced').next().value ||
    (context.known && tool?.effect === 'read' ? readImplicitly(context, tag.after, budget, toolNames) : undefined);
  const toValue = (params: Reading['params']): Record<string, unknown> =>
    Object.fromEntries(params.map((param) => [param.name, coerceParameter(trimTemplateNewlines(param.value), properties?.[param.name])]));
  if (reading) {
    const unknown = properties
      ? reading.params.filter((param) => !(param.name in properties)).map((param) => `<parameter=${param.name}>`)
      : [];
    const value = toValue(reading.params);
    if (!unknown.length) return { call: { name: tag.name, value }, end: reading.end };
    const problem = `${unknown.join(', ')} is not a parameter of ${tag.name} (its parameters: ${Object.keys(properties ?? {}).join(', ')}); if it is text of another value, that value's </parameter> came too early`;
    return { call: { name: tag.name, value: new UnreadToolInput(value, problem) }, end: reading.end };
  }
  const lenient = readBodyLeniently(context, tag.after);
  const problems =
    budget.left < 0 ? [`the call has too many literal closing tags to read it one way only`, ...lenient.problems] : lenient.problems;
  return { call: { name: tag.name, value: new UnreadToolInput(toValue(lenient.params), problems.join('; ')) }, end: lenient.end };
};

/** .what = one hermes-style json call `{"name": …, "arguments": …}` from `at` (inside a <tool_call>), or null when it is not one */
const readJsonCall = (text: string, at: number): { call: RecoveredToolCall; end: number } | null => {
  // the body ends at the first </tool_call> before which it parses as json (a literal </tool_call> may sit in a string)
  for (let close = text.indexOf(CLOSE, at); ; close = text.indexOf(CLOSE, close + 1)) {
    const bodyEnd = close < 0 ? text.length : close;
    try {
      const json = JSON.parse(text.slice(at, bodyEnd)) as { name?: unknown; arguments?: unknown; parameters?: unknown };
      if (typeof json !== 'object' || json === null || typeof json.name !== 'string') return null;
      const args = json.arguments ?? json.parameters ?? {};
      const end = close < 0 ? text.length : close + CLOSE.length;
      return { call: typeof args === 'string' ? { name: json.name, raw: args } : { name: json.name, value: args }, end };
    } catch {
      if (close < 0) break;
    }
  }
  // no reading parses: the raw text goes to the arguments check, which tells the model it is not valid json
  const close = text.indexOf(CLOSE, at);
  const body = text.slice(at, close < 0 ? text.length : close);
  const name = /"name"\s*:\s*"([^"]+)"/.exec(body)?.[1];
  return name ? { call: { name, raw: body }, end: close < 0 ? text.length : close + CLOSE.length } : null;
};

/**
 * .what = recovers tool calls that a qwen server without a tool parser returned as text: qwen3-coder xml
 *         (`<tool_call><function=x><parameter=k>v</parameter></function></tool_call>`, also without the `<tool_call>`
 *         opener) and hermes json (`<tool_call>{"name","arguments"}</tool_call>`)
 * .why = without this, such a model's calls would be shown to the user as text and never run; a value ends only where the
 *        rest of the call still reads, values are typed by the tool's schema, and a call that cannot be read one way only
 *        comes back with an UnreadToolInput, so the model is told and retries instead of a tool running on a guess
 */
export const recoverToolCallText = (
  text: string,
  tools: readonly BrainToolDefinition[],
): { text: string; toolCalls: RecoveredToolCall[] } => {
  const tagged = text.includes(OPEN);
  const toolNames = new Set(tools.map((tool) => tool.name));
  if (!tagged && nextStart(text, 0, false, toolNames) < 0) return { text, toolCalls: [] };
  const answer: string[] = [];
  const toolCalls: RecoveredToolCall[] = [];
  let position = 0;
  while (position < text.length) {
    const start = nextStart(text, position, tagged, toolNames);
    if (start < 0) break;
    answer.push(text.slice(position, start));
    const bodyAt = tagged ? skipSpace(text, start + OPEN.length) : start;
    const read = text.startsWith(FUNCTION, bodyAt)
      ? readXmlCall(text, bodyAt, tagged, tools, toolNames)
      : text[bodyAt] === '{'
        ? readJsonCall(text, bodyAt)
        : null;
    if (!read) {
      // not a call after all: the opener stays answer text
      const skip = tagged ? OPEN.length : FUNCTION.length;
      answer.push(text.slice(start, start + skip));
      position = start + skip;
      continue;
    }
    toolCalls.push(read.call);
    position = read.end;
  }
  answer.push(text.slice(position));
  return { text: answer.join('').trim(), toolCalls };
};
