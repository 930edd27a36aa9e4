// the real Claude Code CLI as the MCP client of `bhrain mcp serve`, configured with the snippets of
// docs/mcp.md as written (`claude mcp add ...`, and the .mcp.json block through --mcp-config), offline: Claude Code's
// model requests and bhrain's own both go to the one stand-in, which tells them apart by the tools they offer
import { execFile } from 'node:child_process';
import { mkdir, readdir, readFile, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';

import { describe, expect, it } from 'vitest';

import { resolveClaudeBinary } from '../../src/drivers/claude-code/resolveClaudeBinary.js';
import { genClaudeCliWorld } from '#standin/genClaudeCliWorld.js';
import type { StandinRequest, StandinTurn } from '#standin/types.js';
import { useStandin } from '#standin/useStandin.js';
import { PACKAGE_ROOT, runProcess } from './runCli.js';
import { tempDir } from '#test-helpers/fs.js';

const { standin } = useStandin();

/** .what = the fenced blocks of one kind in docs/mcp.md's "bhrain as an MCP server" section, as a user copies them */
const docsSnippets = async (fence: string): Promise<string[]> => {
  const page = await readFile(join(PACKAGE_ROOT, 'docs', 'mcp.md'), 'utf8');
  const section = page.slice(page.indexOf('\n## bhrain as an MCP server\n'));
  return section
    .split(new RegExp(`^\`\`\`${fence}\n`, 'm'))
    .slice(1)
    .map((block) => block.split(/^```$/m)[0]);
};

/** the answer bhrain's own run gives: Claude Code's final answer must carry it */
const BHRAIN_ANSWER = 'the retry policy is defined in src/net/retry.ts (bhrain-7f3a)';

const toolNames = (request: StandinRequest): string[] => (request.body.tools ?? []).map((tool: { name: string }) => tool.name);
/** .what = the content blocks of a request's messages, in order */
const blocksOf = (request: StandinRequest): Array<{ type: string; id?: string; name?: string; tool_use_id?: string; content?: unknown }> =>
  (request.body.messages as Array<{ content: unknown }>).flatMap((message) =>
    Array.isArray(message.content) ? (message.content as Array<{ type: string }>) : [],
  );
/** .what = the text of the result of the named tool's last call in a request's messages, or null when it has none yet */
const toolResultOf = (request: StandinRequest, tool: string): string | null => {
  const blocks = blocksOf(request);
  const call = blocks.filter((block) => block.type === 'tool_use' && block.name === tool).at(-1);
  const result = call && blocks.find((block) => block.type === 'tool_result' && block.tool_use_id === call.id);
  if (!result) return null;
  return typeof result.content === 'string'
    ? result.content
    : (result.content as Array<{ type: string; text?: string }>).map((part) => part.text ?? '').join('\n');
};
/** .what = whether a request is Claude Code's main loop (its own tools), not bhrain's (read, glob, grep, ...) */
const isClaudeCodeLoop = (request: StandinRequest): boolean => toolNames(request).includes('Read');

/**
 * .what = the stand-in's two roles, told apart by the tools offered: Claude Code's model (its own tools, bhrain's MCP
 *         tools deferred behind ToolSearch: it loads mcp__bhrain__ask, calls it, then answers with what it returned),
 *         and bhrain's model (bhrain's read tool: it answers); anything else Claude Code asks on the side gets a short text
 */
const respond = (request: StandinRequest): StandinTurn => {
  if (isClaudeCodeLoop(request)) {
    const answered = toolResultOf(request, 'mcp__bhrain__ask');
    if (answered !== null) return { text: `bhrain answered: ${answered}` };
    const loaded = toolNames(request).includes('mcp__bhrain__ask') || toolResultOf(request, 'ToolSearch') !== null;
    if (!loaded) return { toolCalls: [{ name: 'ToolSearch', input: { query: 'select:mcp__bhrain__ask', max_results: 1 } }] };
    return { toolCalls: [{ name: 'mcp__bhrain__ask', input: { prompt: 'where is the retry policy defined?' } }] };
  }
  if (toolNames(request).includes('read')) return { text: BHRAIN_ANSWER };
  return { text: 'ok' };
};

/** .what = a world for Claude Code with `claude` and `bhrain` on PATH, bhrain's home and config in it, the stand-in behind both */
const genWorld = async () => {
  const world = await genClaudeCliWorld({ standinUrl: standin().url, makeDir: tempDir });
  const bin = join(world.home, '.bin');
  await mkdir(bin);
  await symlink(resolveClaudeBinary({}, { env: process.env }), join(bin, 'claude'));
  await symlink(join(PACKAGE_ROOT, 'bin', 'bhrain'), join(bin, 'bhrain'));
  const env = {
    ...world.env,
    PATH: `${bin}:${process.env.PATH}`,
    BHRAIN_HOME: join(world.home, '.bhrain'),
    BHRAIN_CONFIG_DIR: join(world.home, '.bhrain-config'),
  };
  return { ...world, env };
};

/** .what = `claude -p` asking for bhrain's answer, with mcp__bhrain__ask allowed (-p cannot stop on a permission prompt) */
const askClaude = (world: Awaited<ReturnType<typeof genWorld>>, extra: string[] = []) =>
  runProcess({
    command: join(world.home, '.bin', 'claude'),
    args: ['-p', 'ask bhrain where the retry policy is defined', '--allowedTools', 'mcp__bhrain__ask', '--output-format', 'json', ...extra],
    cwd: world.cwd,
    env: world.env,
  });

/** .what = what Claude Code and bhrain asked the stand-in, and what bhrain recorded: the chain the answer went through */
const expectAnswerThroughBhrain = async (run: { code: number | null; stdout: string; stderr: string }, bhrainHome: string) => {
  expect(run.code, run.stderr).toBe(0);
  const result = JSON.parse(run.stdout) as { result: string; is_error: boolean };
  expect(result.is_error).toBe(false);
  // Claude Code's final answer holds what bhrain's run answered, through the MCP tool result
  expect(result.result).toContain(BHRAIN_ANSWER);
  const requests = standin().requests;
  const bhrainRequests = requests.filter((request) => !isClaudeCodeLoop(request) && toolNames(request).includes('read'));
  expect(bhrainRequests).toHaveLength(1);
  // bhrain's run was ask's: offered no tool that writes or runs, and given the prompt Claude Code's model wrote
  expect(toolNames(bhrainRequests[0])).not.toContain('write');
  expect(toolNames(bhrainRequests[0])).not.toContain('bash');
  expect(JSON.stringify(bhrainRequests[0].body.messages)).toContain('where is the retry policy defined?');
  const claudeFinal = requests.filter(isClaudeCodeLoop).at(-1)!;
  expect(toolResultOf(claudeFinal, 'mcp__bhrain__ask')).toContain(BHRAIN_ANSWER);
  // the run was recorded by bhrain, as `bhrain ask` records one
  const runs = await readdir(join(bhrainHome, 'runs'));
  expect(runs).toHaveLength(1);
  const meta = JSON.parse(await readFile(join(bhrainHome, 'runs', runs[0], 'meta.json'), 'utf8'));
  expect(meta).toMatchObject({ skill: 'ask', termination: 'complete', atom: 'claude/haiku' });
};

describe('Claude Code calls bhrain over MCP (`bhrain mcp serve`)', () => {
  it("mcp serve with Claude Code: after the docs' `claude mcp add`, `claude -p` calls mcp__bhrain__ask and its answer holds what bhrain answered", async () => {
    standin().respond = respond;
    const world = await genWorld();
    const [add] = (await docsSnippets('sh')).filter((code) => code.startsWith('claude mcp add'));
    expect(add).toBeDefined();
    // the readme shows the same line
    expect(await readFile(join(PACKAGE_ROOT, 'readme.md'), 'utf8')).toContain(add.trim());
    await promisify(execFile)('bash', ['-e', '-c', add], { cwd: world.cwd, env: world.env, timeout: 60_000 });
    const run = await askClaude(world);
    await expectAnswerThroughBhrain(run, world.env.BHRAIN_HOME);
  });

  it("mcp serve with Claude Code: the docs' .mcp.json block, given to `claude -p --mcp-config`, serves mcp__bhrain__ask the same way", async () => {
    standin().respond = respond;
    const world = await genWorld();
    const [config] = (await docsSnippets('json')).filter((code) => code.includes('"mcp", "serve"'));
    expect(config).toBeDefined();
    const path = join(world.home, 'mcp.json');
    await writeFile(path, config);
    const run = await askClaude(world, ['--mcp-config', path, '--strict-mcp-config']);
    await expectAnswerThroughBhrain(run, world.env.BHRAIN_HOME);
  });
});
