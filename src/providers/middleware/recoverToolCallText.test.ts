import { describe, expect, it } from 'vitest';

import type { BrainToolDefinition } from '../../core/contract/BrainMessage.js';
import { checkToolInput, UnreadToolInput } from '../readToolArguments.js';
import { recoverToolCallText } from './recoverToolCallText.js';

const tools: BrainToolDefinition[] = [
  {
    name: 'get_current_weather',
    description: 'weather',
    inputSchema: {
      type: 'object',
      properties: { city: { type: 'string' }, state: { type: 'string' }, unit: { type: 'string', enum: ['fahrenheit', 'celsius'] } },
      required: ['city', 'state'],
    },
  },
  {
    name: 'calculate_area',
    description: 'area',
    inputSchema: {
      type: 'object',
      properties: { shape: { type: 'string' }, dimensions: { type: 'object' }, precision: { type: 'integer' } },
    },
  },
  {
    name: 'test_types',
    description: 'types',
    inputSchema: {
      type: 'object',
      properties: {
        int_param: { type: 'integer' },
        float_param: { type: 'number' },
        bool_param: { type: 'boolean' },
        str_param: { type: 'string' },
        obj_param: { type: 'object' },
        arr_param: { type: 'array' },
        any_param: { anyOf: [{ type: 'integer' }, { type: 'null' }] },
        one_param: { oneOf: [{ type: 'boolean' }, { type: 'array' }] },
        nullable_str: { type: ['string', 'null'] },
        num_or_str: { anyOf: [{ type: 'number' }, { type: 'string' }] },
        enum_num: { enum: [1, 2, 3] },
      },
    },
  },
  {
    name: 'write',
    description: 'write a file',
    inputSchema: {
      type: 'object',
      properties: { path: { type: 'string' }, content: { type: 'string' } },
      required: ['path', 'content'],
      additionalProperties: false,
    },
  },
];

/** a qwen3-coder call as the chat template renders it: each value on its own lines */
const xmlCall = (name: string, params: Record<string, string>): string =>
  `<tool_call>\n<function=${name}>\n${Object.entries(params)
    .map(([key, value]) => `<parameter=${key}>\n${value}\n</parameter>\n`)
    .join('')}</function>\n</tool_call>`;

const valueOf = (call: { value?: unknown; raw?: string } | undefined): unknown => (call && 'value' in call ? call.value : undefined);
const problemOf = (call: { name: string; value?: unknown } | undefined): string | undefined => {
  const value = valueOf(call);
  return value instanceof UnreadToolInput ? value.problem : undefined;
};

const EMBEDDED = [
  'a parameter ends with </parameter>',
  'a function ends with </function>',
  '<tool_call>',
  '<function=write>',
  '<parameter=path>',
  'inner.txt',
  '</parameter>',
  '</function>',
  '</tool_call>',
  'done',
].join('\n');

