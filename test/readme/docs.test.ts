// the readme is a front page and docs/ holds a page per topic; every link between them resolves, and the CLI
// reference names every flag of every command and every exit code
import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';

import { describe, expect, it } from 'vitest';

import { EXIT_CODES } from '../../src/cli/exitCodes.js';
import { genAgentsCommand, genAgentSkillsCommand } from '../../src/cli/genAgentFilesCommands.js';
import { genAtomsCommand } from '../../src/cli/genAtomsCommand.js';
import { genConfigCommand } from '../../src/cli/genConfigCommand.js';
import { genExportCommand } from '../../src/cli/genExportCommand.js';
import { genRunsCommand } from '../../src/cli/genRunsCommand.js';
import { genRewindCommand } from '../../src/cli/genRewindCommand.js';
import { genShowCommand } from '../../src/cli/genShowCommand.js';
import { genSkillCommand } from '../../src/cli/genSkillCommand.js';
import { genMcpCommand } from '../../src/cli/mcp/serve/genMcpCommand.js';
import { flagsOfCommands, missingExitCodes, missingFlags } from './cliCoverage.js';
import { anchorsOf, findBrokenLinks, linksOf, slugOfHeading } from './docLinks.js';

const root = join(import.meta.dirname, '..', '..');
const pagePaths = [
  'readme.md',
  ...(await readdir(join(root, 'docs')))
    .filter((name) => name.endsWith('.md'))
    .sort()
    .map((name) => `docs/${name}`),
];
const pages: Record<string, string> = Object.fromEntries(
  await Promise.all(pagePaths.map(async (path) => [path, await readFile(join(root, path), 'utf8')] as const)),
);
const onDisk = {
  read: (path: string) => (existsSync(join(root, path)) ? readFileSync(join(root, path), 'utf8') : null),
  exists: (path: string) => existsSync(join(root, path)),
};
/** in-memory pages: nothing else exists */
const nowhere = { read: () => null, exists: () => false };

describe('links between the readme and the docs resolve', () => {
  it('the readme is a front page of at most 200 lines', () => {
    expect(pages['readme.md'].split('\n').length - 1).toBeLessThanOrEqual(200);
  });

  it('the readme links to every page of docs/', () => {
    const linked = new Set(linksOf(pages['readme.md']).map(({ target }) => target.split('#')[0]));
    expect(pagePaths.filter((path) => path.startsWith('docs/') && !linked.has(path))).toEqual([]);
  });

  it('every relative link and #anchor in readme.md and docs/*.md resolves', () => {
    expect(Object.values(pages).flatMap((text) => linksOf(text)).length).toBeGreaterThan(50);
    expect(findBrokenLinks(pages, onDisk)).toEqual([]);
  });

  it('a broken link and a broken anchor are reported, each with its page and line', () => {
    const given = {
      'readme.md': '# bhrain\n\nSee [the CLI](docs/cli.md) and [its flags](docs/cli-reference.md#flagz).\n',
      'docs/cli-reference.md': '# CLI reference\n\n## Flags\n\nBack to [the top](../readme.md#bhrain) and [here](#flagz).\n',
    };
    expect(findBrokenLinks(given, nowhere)).toEqual([
      { page: 'readme.md', line: 3, target: 'docs/cli.md', problem: 'docs/cli.md does not exist' },
      {
        page: 'readme.md',
        line: 3,
        target: 'docs/cli-reference.md#flagz',
        problem: 'no heading of docs/cli-reference.md makes the anchor #flagz',
      },
      { page: 'docs/cli-reference.md', line: 5, target: '#flagz', problem: 'no heading of docs/cli-reference.md makes the anchor #flagz' },
    ]);
  });

  it('links written as code, in a fenced block or in backticks, are not links; absolute URLs are not followed', () => {
    const given = {
      'readme.md': '# a\n\n`[x](nowhere.md)` and [web](https://example.com/x.md#y)\n\n```md\n[y](nowhere.md)\n# Not a heading\n```\n',
    };
    expect(findBrokenLinks(given, nowhere)).toEqual([]);
    expect([...anchorsOf(given['readme.md'])]).toEqual(['a']);
  });

  it('anchors are made as GitHub makes them: lowercase, punctuation removed but - and _, spaces to -, repeats -1, -2', () => {
    expect(slugOfHeading('Subagents: the `task` tool')).toBe('subagents-the-task-tool');
    expect(slugOfHeading('The agentic loop: bhrain.struct.v1')).toBe('the-agentic-loop-bhrainstructv1');
    expect(slugOfHeading("Names: the design's and ours")).toBe('names-the-designs-and-ours');
    expect(slugOfHeading('Sandbox: bash per-call cost, off vs workspace-write (bubblewrap)')).toBe(
      'sandbox-bash-per-call-cost-off-vs-workspace-write-bubblewrap',
    );
    expect(slugOfHeading('max_tokens & [links](x.md)')).toBe('max_tokens--links');
    expect([...anchorsOf('# Notes\n## Notes\n### Notes\n## Notes-1\n')]).toEqual(['notes', 'notes-1', 'notes-2', 'notes-1-1']);
  });
});

