import { describe, expect, it } from 'vitest';

import { findCutToolCall, isWholeJson } from './isWholeJson.js';

describe('one isWholeJson for both providers: has the stream delivered one whole JSON value?', () => {
  it('given an empty or blank string, then it is not whole: no value has arrived (a call cut before its arguments)', () => {
    expect([isWholeJson(''), isWholeJson(' '), isWholeJson('\n\t')]).toEqual([false, false, false]);
  });

  it('given a value cut mid-way, then it is not whole; given a whole value of any JSON type, then it is', () => {
    expect(['{"path": "a', '{"a":1', '[1,', '"abc', 'tru'].map(isWholeJson)).toEqual([false, false, false, false, false]);
    expect(['{}', ' {"a": [1, 2]} ', '[]', '"x"', '3', 'null'].map(isWholeJson)).toEqual([true, true, true, true, true, true]);
  });

  it('given calls whose last arguments are cut or empty, then that call is the cut one; given a whole last call, then none is', () => {
    const whole = { id: 'a', json: '{"path":"a"}' };
    expect(findCutToolCall([whole, { id: 'b', json: '{"path":' }])).toEqual({ id: 'b', json: '{"path":' });
    expect(findCutToolCall([whole, { id: 'c', json: '' }])).toEqual({ id: 'c', json: '' });
    expect(findCutToolCall([{ id: 'd', json: '' }, whole])).toBeNull();
    expect(findCutToolCall([])).toBeNull();
  });
});
