import { spawnSync } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';

import { parseGitConfig } from './parseGitConfig.js';
import { tempDir } from '#test-helpers/fs.js';

// bhrain disarms every key of git's config that names a command by reading the config itself: a key git sees and this
// parser does not (a case, a quote, an escape, a continuation read another way) would be a command left armed. So the
// parser is held to git's own reading of the same bytes, over generated files

const base = tempDir('bhrain-gitparse-');
afterAll(() => rmSync(base, { recursive: true, force: true }));

/** .what = git's own reading of a config file: its entries (a bare key, which git reads as true, has the value ''), or null when git refuses the file */
const readByGit = (text: string): Array<{ key: string; value: string }> | null => {
  const file = join(base, 'config');
  writeFileSync(file, text);
  const run = spawnSync('git', ['config', '--file', file, '--list', '-z'], {
    env: { PATH: process.env.PATH, HOME: base, GIT_CONFIG_NOSYSTEM: '1' },
    encoding: 'utf8',
  });
  if (run.status !== 0) return null;
  return run.stdout
    .split('\0')
    .slice(0, -1)
    .map((entry) => {
      const newline = entry.indexOf('\n');
      return newline === -1 ? { key: entry, value: '' } : { key: entry.slice(0, newline), value: entry.slice(newline + 1) };
    });
};

const pick = <T>(...items: T[]) => fc.constantFrom(...items);
const space = fc.array(pick(' ', '\t'), { maxLength: 2 }).map((chars) => chars.join(''));
/** a section name in any case, a few of them the ones that name commands */
const section = pick('core', 'Core', 'FILTER', 'filter', 'alias', 'diff', 'include', 'x-y', 'a.b');
/** a subsection: the quoted form (escapes, spaces, dots, brackets), or the old dotted form */
const subsection = fc.oneof(
  fc
    .array(pick('x', 'X', ' ', '.', ']', '[', '\\"', '\\\\', '\\x', '=', '#', ';'), { minLength: 0, maxLength: 5 })
    .map((parts) => ` "${parts.join('')}"`),
  fc.array(pick('x', 'X', 'y', '-'), { minLength: 1, maxLength: 4 }).map((parts) => `.${parts.join('')}`),
);
// a space before the closing bracket is an error to git: rare here, so most files are ones git reads
const header = fc
  .tuple(
    space,
    section,
    fc.option(subsection, { nil: '' }),
    fc.oneof({ weight: 8, arbitrary: fc.constant('') }, { weight: 1, arbitrary: fc.constant(' ') }),
  )
  .map(([pad, name, sub, after]) => `${pad}[${name}${sub}${after}]`);
const name = pick('clean', 'Clean', 'fsmonitor', 'fsMonitor', 'path', 'x-1', 'helper');
/** a value's pieces: plain text, quotes, escapes, comment characters, and a line continuation */
const valuePart = fc.oneof(
  {
    weight: 12,
    arbitrary: pick(
      'a',
      'B',
      ' ',
      '\t',
      '\\"',
      '\\\\',
      '\\n',
      '\\t',
      '\\b',
      '#',
      ';',
      '=',
      '"#"',
      '";"',
      '" a\t"',
      '[x]',
      '\\\n',
      '\\\r\n',
    ),
  },
  // an unclosed quote or an unknown escape: git refuses the file
  { weight: 1, arbitrary: pick('"', '\\x') },
);
const value = fc.array(valuePart, { maxLength: 6 }).map((parts) => parts.join(''));
const entry = fc
  .tuple(space, name, space, fc.option(fc.tuple(space, value), { nil: null }))
  .map(([pad, key, gap, assigned]) => `${pad}${key}${gap}${assigned === null ? '' : `=${assigned[0]}${assigned[1]}`}`);
const comment = fc.tuple(space, pick('#', ';'), value).map(([pad, mark, text]) => `${pad}${mark}${text.replace(/\\\r?\n/g, '')}`);
/** a header with what may follow it on its line */
const headerLine = fc.tuple(header, fc.option(fc.oneof(entry, comment), { nil: '' })).map(([head, rest]) => head + rest);
const line = fc.oneof(
  { weight: 2, arbitrary: headerLine },
  { weight: 4, arbitrary: entry },
  { weight: 1, arbitrary: comment },
  pick('', '  '),
);
const configText = fc
  .tuple(fc.boolean(), headerLine, fc.array(line, { maxLength: 8 }), pick('\n', '\r\n'), fc.boolean())
  .map(([bom, first, rest, eol, lastEol]) => `${bom ? '\uFEFF' : ''}${[first, ...rest].join(eol)}${lastEol ? eol : ''}`);

describe('parseGitConfig reads a config file as git does', () => {
  it('every generated file git accepts gives the same keys and values, in order, as `git config --list` (section, subsection and name case, quotes, escapes, comments, continuations, CRLF, a BOM)', () => {
    let accepted = 0;
    fc.assert(
      fc.property(configText, (text) => {
        const byGit = readByGit(text);
        // a file git refuses fails every git command: nothing of it runs
        if (byGit === null) return;
        accepted++;
        expect(parseGitConfig(text)).toEqual(byGit);
      }),
      { numRuns: 300 },
    );
    // most generated files are ones git reads: the comparison was made, not skipped
    expect(accepted).toBeGreaterThan(100);
  });
});
