import { createServer, type Server } from 'node:http';
import { rm } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { BrainLog } from '../../../core/contract/BrainContext.js';
import type { BhrainToolBox, BhrainToolContext } from '../../tool/BhrainToolBox.js';
import { genBashToolBox } from './genBashToolBox.js';
import { tempDir } from '#test-helpers/fs.js';

// a registry that refuses every request as npm's does without a token: real HTTP on loopback, reached by curl
let server: Server;
let url: string;
let cwd: string;
beforeAll(async () => {
  cwd = tempDir('bhrain-held-back-');
  server = createServer((request, response) => {
    response.writeHead(request.headers.authorization ? 200 : 401, { 'content-type': 'text/plain' });
    response.end(request.headers.authorization ? 'published\n' : 'Unauthorized\n');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/-/package`;
});
afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
  await rm(cwd, { recursive: true, force: true });
});

/** .what = a tool context whose environment holds a CI job's tokens, and a log that keeps its warnings */
const genContext = (): BhrainToolContext & { warnings: string[] } => {
  const warnings: string[] = [];
  const log: BrainLog = { debug: () => {}, info: () => {}, warn: (message) => void warnings.push(message), error: () => {} };
  return {
    cwd,
    log,
    warnings,
    env: { PATH: process.env.PATH, HOME: cwd, NPM_TOKEN: 'npm_FAKE_publish_token', AWS_SECRET_ACCESS_KEY: 'fake/aws', CI: 'true' },
  };
};

const run = async (box: BhrainToolBox, command: string, context: BhrainToolContext) =>
  box.execute({ call: { id: 'c', name: 'bash', input: { command } } }, context);

/** curl as a publish step runs it: the token from the environment, if any, as a bearer header */
const publish = () => `curl -fsS ${url} \${NPM_TOKEN:+-H "Authorization: Bearer $NPM_TOKEN"}`;

// the sandbox is off: the environment is picked in every mode, and the loopback server is reached without a proxy
describe('a command that fails for want of a held-back credential', () => {
  it('then the result the model reads names the held-back names that matter and how the user passes one, and the user is warned once', async () => {
    const box = genBashToolBox({ sandbox: { mode: 'off' } });
    const context = genContext();
    const first = await run(box, `npm_publish() { ${publish()}; }; npm_publish`, context);
    expect(first).toMatchObject({ success: false, exitCode: 22 });
    expect(first.output).toContain('The requested URL returned error: 401');
    expect(first.output).toContain(
      'note: the command failed as one without its credentials does ("returned error: 401"), and bhrain held these variables back from its environment: NPM_TOKEN. Retrying will not bring them: if the task needs one, tell the user, who can pass it through by its name (--pass-env NAME).',
    );
    const second = await run(box, `npm_publish() { ${publish()}; }; npm_publish`, context);
    expect(second.output).toContain('held these variables back from its environment: NPM_TOKEN.');
    expect(context.warnings).toEqual([
      'bash: a command failed as one without its credentials does ("returned error: 401"); its environment held back NPM_TOKEN: pass one the task needs with --pass-env NAME (setting sandbox.env.pass)',
    ]);
  });

  it('then, when nothing in the command or its output names one, every held-back credential is listed', async () => {
    const context = genContext();
    const result = await run(
      genBashToolBox({ sandbox: { mode: 'off' } }),
      'echo "fatal: Authentication failed for the remote" >&2; exit 128',
      context,
    );
    expect(result.output).toContain('held these variables back from its environment: AWS_SECRET_ACCESS_KEY, NPM_TOKEN.');
  });

  it('then, passed with sandbox.env.pass (--pass-env), the token reaches the command, which succeeds with no note', async () => {
    const context = genContext();
    const result = await run(genBashToolBox({ sandbox: { mode: 'off', env: { pass: ['NPM_TOKEN'] } } }), publish(), context);
    expect(result).toMatchObject({ success: true, exitCode: 0 });
    expect(result.output).toBe('exit code: 0\n--- stdout ---\npublished');
    expect(context.warnings).toEqual([]);
  });

  it('then a command that succeeds though it prints a 401, or fails another way, gets no note and no warning', async () => {
    const context = genContext();
    const box = genBashToolBox({ sandbox: { mode: 'off' } });
    const printed = await run(box, `curl -sS ${url}; echo; echo "HTTP 401 handled"`, context);
    expect(printed).toMatchObject({ success: true, exitCode: 0 });
    const failed = await run(box, 'echo "error TS2322: Type string is not assignable" >&2; exit 2', context);
    expect(failed).toMatchObject({ success: false, exitCode: 2 });
    for (const result of [printed, failed]) expect(result.output).not.toContain('note:');
    expect(context.warnings).toEqual([]);
  });

  it('then, in the sandbox, the same failure gets the same note', async () => {
    const context = genContext();
    const result = await run(
      genBashToolBox(),
      'echo "npm error code E401" >&2; echo "npm error Unable to authenticate, need: Basic" >&2; exit 1',
      context,
    );
    expect(result.output).toContain('note: the command failed as one without its credentials does ("E401")');
    expect(result.output).toContain('held these variables back from its environment: NPM_TOKEN.');
  });
});