describe('recoverToolCallText (vLLM test_qwen3_xml_coder_shared: basic extraction)', () => {
  it('no_tools — text without calls is the answer, untouched', () => {
    const text = 'This is a test response without any tool calls';
    expect(recoverToolCallText(text, tools)).toEqual({ text, toolCalls: [] });
  });

  it('single_tool — one call, values stripped of the template newlines', () => {
    const result = recoverToolCallText(xmlCall('get_current_weather', { city: 'Dallas', state: 'TX', unit: 'fahrenheit' }), tools);
    expect(result.text).toBe('');
    expect(result.toolCalls).toEqual([{ name: 'get_current_weather', value: { city: 'Dallas', state: 'TX', unit: 'fahrenheit' } }]);
  });

  it('single_tool_with_content — text before the first call stays the answer text', () => {
    const text = `Sure! Let me check the weather for you.${xmlCall('get_current_weather', { city: 'Dallas', state: 'TX' })}`;
    const result = recoverToolCallText(text, tools);
    expect(result.text).toBe('Sure! Let me check the weather for you.');
    expect(result.toolCalls).toHaveLength(1);
  });

  it('single_tool_multiline_param — an object parameter spread over lines is JSON-parsed', () => {
    const text = xmlCall('calculate_area', { shape: 'rectangle', dimensions: '{"width": 10,\n "height": 20}', precision: '2' });
    expect(valueOf(recoverToolCallText(text, tools).toolCalls[0])).toEqual({
      shape: 'rectangle',
      dimensions: { width: 10, height: 20 },
      precision: 2,
    });
  });

  it('parallel_tools — two calls in a row are two calls', () => {
    const text = `${xmlCall('get_current_weather', { city: 'Dallas', state: 'TX' })}\n${xmlCall('get_current_weather', { city: 'Orlando', state: 'FL' })}`;
    const result = recoverToolCallText(text, tools);
    expect(result.toolCalls.map(valueOf)).toEqual([
      { city: 'Dallas', state: 'TX' },
      { city: 'Orlando', state: 'FL' },
    ]);
    expect(result.text).toBe('');
  });

  it('SGLang test_qwen_coder_multiple_sequential_tools — text, then two calls without blank lines', () => {
    const text =
      'Let me help you with that.\n<tool_call>\n<function=get_current_weather>\n<parameter=city>Beijing</parameter>\n<parameter=state>BJ</parameter>\n</function>\n</tool_call>\n<tool_call>\n<function=calculate_area>\n<parameter=shape>circle</parameter>\n</function>\n</tool_call>';
    const result = recoverToolCallText(text, tools);
    expect(result.text).toBe('Let me help you with that.');
    expect(result.toolCalls).toEqual([
      { name: 'get_current_weather', value: { city: 'Beijing', state: 'BJ' } },
      { name: 'calculate_area', value: { shape: 'circle' } },
    ]);
  });

  it('fallback_no_tags — a call without the <tool_call> opener is still a call (vLLM handles both)', () => {
    const text =
      'Checking.\n<function=get_current_weather>\n<parameter=city>\nDallas\n</parameter>\n<parameter=state>\nTX\n</parameter>\n</function>';
    const result = recoverToolCallText(text, tools);
    expect(result.toolCalls).toEqual([{ name: 'get_current_weather', value: { city: 'Dallas', state: 'TX' } }]);
    expect(result.text).toBe('Checking.');
  });

  it('without the opener, a <function= of a tool that does not exist stays prose', () => {
    const text = 'the format is <function=name> followed by parameters';
    expect(recoverToolCallText(text, tools)).toEqual({ text, toolCalls: [] });
  });

  it('vLLM _is_valid_function_name — an unrendered template name like {{ tc.name }} is not a call', () => {
    const text = '<tool_call>\n<function={{ tc.name }}>\n</function>\n</tool_call>';
    const result = recoverToolCallText(text, tools);
    expect(result.toolCalls).toEqual([]);
    expect(result.text).toBe(text);
  });
});

