// what a run loads. Timing belongs to the bench (npm run bench); this proves the structure that makes start-up
// lean, which a refactor could silently undo: the CLI runs from its bundle, and a run loads only what it uses
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import module from 'node:module';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { startStandin, type Standin } from '#standin/standin.js';
import { genCliEnv, PACKAGE_ROOT, runProcess, type CliRun } from './runCli.js';
import { tempDir } from '#test-helpers/fs.js';

const RECORDER = join(import.meta.dirname, 'fixtures', 'recordModuleLoads.mjs');

let standin: Standin;
beforeAll(async () => {
  standin = await startStandin();
});
afterAll(async () => standin.close());

/** .what = runs `node --import recorder <entry> <args>` in a temp dir; the modules it loaded, relative to the package */
const runRecorded = async (
  entry: string,
  args: string[],
  files: Record<string, string | null> = {},
  userSettings?: unknown,
): Promise<CliRun & { loaded: string[] }> => {
  const cwd = tempDir('bhrain-startup-');
  // null: a directory
  for (const [name, text] of Object.entries(files))
    await (text === null ? mkdir(join(cwd, name), { recursive: true }) : writeFile(join(cwd, name), text));
  const home = tempDir('bhrain-startup-home-');
  const loads = join(home, 'loads.txt');
  const env = { ...genCliEnv({ standin, home }), BHRAIN_TEST_LOADS: loads, NODE_DISABLE_COMPILE_CACHE: '1' };
  if (userSettings) {
    await mkdir(env.BHRAIN_CONFIG_DIR, { recursive: true });
    await writeFile(join(env.BHRAIN_CONFIG_DIR, 'settings.json'), JSON.stringify(userSettings));
  }
  const run = await runProcess({ command: process.execPath, args: ['--import', RECORDER, join(PACKAGE_ROOT, entry), ...args], cwd, env });
  const loaded = (await readFile(loads, 'utf8'))
    .split('\n')
    .filter((line) => line && !line.startsWith('node:') && !line.includes('/test/acceptance/fixtures/'))
    .map((line) => line.replace(/^file:\/\//, '').replace(`${PACKAGE_ROOT}/`, ''));
  return { ...run, loaded: [...new Set(loaded)] };
};

/** .what = the loaded files that hold zod's code, whatever chunk esbuild put it in: found by its base class, "$ZodType" */
const holdingZod = async (loaded: readonly string[]): Promise<string[]> => {
  const texts = await Promise.all(loaded.map((path) => readFile(join(PACKAGE_ROOT, path), 'utf8')));
  return loaded.filter((_, index) => texts[index].includes('"$ZodType"'));
};

/**
 * .what = the zod a run loaded: the files, their bytes, and whether classic zod (the API the MCP SDK imports, with every
 *         locale) is among them
 * .why = the built-in tools declare their input with zod/mini, bundled as a lean copy of its own (scripts/bundleCli.js)
 *        and loaded on a tool's first call (deferInput): a run loads that, never the full copy the MCP SDK brings
 */
const zodLoaded = async (loaded: readonly string[]) => {
  const files = await holdingZod(loaded);
  const texts = await Promise.all(files.map((path) => readFile(join(PACKAGE_ROOT, path), 'utf8')));
  return {
    files: files.length,
    under100KB: texts.reduce((sum, text) => sum + Buffer.byteLength(text), 0) < 100_000,
    classic: texts.some((text) => text.includes('$constructor("ZodString"')),
  };
};

/** .what = the loaded files that hold the YAML parser (the `yaml` package), found by one of its error messages */
const holdingYaml = async (loaded: readonly string[]): Promise<string[]> => {
  const texts = await Promise.all(loaded.map((path) => readFile(join(PACKAGE_ROOT, path), 'utf8')));
  return loaded.filter((_, index) => texts[index].includes('Nested mappings are not allowed in compact mappings'));
};

const bashCall = (command: string) => ({ toolCalls: [{ name: 'bash', input: { command } }] });

describe('lean start-up: a run loads its bundle and what it uses, nothing more', () => {
  it('a one-turn claude answer loads only dist/bundle/ files: no node_modules file, no tree-sitter, ajv, zod, openai SDK, MCP or domain proxy', async () => {
    standin.reset();
    standin.respond = () => ({ text: 'ok' });
    const run = await runRecorded('bin/bhrain', ['act', '--atom', 'claude/haiku', '--input', 'hi', '--quiet']);
    expect({ code: run.code, stdout: run.stdout, stderr: run.stderr }).toEqual({ code: 0, stdout: 'ok\n', stderr: '' });
    expect(run.loaded.filter((path) => !path.startsWith('dist/bundle/') && path !== 'bin/bhrain')).toEqual([]);
    expect(
      run.loaded.filter((path) => /\/(openai|ajv|zod|2019|2020|genMcpToolBox|client|startDomainProxy)-[A-Z0-9]+\.js$/.test(path)),
    ).toEqual([]);
    expect(run.loaded.some((path) => /\/AnthropicMessagesClient-[A-Z0-9]+\.js$/.test(path))).toBe(true);
    expect(await holdingZod(run.loaded)).toEqual([]);
  });

  it('hooks: a one-turn run with no hooks configured loads no hook code (the runner, the command hooks); with a hooks config it does', async () => {
    // the hook code, whatever chunk esbuild put it in: found by strings only it holds
    const holdingHooks = async (loaded: readonly string[]) => {
      const texts = await Promise.all(loaded.map((path) => readFile(join(PACKAGE_ROOT, path), 'utf8')));
      return loaded.filter((_, index) =>
        /hooks-transcript\.jsonl|HOOK_OUTPUT_MAX_BYTES|bytes of the hook's output dropped/.test(texts[index]),
      );
    };
    standin.reset();
    standin.respond = () => ({ text: 'ok' });
    const bare = await runRecorded('bin/bhrain', ['act', '--atom', 'claude/haiku', '--input', 'hi', '--quiet']);
    expect(bare.code).toBe(0);
    expect(await holdingHooks(bare.loaded)).toEqual([]);
    const hooked = await runRecorded(
      'bin/bhrain',
      ['act', '--atom', 'claude/haiku', '--input', 'hi', '--quiet'],
      {},
      {
        hooks: { SessionStart: [{ hooks: [{ type: 'command', command: 'true' }] }] },
      },
    );
    expect(hooked.code, hooked.stderr).toBe(0);
    expect((await holdingHooks(hooked.loaded)).length).toBeGreaterThan(0);
  });

  it("a one-turn answer, on either atom, loads neither node's undici (the bundle's Headers and Response stand in) nor zod (the built-in tools build theirs on a call)", async () => {
    for (const atom of ['claude/haiku', 'qwen/qwen3-coder-plus']) {
      standin.reset();
      standin.respond = () => ({ text: 'ok' });
      const run = await runRecorded('bin/bhrain', ['act', '--atom', atom, '--input', 'hi', '--quiet']);
      expect({ atom, code: run.code, stdout: run.stdout }).toEqual({ atom, code: 0, stdout: 'ok\n' });
      expect({ atom, undici: run.loaded.includes('builtin:undici'), zod: await holdingZod(run.loaded) }).toEqual({
        atom,
        undici: false,
        zod: [],
      });
    }
  });

  it('start-up: a one-turn run without SKILL.md or agent files loads no YAML parser and no reader of them; with a SKILL.md it loads both', async () => {
    standin.reset();
    standin.respond = () => ({ text: 'ok' });
    const bare = await runRecorded('bin/bhrain', ['act', '--atom', 'claude/haiku', '--input', 'hi', '--quiet']);
    expect({ code: bare.code, stdout: bare.stdout }).toEqual({ code: 0, stdout: 'ok\n' });
    expect(await holdingYaml(bare.loaded)).toEqual([]);
    expect(bare.loaded.filter((path) => /\/read(AgentSkills|AgentFiles|FrontMatterFile)-[A-Z0-9]+\.js$/.test(path))).toEqual([]);
    const skill = '---\nname: hello\ndescription: says hello\n---\nSay hello.\n';
    const withSkill = await runRecorded('bin/bhrain', ['act', '--atom', 'claude/haiku', '--input', 'hi', '--quiet'], {
      '.bhrain': null,
      '.bhrain/skills': null,
      '.bhrain/skills/hello': null,
      '.bhrain/skills/hello/SKILL.md': skill,
    });
    expect({ code: withSkill.code, stdout: withSkill.stdout }).toEqual({ code: 0, stdout: 'ok\n' });
    expect((await holdingYaml(withSkill.loaded)).length).toBeGreaterThan(0);
    // the files a run loads grow by the reader's alone
    expect(withSkill.loaded.filter((path) => !bare.loaded.includes(path)).length).toBeGreaterThan(0);
    expect(bare.loaded.filter((path) => !withSkill.loaded.includes(path))).toEqual([]);
  });

  it('a one-turn qwen answer does not load the Anthropic SDK', async () => {
    standin.reset();
    standin.respond = () => ({ text: 'ok' });
    const run = await runRecorded('bin/bhrain', ['act', '--atom', 'qwen/qwen3-coder-plus', '--input', 'hi', '--quiet']);
    expect(run.code).toBe(0);
    expect(run.loaded.filter((path) => /\/AnthropicMessagesClient-[A-Z0-9]+\.js$/.test(path))).toEqual([]);
    expect(run.loaded.some((path) => /\/openai-[A-Z0-9]+\.js$/.test(path))).toBe(true);
  });

  it('a bash step judged by rules loads the bash grammar (tree-sitter) once the model calls the tool; its input is checked by the tools’ lean zod (loaded then, never classic zod), so no ajv', async () => {
    standin.reset();
    let step = 0;
    standin.respond = () => (step++ === 0 ? bashCall('echo one') : { text: 'done' });
    const rules = JSON.stringify({ allow: ['bash(echo *)'] });
    const run = await runRecorded(
      'bin/bhrain',
      ['act', '--atom', 'claude/haiku', '--input', 'run echo one', '--quiet', '--permission', 'rules.json'],
      { 'rules.json': rules },
    );
    expect({ code: run.code, stdout: run.stdout }).toEqual({ code: 0, stdout: 'done\n' });
    expect(run.loaded.some((path) => /\/ajv-[A-Z0-9]+\.js$/.test(path))).toBe(false);
    expect(await zodLoaded(run.loaded)).toEqual({ files: 1, under100KB: true, classic: false });
    expect(run.loaded.filter((path) => path.startsWith('node_modules/')).map((path) => path.split('/').slice(1, 2)[0])).toEqual([
      'web-tree-sitter',
    ]);
  });

  it("rhachet's act entry runs from the bundle too (dist/bundle/act.js), and --help loads neither zod nor the loop", async () => {
    standin.reset();
    standin.respond = () => ({ text: 'ok' });
    const act = await runRecorded('dist/bundle/act.js', ['--atom', 'claude/haiku', '--input', 'hi', '--quiet']);
    expect(act.code).toBe(0);
    expect(act.loaded.filter((path) => !path.startsWith('dist/bundle/'))).toEqual([]);
    const help = await runRecorded('bin/bhrain', ['--help']);
    expect(help.code).toBe(0);
    expect(help.loaded.filter((path) => /\/runSkill-[A-Z0-9]+\.js$/.test(path))).toEqual([]);
    // bin, main and 9 shared chunks, the largest the CLI's table of flags: the supplier table, shared with the atoms, is one
    // of them, and the did-you-mean matcher an unknown flag or command needs, shared with the settings checks, another
    expect(help.loaded.length).toBeLessThanOrEqual(11);
  });
});

describe('compile cache (docs/settings.md, Environment): node 22+ keeps compiled code in $XDG_CACHE_HOME/bhrain/compile-cache', () => {
  const supported = typeof (module as { enableCompileCache?: unknown }).enableCompileCache === 'function';

  it.skipIf(!supported)(
    'a run fills the cache dir, and NODE_DISABLE_COMPILE_CACHE=1 leaves it empty (node 20 has no compile cache: skipped there)',
    async () => {
      const cacheOf = async (extra: Record<string, string>) => {
        standin.reset();
        standin.respond = () => ({ text: 'ok' });
        const home = tempDir('bhrain-cache-home-');
        const cwd = tempDir('bhrain-cache-');
        const run = await runProcess({
          command: process.execPath,
          args: [join(PACKAGE_ROOT, 'bin', 'bhrain'), 'act', '--atom', 'claude/haiku', '--input', 'hi', '--quiet'],
          cwd,
          env: { ...genCliEnv({ standin, home }), ...extra },
        });
        expect(run.code).toBe(0);
        return readdir(join(home, 'cache', 'bhrain', 'compile-cache')).catch(() => [] as string[]);
      };
      expect((await cacheOf({})).length).toBeGreaterThan(0);
      expect(await cacheOf({ NODE_DISABLE_COMPILE_CACHE: '1' })).toEqual([]);
    },
  );
});
