// the design pages (docs/design/) hold the contracts the code implements; comments cite them by page and heading, so
// every cited heading must exist, and the pages' own links must resolve
import { existsSync, readFileSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';

import { describe, expect, it } from 'vitest';

import { anchorsOf, findBrokenLinks } from './docLinks.js';

const root = join(import.meta.dirname, '..', '..');
const designPaths = (await readdir(join(root, 'docs', 'design')))
  .filter((name) => name.endsWith('.md'))
  .sort()
  .map((name) => `docs/design/${name}`);
const designPages: Record<string, string> = Object.fromEntries(
  await Promise.all(designPaths.map(async (path) => [path, await readFile(join(root, path), 'utf8')] as const)),
);
const sourcePaths = (await readdir(join(root, 'src'), { recursive: true }))
  .filter((name) => name.endsWith('.ts'))
  .sort()
  .map((name) => `src/${name}`);
const sources: Record<string, string> = Object.fromEntries(
  await Promise.all(sourcePaths.map(async (path) => [path, await readFile(join(root, path), 'utf8')] as const)),
);

/** .what = a citation of a design page that leads nowhere: where it is, what it cites, and why it fails */
interface BrokenCitation {
  source: string;
  line: number;
  cited: string;
  problem: string;
}

/** .what = every `docs/design/<page>.md#<heading>` in the sources whose page or heading does not exist */
const findBrokenCitations = (input: { sources: Record<string, string>; pages: Record<string, string> }): BrokenCitation[] =>
  Object.entries(input.sources).flatMap(([source, text]) =>
    text.split('\n').flatMap((line, index) =>
      [...line.matchAll(/docs\/design\/([\w.-]+\.md)(?:#([\w-]+))?/g)].flatMap(([cited, page, anchor]): BrokenCitation[] => {
        const markdown = input.pages[`docs/design/${page}`];
        if (markdown === undefined) return [{ source, line: index + 1, cited, problem: `docs/design/${page} does not exist` }];
        if (anchor !== undefined && !anchorsOf(markdown).has(anchor))
          return [{ source, line: index + 1, cited, problem: `no heading of docs/design/${page} makes the anchor #${anchor}` }];
        return [];
      }),
    ),
  );

describe('the design pages', () => {
  it('every docs/design/<page>.md#<heading> cited in src names a page and a heading that exist', () => {
    const cited =
      Object.values(sources)
        .join('\n')
        .match(/docs\/design\/[\w.-]+\.md#[\w-]+/g) ?? [];
    expect(cited.length).toBeGreaterThan(0);
    expect(findBrokenCitations({ sources, pages: designPages })).toEqual([]);
  });

  it('a citation of a missing page or heading is reported with its file and line', () => {
    const given = {
      sources: {
        'src/a.ts': '// fine: docs/design/loop.md#budgets\n/** .what = x (docs/design/loop.md#budgetz) */\n// docs/design/nope.md#x\n',
      },
      pages: { 'docs/design/loop.md': '# The loop\n\n## Budgets\n' },
    };
    expect(findBrokenCitations(given)).toEqual([
      {
        source: 'src/a.ts',
        line: 2,
        cited: 'docs/design/loop.md#budgetz',
        problem: 'no heading of docs/design/loop.md makes the anchor #budgetz',
      },
      { source: 'src/a.ts', line: 3, cited: 'docs/design/nope.md#x', problem: 'docs/design/nope.md does not exist' },
    ]);
  });

  it('no source file cites the seed documents, which are not in the repository', () => {
    expect(
      Object.entries(sources)
        .filter(([, text]) => /seed 00\d/.test(text))
        .map(([path]) => path),
    ).toEqual([]);
  });

  it('every module the design pages name (src/… paths and *.ts files) exists, so a move or rename cannot leave them stale', () => {
    const named = Object.values(designPages).flatMap((text) => [
      ...[...text.matchAll(/(?<![\w/.-])((?:[\w.-]+\/)*[\w.-]+\.ts)\b/g)].map((match) => match[1]),
      ...[...text.matchAll(/(?<![\w/.-])(src\/[\w/.-]*\w)/g)].map((match) => match[1]),
    ]);
    const exists = (name: string): boolean =>
      name.includes('/')
        ? existsSync(join(root, name)) || existsSync(join(root, 'src', name))
        : sourcePaths.some((path) => path.endsWith(`/${name}`));
    const missing = [...new Set(named)].filter((name) => !exists(name));
    expect(missing).toEqual([]);
  });

  it('every relative link and #anchor of docs/design/*.md resolves', () => {
    const onDisk = {
      read: (path: string) => (existsSync(join(root, path)) ? readFileSync(join(root, path), 'utf8') : null),
      exists: (path: string) => existsSync(join(root, path)),
    };
    expect(findBrokenLinks(designPages, onDisk)).toEqual([]);
  });
});
