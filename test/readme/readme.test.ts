import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';

import { useStandin } from '../standin/useStandin.js';

const root = join(import.meta.dirname, '..', '..');
const scratch = join(root, '.log', 'readme-examples');
const { standin } = useStandin();
afterAll(() => rm(scratch, { recursive: true, force: true }));

const readme = await readFile(join(root, 'readme.md'), 'utf8');
const blocks = (fence: string) => readme.split(new RegExp(`^\`\`\`${fence}\n`, 'm')).slice(1).map((block) => block.split(/^```$/m)[0]);
/** every ```ts block that imports the package, and every ```sh block that runs bhrain: the examples a user would paste */
const examples = blocks('ts').filter((code) => code.includes("from 'rhachet-roles-bhrain'"));
const shellExamples = blocks('sh').filter((code) => /^bhrain /m.test(code));

describe('readme examples run as written (against the stand-in)', () => {
  it('has examples to run', () => expect(examples.length).toBeGreaterThan(1));

  it.each(examples.map((code, index) => ({ index, code })))('example $index runs and exits 0', async ({ index, code }) => {
    // a generic model: JSON when a schema is asked for, a short answer otherwise
    standin().respond = (request) =>
      JSON.stringify(request.body).includes('JSON Schema') ? { text: '{"issues": []}' } : { text: 'ready' };
    await mkdir(scratch, { recursive: true });
    const file = join(scratch, `example-${index}.mjs`);
    await writeFile(file, code);
    // the package imports itself by name (package.json "exports"), so the example runs against dist/ exactly as written
    const { stdout } = await promisify(execFile)(process.execPath, [file], {
      cwd: root,
      env: {
        PATH: process.env.PATH,
        ANTHROPIC_API_KEY: 'test',
        ANTHROPIC_BASE_URL: standin().url,
        QWEN_API_KEY: 'test',
        QWEN_BASE_URL: standin().openaiUrl,
      },
      timeout: 20_000,
    });
    expect(stdout.length).toBeGreaterThan(0);
    expect(standin().requests.length).toBeGreaterThan(0);
  });
});

describe('readme shell examples run as written (bhrain on PATH, against the stand-in)', () => {
  it('has shell examples to run', () => expect(shellExamples.length).toBeGreaterThan(0));

  it.each(shellExamples.map((code, index) => ({ index, code })))('shell example $index runs with bash -e and exits 0', async ({ code }) => {
    standin().respond = () => ({ text: 'ready' });
    const cwd = await mkdtemp(join(tmpdir(), 'bhrain-readme-sh-'));
    const bin = join(cwd, '.bin');
    await mkdir(bin);
    await symlink(join(root, 'bin', 'bhrain'), join(bin, 'bhrain'));
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
    expect(standin().requests.length).toBe(code.split('\n').filter((line) => /^(echo .*\| )?bhrain /.test(line)).length);
  });
});