describe('recoverToolCallText (values that hold markup)', () => {
  it('a value holding a literal </parameter> followed by prose is kept exactly', () => {
    const content = 'x = "</parameter>" # a string\nmore';
    const result = recoverToolCallText(xmlCall('write', { path: 'a.py', content }), tools);
    expect(valueOf(result.toolCalls[0])).toEqual({ path: 'a.py', content });
  });

  it('a value holding a literal </function> is kept exactly (vLLM _find_true_function_end)', () => {
    const content = 'close with </function>\nthen </tool_call> too';
    expect(valueOf(recoverToolCallText(xmlCall('write', { path: 'a', content }), tools).toolCalls[0])).toEqual({ path: 'a', content });
  });

  it('a value holding a whole <tool_call> block is kept exactly (vLLM _scan_to_structural_function_end)', () => {
    const result = recoverToolCallText(xmlCall('write', { path: 'notes.md', content: EMBEDDED }), tools);
    expect(result.toolCalls).toEqual([{ name: 'write', value: { path: 'notes.md', content: EMBEDDED } }]);
    expect(result.text).toBe('');
  });

  it('a value ending with a whole <tool_call> block is kept exactly', () => {
    const content = '<tool_call>\n<function=write>\n<parameter=path>\ninner\n</parameter>\n</function>\n</tool_call>';
    const result = recoverToolCallText(xmlCall('write', { path: 'p', content }), tools);
    expect(result.toolCalls).toEqual([{ name: 'write', value: { path: 'p', content } }]);
  });

  it('a </parameter> then <parameter=x> of a name the tool lacks is reported, whichever was meant', () => {
    const content = 'see </parameter>\n<parameter=other>\nstill content';
    const [call] = recoverToolCallText(xmlCall('write', { path: 'p', content }), tools).toolCalls;
    expect(problemOf(call)).toMatch(/<parameter=other> is not a parameter of write \(its parameters: path, content\)/);
  });

  it('a call holding a literal block is followed by a second real call, both read', () => {
    const text = `${xmlCall('write', { path: 'a', content: EMBEDDED })}\n${xmlCall('write', { path: 'b', content: 'B' })}`;
    expect(recoverToolCallText(text, tools).toolCalls.map(valueOf)).toEqual([
      { path: 'a', content: EMBEDDED },
      { path: 'b', content: 'B' },
    ]);
  });

  it('a literal close of a whole call ends the call, as in vLLM; the rest is read as the next call, not dropped', () => {
    const content = 'a\n</parameter>\n</function>\n</tool_call>\n<tool_call>\n<function=write>\n<parameter=content>\nb';
    const result = recoverToolCallText(xmlCall('write', { path: 'p', content }), tools);
    expect(result.toolCalls.map(valueOf)).toEqual([{ path: 'p', content: 'a' }, { content: 'b' }]);
    // the second call lacks path, so the schema check sends it back to the model
    expect(checkToolInput({ value: valueOf(result.toolCalls[1]), name: 'write', tools }).inputError).toMatch(/input\.path is required/);
  });

  it('a value holding a balanced literal <parameter=k>…</parameter> of a known name is stepped over (vLLM depth rule)', () => {
    const content = 'before\n<parameter=path>\nx\n</parameter>\nafter';
    expect(valueOf(recoverToolCallText(xmlCall('write', { content, path: 'p' }), tools).toolCalls[0])).toEqual({ content, path: 'p' });
  });
});

