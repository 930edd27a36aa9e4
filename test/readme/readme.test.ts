import { execFile } from 'node:child_process';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';

import { useStandin } from '../standin/useStandin.js';

const root = join(import.meta.dirname, '..', '..');
const scratch = join(root, '.log', 'readme-examples');
const { standin } = useStandin();
afterAll(() => rm(scratch, { recursive: true, force: true }));

/** every ```ts block of the readme that imports the package: those are the examples a user would paste */
const examples = (await readFile(join(root, 'readme.md'), 'utf8'))
  .split(/^```ts\n/m)
  .slice(1)
  .map((block) => block.split(/^```$/m)[0])
  .filter((code) => code.includes("from 'rhachet-roles-bhrain'"));

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
