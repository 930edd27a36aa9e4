// every example `bhrain --help` and each command's --help print runs as printed, through a shell with bhrain on PATH,
// against the stand-in: an example a user copies must not be a usage error. Only the placeholders a fresh machine cannot
// have are filled in: a run's id and a ref (from a run made first), the rules and MCP files the comments describe
import { chmod, mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

import { beforeAll, describe, expect, it } from 'vitest';

import { useStandin } from '#standin/useStandin.js';
import { tempDir } from '#test-helpers/fs.js';
import { genCliEnv, PACKAGE_ROOT, runBhrain, runProcess } from './runCli.js';

const { standin } = useStandin();

/** the examples of one help text: each `$ ` line, its comment cut off */
const examplesOf = (help: string): string[] =>
  help
    .split('\n')
    .filter((line) => /^\s+\$ /.test(line))
    .map((line) => line.replace(/^\s+\$ /, '').replace(/\s+# .*$/, ''));

/** the commands of `bhrain --help` (help itself aside) */
const commandsOf = (help: string): string[] =>
  [...help.slice(help.indexOf('Commands:')).matchAll(/^ {2}([a-z]+) /gm)].map((match) => match[1]).filter((name) => name !== 'help');

// the answer every example gets: valid against the --json-schema example's schema, and text for the others
const ANSWER = '{"files": ["src/loop.ts"]}';

describe('the --help examples run as printed', () => {
  let home: string;
  let cwd: string;
  let env: Record<string, string | undefined>;
  const examples: Array<{ from: string; line: string }> = [];
  const filled = new Map<string, string>();

  beforeAll(async () => {
    home = tempDir('bhrain-examples-home-');
    cwd = tempDir('bhrain-examples-cwd-');
    const bin = join(home, 'bin');
    await mkdir(bin);
    await writeFile(join(bin, 'bhrain'), `#!/bin/sh\nexec ${process.execPath} ${join(PACKAGE_ROOT, 'bin', 'bhrain')} "$@"\n`);
    await chmod(join(bin, 'bhrain'), 0o755);
    env = genCliEnv({ standin: standin(), home }, { PATH: `${bin}:${process.env.PATH}` });
    const top = await runBhrain({ args: ['--help'], cwd, env });
    examples.push(...examplesOf(top.stdout).map((line) => ({ from: 'bhrain --help', line })));
    for (const command of commandsOf(top.stdout)) {
      const help = await runBhrain({ args: [command, '--help'], cwd, env });
      examples.push(...examplesOf(help.stdout).map((line) => ({ from: `bhrain ${command} --help`, line })));
    }
    // what the placeholders stand for: a run made here (its id, its end, its series), a record dir, the files the
    // comments describe (the MCP server one from node_modules, not the network)
    standin().respond = () => ({ text: ANSWER });
    const made = await runBhrain({ args: ['ask', '--atom', 'qwen', '--record-dir', 'bhrain-record', '-o', 'json', 'hi'], cwd, env });
    const { series } = JSON.parse(made.stdout) as { series: { hash: string } };
    const first = await runBhrain({ args: ['ask', '--atom', 'qwen', '-o', 'json', 'hi'], cwd, env });
    const { runId } = JSON.parse(first.stdout) as { runId: string };
    filled.set('<id>', runId).set('2025-06-01T09-30-00-123Z-a1b2c3', runId).set('a1b2c3', runId.slice(-6));
    filled.set('3f2a9c1e', series.hash.slice(0, 12));
    await writeFile(join(cwd, 'rules.json'), JSON.stringify({ allow: ['bash(npm test*)'], deny: ['bash(rm *)'] }));
    const everything = join(PACKAGE_ROOT, 'node_modules', '@modelcontextprotocol', 'server-everything', 'dist', 'index.js');
    await writeFile(
      join(cwd, 'mcp.json'),
      JSON.stringify({ mcpServers: { everything: { command: process.execPath, args: [everything] } } }),
    );
    await runProcess({ command: 'git', args: ['init', '-q'], cwd, env });
  }, 60_000);

  it('every command with examples has some, and each is read', () => {
    expect(examples.length).toBeGreaterThanOrEqual(25);
    expect(new Set(examples.map(({ from }) => from))).toEqual(
      new Set([
        'bhrain --help',
        'bhrain act --help',
        'bhrain ask --help',
        'bhrain runs --help',
        'bhrain show --help',
        'bhrain rewind --help',
        'bhrain config --help',
        'bhrain skills --help',
        'bhrain agents --help',
      ]),
    );
  });

  it("each runs to exit 0 (rhachet's, which needs rhachet installed, only parses)", async () => {
    standin().respond = () => ({ text: ANSWER });
    const failed: string[] = [];
    for (const { from, line } of examples) {
      const command = [...filled].reduce((text, [placeholder, value]) => text.replaceAll(placeholder, value), line);
      // rhachet is not in the registry: its example is run by bhrain with the flags rhachet passes through
      const run = command.startsWith('npx rhachet run')
        ? await runBhrain({
            args: [
              'act',
              ...command
                .replace(/^npx rhachet run /, '')
                .match(/"[^"]*"|\S+/g)!
                .map((word) => word.replace(/^"|"$/g, '')),
            ],
            cwd,
            env,
          })
        : await runProcess({ command: 'bash', args: ['-c', command], cwd, env });
      if (run.code !== 0) failed.push(`${from}: \`${line}\` exited ${run.code}: ${run.stderr.trim().split('\n').slice(-2).join(' / ')}`);
    }
    expect(failed).toEqual([]);
  }, 300_000);
});
