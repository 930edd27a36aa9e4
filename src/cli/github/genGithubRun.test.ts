import { describe, expect, it } from 'vitest';

import { escapeCommandData, escapeCommandProperty, fenceFor } from './genGithubRun.js';

describe('what goes into a workflow command line and a summary block', () => {
  it("escapes a command's data as GitHub documents: % first, then CR and LF, so no line of it can start a command", () => {
    expect(escapeCommandData('50% done\r\n::add-mask::x\n::error::pwned')).toBe('50%25 done%0D%0A::add-mask::x%0A::error::pwned');
    expect(escapeCommandData('%0A')).toBe('%250A');
  });

  it("escapes a property's value as well for : and , (which would end the property or the properties)", () => {
    expect(escapeCommandProperty('a: b, c\nd%')).toBe('a%3A b%2C c%0Ad%25');
  });

  it('a fence is longer than any run of backticks in the text, and at least three', () => {
    expect(fenceFor('plain')).toBe('```');
    expect(fenceFor('a ``` b ````` c')).toBe('``````');
  });
});