describe('the CLI reference names every flag and every exit code', () => {
  const cliReference = pages['docs/cli-reference.md'];
  const noop = async () => 0;
  const commands = [
    genSkillCommand('act', noop),
    genSkillCommand('ask', noop),
    genRunsCommand(),
    genShowCommand(),
    genRewindCommand(),
    genExportCommand(),
    genConfigCommand(),
    genAtomsCommand(),
    genMcpCommand(noop),
    genAgentSkillsCommand(),
    genAgentsCommand(),
  ];
  // `bhrain mcp serve`: the flags of a nested command are its own
  const nested = commands.flatMap((command) => command.commands);

  it('these are the commands of bhrain (src/cli/main.ts)', async () => {
    const main = await readFile(join(root, 'src', 'cli', 'main.ts'), 'utf8');
    const added = [...main.matchAll(/\.addCommand\(gen(\w+)Command\(('(\w+)')?/g)].map(
      (match) => match[3] ?? match[1].replace(/^.*(?=[A-Z])/, '').toLowerCase(),
    );
    expect(added).toEqual(commands.map((command) => command.name()));
  });

  it('every long flag of every command appears in docs/cli-reference.md', () => {
    const flags = flagsOfCommands([...commands, ...nested]);
    expect(flags.length).toBeGreaterThan(40);
    expect(
      missingFlags(
        cliReference,
        flags.map(({ flag }) => flag),
      ),
    ).toEqual([]);
  });

  it('every exit code has a row in the exit code table of docs/cli-reference.md', () => {
    expect(missingExitCodes(cliReference, Object.values(EXIT_CODES))).toEqual([]);
  });

  it('a flag missing from a text is reported, and a longer flag does not stand for it', () => {
    const text = '| `-o, --output-file <path>` | | the result |\n| `--no-record` | | nothing |\n| `--quiet` | | quiet |';
    expect(missingFlags(text, ['--output', '--output-file', '--record', '--no-record', '--quiet', '--debug'])).toEqual([
      '--output',
      '--record',
      '--debug',
    ]);
  });

  it('an exit code missing from the exit code table is reported, and a row of another table does not stand for it', () => {
    const text =
      '## Precedence\n\n| 7 | user |\n\n## Exit codes\n\n| code | meaning |\n|---|---|\n| 0 | complete |\n| 2 | bad usage |\n\n## Next\n\n| 9 | x |\n';
    expect(missingExitCodes(text, [0, 2, 7, 9])).toEqual([7, 9]);
    expect(missingExitCodes('no such section', [0])).toEqual([0]);
  });
});

describe('the package ships the front page and the pages it links to', () => {
  it("npm pack takes readme.md and every page of docs/, so the readme's relative links resolve in node_modules too", async () => {
    const { stdout } = await promisify(execFile)('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: root });
    const packed = new Set((JSON.parse(stdout) as { files: { path: string }[] }[])[0].files.map((file) => file.path));
    expect(pagePaths.filter((path) => !packed.has(path))).toEqual([]);
    // the JSON output's schema, which docs/cli-reference.md links to
    expect(packed.has('schemas/output.schema.json')).toBe(true);
  });
});
