import { execFile } from 'node:child_process';
import { mkdir, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';

import { genConsumerRepo, linkRole, loadLinkedRoleHooks, runRhachet } from '../rhachet/rhachetPaths.js';
import type { StandinRequest } from '#standin/types.js';
import { useStandin } from '#standin/useStandin.js';
import { tempDir } from '#test-helpers/fs.js';

const root = join(import.meta.dirname, '..', '..');
const scratch = join(root, '.log', 'readme-examples');
const { standin } = useStandin();
afterAll(() => rm(scratch, { recursive: true, force: true }));

/** the readme and every page of docs/, whose examples are all run as written */
const docPages = [
  'readme.md',
  ...(await readdir(join(root, 'docs')))
    .filter((name) => name.endsWith('.md'))
    .sort()
    .map((name) => `docs/${name}`),
];
const pageTexts = await Promise.all(docPages.map(async (page) => ({ page, text: await readFile(join(root, page), 'utf8') })));
/** the fenced blocks of one kind, from every page, each with the page it is on */
const blocks = (fence: string): { page: string; code: string }[] =>
  pageTexts.flatMap(({ page, text }) =>
    text
      .split(new RegExp(`^\`\`\`${fence}\n`, 'm'))
      .slice(1)
      .map((block) => ({ page, code: block.split(/^```$/m)[0] })),
  );
/** each item with its place in the list, for the test's name */
const numbered = <T extends object>(items: T[]) => items.map((item, index) => ({ index, ...item }));
/** every ```ts block that imports the package, and every ```sh block that runs bhrain: the examples a user would paste */
const examples = blocks('ts').filter(({ code }) => code.includes("from 'rhachet-roles-bhrain'"));
const shellExamples = blocks('sh').filter(({ code }) => /^bhrain /m.test(code));

/** a JSON Schema node, as much of it as the generic model reads */
interface SchemaNode {
  type?: string | string[];
  const?: unknown;
  enum?: unknown[];
  $ref?: string;
  anyOf?: SchemaNode[];
  oneOf?: SchemaNode[];
  allOf?: SchemaNode[];
  properties?: Record<string, SchemaNode>;
  required?: string[];
  items?: SchemaNode;
  prefixItems?: SchemaNode[];
  minItems?: number;
  minLength?: number;
  minimum?: number;
  exclusiveMinimum?: number;
  maximum?: number;
  [key: string]: unknown;
}

/** the JSON Schema a request asks the answer to conform to (see instructSchema), from either protocol's system prompt */
const readAskedSchema = (request: StandinRequest): SchemaNode | null => {
  const body = request.body;
  const systems: unknown[] =
    request.protocol === 'anthropic'
      ? [body.system]
      : (body.messages ?? [])
          .filter((message: { role: string }) => message.role === 'system')
          .map((message: { content: unknown }) => message.content);
  const texts = systems.flatMap((system): string[] => {
    if (typeof system === 'string') return [system];
    if (Array.isArray(system)) return system.map((block: { text?: string }) => block.text ?? '');
    return [];
  });
  for (const text of texts) {
    const match = /conforms to this JSON Schema:[^\n]*\n(.+)/.exec(text);
    if (match) return JSON.parse(match[1]) as SchemaNode;
  }
  return null;
};

/** the smallest value valid for a schema: required properties only, first enum value, "x", 1, true, the fewest items */
const minimalValueOf = (schema: SchemaNode, root: SchemaNode): unknown => {
  if ('const' in schema) return schema.const;
  if (schema.enum?.length) return schema.enum[0];
  if (schema.$ref?.startsWith('#'))
    return minimalValueOf(
      schema.$ref
        .slice(1)
        .split('/')
        .filter(Boolean)
        .reduce<SchemaNode>((node, key) => node[key] as SchemaNode, root),
      root,
    );
  const choices = schema.anyOf ?? schema.oneOf;
  if (choices?.length) return minimalValueOf(choices.find((choice) => choice.type !== 'null') ?? choices[0], root);
  if (schema.allOf?.length) return minimalValueOf(Object.assign({}, ...schema.allOf) as SchemaNode, root);
  const types = Array.isArray(schema.type) ? schema.type : schema.type ? [schema.type] : [];
  const type = types.find((candidate) => candidate !== 'null') ?? types[0] ?? (schema.properties ? 'object' : 'string');
  if (type === 'object')
    return Object.fromEntries((schema.required ?? []).map((key) => [key, minimalValueOf(schema.properties?.[key] ?? {}, root)]));
  if (type === 'array') {
    const count = Math.max(schema.minItems ?? 0, schema.prefixItems?.length ?? 0);
    return Array.from({ length: count }, (_, index) => minimalValueOf(schema.prefixItems?.[index] ?? schema.items ?? {}, root));
  }
  if (type === 'number' || type === 'integer') {
    const floor = schema.minimum ?? (schema.exclusiveMinimum === undefined ? 1 : Math.floor(schema.exclusiveMinimum) + 1);
    return Math.min(Math.max(1, floor), schema.maximum ?? Infinity);
  }
  if (type === 'boolean') return true;
  if (type === 'null') return null;
  return 'x'.repeat(Math.max(1, schema.minLength ?? 1));
};

/** runs one readme example as a user would (node, the package by name, the stand-in as every supplier) and returns its stdout */
const runExample = async (index: number, code: string): Promise<string> => {
  await mkdir(scratch, { recursive: true });
  // rhachet is not in the registry: an example that imports rhachet/brains gets its genContextBrain as rhachet does it
  const rhachetDir = join(scratch, 'node_modules', 'rhachet');
  await mkdir(rhachetDir, { recursive: true });
  await writeFile(
    join(rhachetDir, 'package.json'),
    JSON.stringify({ name: 'rhachet', type: 'module', exports: { './brains': './brains.mjs' } }),
  );
  await rm(join(rhachetDir, 'brains.mjs'), { force: true });
  await symlink(join(root, 'test', 'rhachet', 'rhachetBrains.mjs'), join(rhachetDir, 'brains.mjs'));
  const file = join(scratch, `example-${index}.mjs`);
  await writeFile(file, code);
  // the package imports itself by name (package.json "exports"), so the example runs against dist/ exactly as written
  const { stdout } = await promisify(execFile)(process.execPath, [file], {
    cwd: root,
    env: {
      PATH: process.env.PATH,
      // the BrainCli example runs the real claude CLI: an isolated home, nothing sent but to the stand-in
      HOME: tempDir('bhrain-readme-home-'),
      DISABLE_AUTOUPDATER: '1',
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
      DISABLE_TELEMETRY: '1',
      ANTHROPIC_API_KEY: 'test',
      ANTHROPIC_BASE_URL: standin().url,
      QWEN_API_KEY: 'test',
      QWEN_BASE_URL: standin().openaiUrl,
    },
    timeout: 30_000,
  });
  return stdout;
};

describe('readme and docs examples run as written (against the stand-in)', () => {
  it('has examples to run', () => expect(examples.length).toBeGreaterThan(1));

  it.each(numbered(examples))('example $index ($page) runs and exits 0', async ({ index, code }) => {
    // a generic model: the smallest valid JSON when a schema is asked for, a short answer otherwise
    standin().respond = (request) => {
      const schema = readAskedSchema(request);
      return schema ? { text: JSON.stringify(minimalValueOf(schema, schema)) } : { text: 'ready' };
    };
    const stdout = await runExample(index, code);
    expect(stdout.length).toBeGreaterThan(0);
    expect(standin().requests.length).toBeGreaterThan(0);
  });

  it('the defineTool example: the model calls the custom tool, which gets its typed input and answers from the file', async () => {
    const index = examples.findIndex(({ code }) => code.includes('defineTool({'));
    expect(index).toBeGreaterThanOrEqual(0);
    let asked = 0;
    standin().respond = () =>
      asked++ === 0
        ? { toolCalls: [{ name: 'count_lines', input: { path: 'package.json' } }] }
        : { text: 'package.json has that many lines' };
    const stdout = await runExample(index, examples[index].code);
    const lines = (await readFile(join(root, 'package.json'), 'utf8')).split('\n').length;
    expect(stdout).toBe('package.json has that many lines\n');
    // the tool's answer reached the model, as its result
    expect(JSON.stringify(standin().requests[1].body)).toContain(`${lines} lines`);
  });
});

describe('readme and docs shell examples run as written (bhrain on PATH, against the stand-in)', () => {
  it('has shell examples to run', () => expect(shellExamples.length).toBeGreaterThan(0));

  it.each(numbered(shellExamples))('shell example $index ($page) runs with bash -e and exits 0', async ({ code }) => {
    standin().respond = () => ({ text: 'ready' });
    const cwd = tempDir('bhrain-readme-sh-');
    const bin = join(cwd, '.bin');
    await mkdir(bin);
    await symlink(join(root, 'bin', 'bhrain'), join(bin, 'bhrain'));
    // the examples run in a repository, as a user's would (`git log | bhrain ...`)
    await promisify(execFile)(
      'bash',
      ['-ec', 'git init -q && git -c user.email=readme@test -c user.name=readme commit -q --allow-empty -m init'],
      { cwd },
    );
    const { stdout } = await promisify(execFile)('bash', ['-e', '-o', 'pipefail', '-c', code], {
      cwd,
      env: {
        PATH: `${bin}:${process.env.PATH}`,
        HOME: cwd,
        BHRAIN_HOME: join(cwd, '.bhrain'),
        ANTHROPIC_BASE_URL: standin().url,
        QWEN_API_KEY: 'test',
        QWEN_BASE_URL: standin().openaiUrl,
      },
      timeout: 60_000,
    });
    expect(stdout).toContain('ready');
    // one request per run of act or ask; export, runs and show ask no model
    expect(standin().requests.length).toBe(code.split('\n').filter((line) => /^[^#]*\bbhrain (?:act|ask)\b/.test(line)).length);
  });
});

describe('readme and docs CI step examples run as written (their run script, with bhrain on PATH, against the stand-in)', () => {
  /** the `run: |` script of every yaml block: what a CI runner would execute */
  const ciScripts = blocks('yaml').flatMap(({ page, code: yaml }) => {
    const lines = yaml.split('\n');
    const start = lines.findIndex((line) => /run: \|$/.test(line.trim()));
    if (start < 0) return [];
    const body = lines.slice(start + 1).filter((line) => line.trim());
    const indent = Math.min(...body.map((line) => line.length - line.trimStart().length));
    return [{ page, script: body.map((line) => line.slice(indent)).join('\n') }];
  });

  it('has a CI step to run', () => expect(ciScripts.length).toBeGreaterThan(0));

  it.each(numbered(ciScripts))('CI step $index ($page) runs and writes its json', async ({ script }) => {
    standin().respond = () => ({ text: 'lint fixed' });
    const cwd = tempDir('bhrain-readme-ci-');
    const bin = join(cwd, '.bin');
    await mkdir(bin);
    await symlink(join(root, 'bin', 'bhrain'), join(bin, 'bhrain'));
    await mkdir(join(cwd, '.bhrain'));
    await writeFile(
      join(cwd, '.bhrain', 'rules.json'),
      JSON.stringify({ allow: ['read', 'glob', 'grep', 'bash(npm run lint*)'], deny: ['bash(rm *)'] }),
    );
    // `npx bhrain` resolves to the installed bin; here the package's own bin is on PATH instead
    await promisify(execFile)('bash', ['-e', '-o', 'pipefail', '-c', script.replaceAll('npx bhrain', 'bhrain')], {
      cwd,
      env: {
        PATH: `${bin}:${process.env.PATH}`,
        HOME: cwd,
        BHRAIN_HOME: join(cwd, '.state'),
        ANTHROPIC_API_KEY: 'test',
        ANTHROPIC_BASE_URL: standin().url,
      },
      timeout: 60_000,
    });
    const json = JSON.parse(await readFile(join(cwd, 'bhrain.json'), 'utf8'));
    expect(json).toMatchObject({ output: 'lint fixed', termination: 'complete' });
  });
});

describe('readme and docs rhachet commands run as rhachet v1.45.2 runs them (test/rhachet/rhachetPaths.ts), in a consumer repository', () => {
  const rhachetBlocks = blocks('sh').filter(({ code }) => /^npx rhachet /m.test(code));
  /** a command line's words as bash reads them (quotes, comments) */
  const wordsOf = async (line: string): Promise<string[]> =>
    (await promisify(execFile)('bash', ['-c', 'eval "set -- $1"; printf "%s\\0" "$@"', '_', line])).stdout.split('\0').slice(0, -1);

  it('has rhachet commands to run', () => expect(rhachetBlocks.length).toBeGreaterThan(0));

  it.each(numbered(rhachetBlocks))('rhachet block $index ($page): every command succeeds', async ({ code }) => {
    standin().respond = () => ({ text: 'ready' });
    const home = tempDir('bhrain-readme-rhachet-');
    const env = {
      PATH: process.env.PATH,
      HOME: home,
      BHRAIN_HOME: join(home, '.bhrain'),
      QWEN_API_KEY: 'test',
      QWEN_BASE_URL: standin().openaiUrl,
    };
    let repo: string | null = null;
    for (const line of code.split('\n').filter((text) => text.trim() && !text.startsWith('#'))) {
      const words = await wordsOf(line);
      if (words.join(' ') === 'npm install --save-dev rhachet rhachet-roles-bhrain') {
        // rhachet is not in the registry: the consumer gets the packed package, and rhachet's paths are followed instead
        repo = await genConsumerRepo();
        continue;
      }
      expect(repo, `'${line}' runs before the install`).not.toBeNull();
      expect(words.slice(0, 2)).toEqual(['npx', 'rhachet']);
      const [command, ...rest] = words.slice(2);
      if (command === 'init' && rest[0] === '--roles') {
        const [slug, role] = rest[1].split('/');
        await linkRole({ cwd: repo!, repo: slug, role });
      } else if (command === 'roles' && rest[0] === 'link')
        await linkRole({ cwd: repo!, repo: rest[rest.indexOf('--repo') + 1], role: rest[rest.indexOf('--role') + 1] });
      else if (command === 'init' && rest[0] === '--hooks')
        expect(await loadLinkedRoleHooks(repo!)).toMatchObject({ errors: [], roles: [{ repo: 'bhrain', slug: 'brain' }] });
      else if (command === 'run') {
        const run = await runRhachet({ cwd: repo!, args: rest, env });
        expect(run, line).toMatchObject({ code: 0, stdout: expect.stringContaining('ready') });
        const outputFile = rest.indexOf('--output-file');
        if (outputFile >= 0)
          expect(JSON.parse(await readFile(join(repo!, rest[outputFile + 1]), 'utf8'))).toMatchObject({ output: 'ready', exitCode: 0 });
      } else throw new Error(`a readme rhachet command this test does not know how to run: ${line}`);
    }
  });
});