describe('recoverToolCallText (missing closers)', () => {
  it('a missing </parameter> does not merge two parameters silently: the call gets an inputError', () => {
    const text =
      '<tool_call>\n<function=write>\n<parameter=path>\na.txt\n<parameter=content>\nhello\n</parameter>\n</function>\n</tool_call>';
    const [call] = recoverToolCallText(text, tools).toolCalls;
    expect(problemOf(call)).toMatch(/<parameter=path> is not closed by <\/parameter> before "<parameter=content>/);
    // the parameters are still told apart, as vLLM does, so the model sees what was read
    expect((valueOf(call) as UnreadToolInput).partial).toEqual({ path: 'a.txt', content: 'hello' });
    expect(checkToolInput({ value: valueOf(call), name: 'write', tools }).inputError).toMatch(
      /could not be read exactly: <parameter=path> is not closed/,
    );
  });

  it('a missing </function> before </tool_call> is recovered (SGLang and vLLM accept it)', () => {
    const text =
      '<tool_call>\n<function=get_current_weather>\n<parameter=city>\nDallas\n</parameter>\n<parameter=state>\nTX\n</parameter>\n</tool_call>';
    expect(recoverToolCallText(text, tools).toolCalls).toEqual([{ name: 'get_current_weather', value: { city: 'Dallas', state: 'TX' } }]);
  });

  it('a missing </tool_call> at the end of the text is recovered (vLLM `<tool_call>(.*?)$`)', () => {
    const text =
      'ok <tool_call>\n<function=get_current_weather>\n<parameter=city>\nDallas\n</parameter>\n<parameter=state>\nTX\n</parameter>\n</function>';
    const result = recoverToolCallText(text, tools);
    expect(result.toolCalls).toEqual([{ name: 'get_current_weather', value: { city: 'Dallas', state: 'TX' } }]);
    expect(result.text).toBe('ok');
  });

  it('missing </function> and </tool_call> both, at the end of the text, is recovered', () => {
    const text =
      '<tool_call>\n<function=get_current_weather>\n<parameter=city>\nDallas\n</parameter>\n<parameter=state>\nTX\n</parameter>\n';
    expect(valueOf(recoverToolCallText(text, tools).toolCalls[0])).toEqual({ city: 'Dallas', state: 'TX' });
  });

  it('text that ends inside a parameter (a cut-off call) is not run: the call says where it ends', () => {
    const text = '<tool_call>\n<function=write>\n<parameter=path>\na.txt\n</parameter>\n<parameter=content>\nline one\nline tw';
    const [call] = recoverToolCallText(text, tools).toolCalls;
    expect(problemOf(call)).toMatch(/<parameter=content> is not closed by <\/parameter> \(the text ends inside it\)/);
  });

  it('a missing </parameter> before </function> is reported, not guessed', () => {
    const text = '<tool_call>\n<function=write>\n<parameter=path>\na\n</parameter>\n<parameter=content>\nhello\n</function>\n</tool_call>';
    const [call] = recoverToolCallText(text, tools).toolCalls;
    expect(problemOf(call)).toMatch(/<parameter=content> is not closed by <\/parameter>/);
    expect((valueOf(call) as UnreadToolInput).partial).toEqual({ path: 'a', content: 'hello' });
  });

  it('a parameter given twice is reported, never merged or overwritten silently', () => {
    const text =
      '<tool_call>\n<function=write>\n<parameter=path>\na\n</parameter>\n<parameter=path>\nb\n</parameter>\n<parameter=content>\nc\n</parameter>\n</function>\n</tool_call>';
    expect(problemOf(recoverToolCallText(text, tools).toolCalls[0])).toMatch(/<parameter=path> is given twice/);
  });

  it('stray text inside a function body is quoted in the problem', () => {
    const text = '<tool_call>\n<function=write>\noops here\n<parameter=path>\na\n</parameter>\n</function>\n</tool_call>';
    expect(problemOf(recoverToolCallText(text, tools).toolCalls[0])).toMatch(/unexpected text inside <function=…> at "oops here/);
  });
});

describe('recoverToolCallText (values typed by the schema, vLLM _convert_param_value)', () => {
  const typed = (params: Record<string, string>) => valueOf(recoverToolCallText(xmlCall('test_types', params), tools).toolCalls[0]);

  it('type_conversion — integer, number, boolean, string and object by the schema', () => {
    expect(
      typed({ int_param: '42', float_param: '3.14', bool_param: 'true', str_param: 'hello world', obj_param: '{"key": "value"}' }),
    ).toEqual({ int_param: 42, float_param: 3.14, bool_param: true, str_param: 'hello world', obj_param: { key: 'value' } });
  });

  it('an array parameter is JSON-parsed', () => {
    expect(typed({ arr_param: '[1, "two", {"three": 3}]' })).toEqual({ arr_param: [1, 'two', { three: 3 }] });
  });

  it('anyOf [integer, null] — a number becomes a number and "null"/"None" become null', () => {
    expect(typed({ any_param: '7' })).toEqual({ any_param: 7 });
    expect(typed({ any_param: 'null' })).toEqual({ any_param: null });
    expect(typed({ any_param: 'None' })).toEqual({ any_param: null });
  });

  it('oneOf [boolean, array] — each choice is tried in order', () => {
    expect(typed({ one_param: 'False' })).toEqual({ one_param: false });
    expect(typed({ one_param: '["a"]' })).toEqual({ one_param: ['a'] });
  });

  it('nullable ["string","null"] — "null" is null, other text stays text', () => {
    expect(typed({ nullable_str: 'null' })).toEqual({ nullable_str: null });
    expect(typed({ nullable_str: '42' })).toEqual({ nullable_str: '42' });
  });

  it('a string parameter keeps "null", "true" and digits as text (string takes precedence)', () => {
    expect(typed({ str_param: 'null' })).toEqual({ str_param: 'null' });
    expect(typed({ str_param: '007' })).toEqual({ str_param: '007' });
  });

  it('anyOf [number, string] — a number when it reads as one, text otherwise', () => {
    expect(typed({ num_or_str: '2.5' })).toEqual({ num_or_str: 2.5 });
    expect(typed({ num_or_str: 'about 2' })).toEqual({ num_or_str: 'about 2' });
    expect(typed({ num_or_str: '0x10' })).toEqual({ num_or_str: '0x10' });
  });

  it('an enum of numbers types the value by its members', () => {
    expect(typed({ enum_num: '2' })).toEqual({ enum_num: 2 });
  });

  it('text that fits no declared type stays text, and the schema check tells the model (never a silent false)', () => {
    const value = typed({ bool_param: 'yes', int_param: '4.5' });
    expect(value).toEqual({ bool_param: 'yes', int_param: '4.5' });
    expect(checkToolInput({ value, name: 'test_types', tools }).inputError).toMatch(
      /input\.int_param must be integer, got string; input\.bool_param must be boolean, got string/,
    );
  });

  it('a parameter the schema does not declare is its own parameter, and the call says it is unknown', () => {
    const [call] = recoverToolCallText(xmlCall('write', { path: 'a', content: 'b', mode: '644' }), tools).toolCalls;
    expect((valueOf(call) as UnreadToolInput).partial).toEqual({ path: 'a', content: 'b', mode: '644' });
    expect(checkToolInput({ value: valueOf(call), name: 'write', tools }).inputError).toMatch(
      /<parameter=mode> is not a parameter of write/,
    );
  });

  it('exactly one leading and one trailing newline are stripped, the rest is kept', () => {
    const text =
      '<tool_call>\n<function=write>\n<parameter=path>\na\n</parameter>\n<parameter=content>\n\n  indented\n\n</parameter>\n</function>\n</tool_call>';
    expect(valueOf(recoverToolCallText(text, tools).toolCalls[0])).toEqual({ path: 'a', content: '\n  indented\n' });
  });

  it('SGLang inline values (no newlines) are read as they are', () => {
    const text =
      '<tool_call><function=calculate_area><parameter=shape>square</parameter><parameter=dimensions>{"side": 2}</parameter></function></tool_call>';
    expect(valueOf(recoverToolCallText(text, tools).toolCalls[0])).toEqual({ shape: 'square', dimensions: { side: 2 } });
  });

  it('a call of an unknown tool is still a call (the loop answers with the tools that exist), values as text', () => {
    const result = recoverToolCallText(xmlCall('lookup', { q: '1' }), tools);
    expect(result.toolCalls).toEqual([{ name: 'lookup', value: { q: '1' } }]);
  });
});

describe('recoverToolCallText (hermes json in <tool_call>, kept)', () => {
  it('{"name","arguments"} inside <tool_call> is a call', () => {
    const text = 'Let me look.\n<tool_call>\n{"name": "get_current_weather", "arguments": {"city": "Dallas", "state": "TX"}}\n</tool_call>';
    const result = recoverToolCallText(text, tools);
    expect(result).toEqual({
      text: 'Let me look.',
      toolCalls: [{ name: 'get_current_weather', value: { city: 'Dallas', state: 'TX' } }],
    });
  });

  it('a json string value holding a literal </tool_call> is kept', () => {
    const text = '<tool_call>\n{"name": "write", "arguments": {"path": "a", "content": "x </tool_call> y"}}\n</tool_call>';
    expect(valueOf(recoverToolCallText(text, tools).toolCalls[0])).toEqual({ path: 'a', content: 'x </tool_call> y' });
  });

  it('string-encoded arguments stay raw, for the json check', () => {
    const text = '<tool_call>{"name": "write", "arguments": "{\\"path\\": \\"a\\"}"}</tool_call>';
    expect(recoverToolCallText(text, tools).toolCalls).toEqual([{ name: 'write', raw: '{"path": "a"}' }]);
  });

  it('json that does not parse but names a tool goes to the arguments check as raw text', () => {
    const text = '<tool_call>{"name": "write", "arguments": {"path": </tool_call>';
    expect(recoverToolCallText(text, tools).toolCalls).toEqual([{ name: 'write', raw: '{"name": "write", "arguments": {"path": ' }]);
  });

  it('a <tool_call> with neither xml nor json stays answer text', () => {
    const text = 'I would use <tool_call> here';
    expect(recoverToolCallText(text, tools)).toEqual({ text, toolCalls: [] });
  });
});

/** a tool of the reference suites, by its name and JSON Schema properties; it reads (their tools all do) unless told */
const refTool = (
  name: string,
  properties: Record<string, unknown>,
  required: string[] = [],
  effect: BrainToolDefinition['effect'] | null = 'read',
): BrainToolDefinition => ({
  name,
  description: name,
  inputSchema: { type: 'object', properties: properties as never, required },
  ...(effect ? { effect } : {}),
});

/** the vLLM suite's weather tool, which reads */
const weatherTool = refTool(
  'get_current_weather',
  { city: { type: 'string' }, state: { type: 'string' }, unit: { type: 'string', enum: ['fahrenheit', 'celsius'] } },
  ['city', 'state'],
);

/** a reading tool with two string parameters, for the hostile cases */
const grepTool = refTool('grep', { pattern: { type: 'string' }, path: { type: 'string' } }, ['pattern']);

describe('recoverToolCallText (implicit closes, as the reference parsers read them)', () => {
  it('qwen3: vLLM test_extract_tool_calls_missing_closing_parameter_tag — <parameter=city> closed by the next <parameter=', () => {
    // vllm-project/vllm tests/tool_parsers/test_qwen3coder_tool_parser.py @ c8e462c487ef33d25414e838b308e6f76bb01286
    const text = `Let me check the weather for you:
<tool_call>
<function=get_current_weather>
<parameter=city>
Dallas
<parameter=state>
TX
</parameter>
<parameter=unit>
fahrenheit
</parameter>
</function>
</tool_call>`;
    const result = recoverToolCallText(text, [weatherTool]);
    expect(result.toolCalls).toEqual([{ name: 'get_current_weather', value: { city: 'Dallas', state: 'TX', unit: 'fahrenheit' } }]);
    expect(result.text).toBe('Let me check the weather for you:');
  });

  it('qwen3: SGLang implicit_parameter_close — every value closed by the next <parameter= and the last by </function>, typed by the schema', () => {
    // sgl-project/sglang test/registered/function_call/test_qwen3_coder_detector/test_cases.py @
    // 2c5fa03198d0630444a1bfe74b4eaae310173eee; the tool: test_fixtures.py @ 4e563f39802721177a146f26e266a7bca60ddcb5
    const weather = refTool(
      'get_current_weather',
      { location: { type: 'string' }, unit: { type: 'string', enum: ['celsius', 'fahrenheit'] }, days: { type: 'integer' } },
      ['location'],
    );
    const text = `Text prefix + implicit parameter close test

<function=get_current_weather>
<parameter=location>Paris
<parameter=unit>celsius
<parameter=days>3
</function>`;
    const result = recoverToolCallText(text, [weather]);
    expect(result.toolCalls).toEqual([{ name: 'get_current_weather', value: { location: 'Paris', unit: 'celsius', days: 3 } }]);
    expect(result.text).toBe('Text prefix + implicit parameter close test');
    expect(
      checkToolInput({ value: valueOf(result.toolCalls[0]), name: 'get_current_weather', tools: [weather] }).inputError,
    ).toBeUndefined();
  });

  it('qwen3: SGLang test_long_whitespace_run_in_unclosed_value_parses_in_linear_time — an unclosed value of 100,000 spaces is kept whole, fast', () => {
    // sgl-project/sglang test/registered/unit/function_call/test_qwen3_coder_detector.py @ 0bbe61a61a1964be3758c1672c5522aa3aafdd6b
    const weather = refTool('get_weather', { city: { type: 'string' }, days: { type: 'integer' } }, ['city']);
    const value = `a${' '.repeat(100_000)}b`;
    const text = `<tool_call>\n<function=get_weather>\n<parameter=city>\n${value}\n<parameter=days>\n3\n</parameter>\n</function>\n</tool_call>`;
    const started = performance.now();
    const result = recoverToolCallText(text, [weather]);
    expect(performance.now() - started).toBeLessThan(2_000);
    expect(result.toolCalls).toEqual([{ name: 'get_weather', value: { city: value, days: 3 } }]);
  });

  it('qwen3: tool and parameter names are trimmed (" read_file ", SGLang test_names_are_stripped: "<parameter= n >")', () => {
    // the name as a model sent it (" read_file "); SGLang's Qwen3CoderDetector test test_names_are_stripped reads
    // "<function= f\n>" and "<parameter= n >" the same (the index gave its text, not its file path or commit)
    const read = refTool('read_file', { path: { type: 'string' } }, ['path']);
    const text = '<tool_call>\n<function= read_file >\n<parameter= path >\nsrc/a.ts\n</parameter>\n</function>\n</tool_call>';
    expect(recoverToolCallText(text, [read]).toolCalls).toEqual([{ name: 'read_file', value: { path: 'src/a.ts' } }]);
    // without the <tool_call> opener too, the trimmed name is what makes it a known tool's call
    expect(
      recoverToolCallText('Reading.\n<function=\tread_file\n>\n<parameter=path>\nb\n</parameter>\n</function>', [read]).toolCalls,
    ).toEqual([{ name: 'read_file', value: { path: 'b' } }]);
    // a name with whitespace inside it is still no name: prose, not a call
    expect(recoverToolCallText('<function=read file>\n<parameter=path>\nb\n</parameter>\n</function>', [read]).toolCalls).toEqual([]);
  });

  it('qwen3 (hostile): text that only looks like a parameter, naming none of the tool parameters, stays inside the value; one naming a parameter already given is never merged in', () => {
    const text =
      '<tool_call>\n<function=grep>\n<parameter=pattern>\nuse <parameter=mode> here\n<parameter=path>\np\n</parameter>\n</function>\n</tool_call>';
    expect(valueOf(recoverToolCallText(text, [grepTool]).toolCalls[0])).toEqual({ pattern: 'use <parameter=mode> here', path: 'p' });
    // path given first, then a <parameter=path> in an unclosed pattern: a repeat or a literal, it cannot be told, so
    // the model is told (an input error), never a merged or dropped value
    const given =
      '<tool_call>\n<function=grep>\n<parameter=path>\np\n</parameter>\n<parameter=pattern>\nsee <parameter=path>\nx\n</function>\n</tool_call>';
    expect(problemOf(recoverToolCallText(given, [grepTool]).toolCalls[0])).toMatch(/<parameter=pattern> is not closed by <\/parameter>/);
  });

  it('qwen3 (hostile): a value holding a literal </parameter> and no closer of its own is kept exact up to </function>', () => {
    const text =
      '<tool_call>\n<function=grep>\n<parameter=path>\np\n</parameter>\n<parameter=pattern>\nx = "</parameter>" # kept\n</function>\n</tool_call>';
    expect(valueOf(recoverToolCallText(text, [grepTool]).toolCalls[0])).toEqual({ path: 'p', pattern: 'x = "</parameter>" # kept' });
  });

  it('qwen3 (hostile): a tool that writes, runs or whose effect is unknown gets no implicit close: the same shape is an input error, so nothing is written or run on a guess', () => {
    const text = (name: string) =>
      `<tool_call>\n<function=${name}>\n<parameter=pattern>\na.txt\n<parameter=path>\nhello\n</parameter>\n</function>\n</tool_call>`;
    expect(valueOf(recoverToolCallText(text('grep'), [grepTool]).toolCalls[0])).toEqual({ pattern: 'a.txt', path: 'hello' });
    for (const effect of ['write', 'exec', 'network', 'delegate', null] as const) {
      const tool = refTool('look', { pattern: { type: 'string' }, path: { type: 'string' } }, [], effect);
      expect(problemOf(recoverToolCallText(text('look'), [tool]).toolCalls[0]), String(effect)).toMatch(
        /<parameter=pattern> is not closed by <\/parameter> before "<parameter=path>/,
      );
    }
  });

  it('qwen3 (hostile): what stays ambiguous is still an input error — a tool whose parameters are unknown, a cut-off value', () => {
    // an unknown tool: which names are parameters cannot be known, so nothing closes a value implicitly
    const unknown = '<tool_call>\n<function=lookup>\n<parameter=q>\n1\n<parameter=limit>\n2\n</parameter>\n</function>\n</tool_call>';
    expect(problemOf(recoverToolCallText(unknown, [grepTool]).toolCalls[0])).toMatch(/<parameter=q> is not closed by <\/parameter>/);
    const cut = '<tool_call>\n<function=grep>\n<parameter=path>\na\n<parameter=pattern>\nline one\nline tw';
    expect(problemOf(recoverToolCallText(cut, [grepTool]).toolCalls[0])).toMatch(/the text ends inside it/);
  });
});
