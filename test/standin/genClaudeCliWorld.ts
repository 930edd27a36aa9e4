// the world a real Claude Code CLI runs in for tests and the bench: an isolated HOME and cwd, talking only to the stand-in
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** an Anthropic-shaped key: the CLI checks its form, the stand-in accepts any */
export const CLAUDE_CLI_API_KEY = 'sk-ant-api03-bhrain-test-key-0123456789abcdefghij';

/**
 * .what = a temp HOME (onboarding done, the key approved, the cwd trusted, as the interactive CLI needs) and a temp cwd,
 *         with the env that points the real CLI at the stand-in and turns off its own traffic
 */
export const genClaudeCliWorld = async (input: {
  standinUrl: string;
  /** makes a new temp dir from a name prefix: a test's tempDir (removed when its file ends); by default a plain one */
  makeDir?: (prefix: string) => string | Promise<string>;
}) => {
  const makeDir = input.makeDir ?? ((prefix: string) => mkdtemp(join(tmpdir(), prefix)));
  const home = await makeDir('bhrain-cli-home-');
  const cwd = await makeDir('bhrain-cli-cwd-');
  await writeFile(
    join(home, '.claude.json'),
    JSON.stringify({
      hasCompletedOnboarding: true,
      customApiKeyResponses: { approved: [CLAUDE_CLI_API_KEY.slice(-20)], rejected: [] },
      projects: { [cwd]: { hasTrustDialogAccepted: true } },
    }),
  );
  const env: Record<string, string | undefined> = {
    PATH: process.env.PATH,
    HOME: home,
    ANTHROPIC_BASE_URL: input.standinUrl,
    ANTHROPIC_API_KEY: CLAUDE_CLI_API_KEY,
    DISABLE_AUTOUPDATER: '1',
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    DISABLE_TELEMETRY: '1',
    IS_SANDBOX: '1',
  };
  return { home, cwd, env };
};

/** terminal output without escape sequences, for reading what the screen says */
export const plainScreen = (text: string) => text.replace(/\x1b\[[0-9;?]*[ -/]*[@-~]/g, '').replace(/\x1b\][^\x07]*\x07/g, '');

/** polls a check every 50 ms until it holds; the error says what was seen when time ran out */
export const waitFor = async (check: () => boolean, timeoutMs = 20_000, describe: () => string = () => '') => {
  const until = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > until) throw new Error(`timed out waiting${describe() ? `; ${describe()}` : ''}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
};
