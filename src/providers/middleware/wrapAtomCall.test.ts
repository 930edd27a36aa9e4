import { describe, expect, it } from 'vitest';

import type { AtomCall, AtomCallInput } from '../genAtom.js';
import { wrapAtomCall, type AtomMiddleware } from './wrapAtomCall.js';

const input: AtomCallInput = {
  auth: { kind: 'apiKey', value: 'k', from: 'test' },
  baseURL: 'http://127.0.0.1:9/v1',
  request: { messages: [{ role: 'user', content: 'hi' }] },
  maxOutputTokens: 10,
  timeoutMs: 1_000,
  idleMs: 1_000,
};

/** a middleware that writes down when it sees the input and the result, and tags both */
const tracing = (name: string, trace: string[]): AtomMiddleware => ({
  name,
  transformInput: (callInput) => {
    trace.push(`${name}: input`);
    return { ...callInput, extraBody: { ...callInput.extraBody, [name]: true } };
  },
  wrapCall: async ({ input: callInput, doCall }) => {
    trace.push(`${name}: call`);
    const raw = await doCall(callInput);
    trace.push(`${name}: result`);
    return { ...raw, text: `${raw.text}+${name}` };
  },
});

describe('middleware: wrapAtomCall layers a model entry quirks around its provider call (vercel/ai wrapLanguageModel)', () => {
  it('given two middlewares, then the first sees the input first and the result last, and the call gets both inputs changes', async () => {
    const trace: string[] = [];
    let seen: AtomCallInput | null = null;
    const call: AtomCall = async (callInput) => {
      seen = callInput;
      trace.push('provider');
      return { text: 'answer', toolCalls: [], stopReason: 'end', tokens: { input: 1, output: 1, cache: { get: 0, set: 0 } } };
    };
    const raw = await wrapAtomCall({ call, middleware: [tracing('outer', trace), tracing('inner', trace)] })(input);
    expect(trace).toEqual(['outer: input', 'outer: call', 'inner: input', 'inner: call', 'provider', 'inner: result', 'outer: result']);
    expect(seen!.extraBody).toEqual({ outer: true, inner: true });
    expect(raw.text).toBe('answer+inner+outer');
  });

  it('given no middleware, then the call is the provider call itself', () => {
    const call: AtomCall = async () => ({
      text: '',
      toolCalls: [],
      stopReason: 'end',
      tokens: { input: 0, output: 0, cache: { get: 0, set: 0 } },
    });
    expect(wrapAtomCall({ call, middleware: [] })).toBe(call);
  });
});
