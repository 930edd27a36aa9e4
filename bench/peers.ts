import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

const require = createRequire(import.meta.url);

/** .what = the package root (bench code runs from bench/ in vitest and from .bench/bench/ when compiled) */
export const findPackageRoot = (): string => {
  for (let dir = dirname(new URL(import.meta.url).pathname); dir !== '/'; dir = dirname(dir)) {
    try {
      if (JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')).name === 'rhachet-roles-bhrain') return dir;
    } catch {
      // not here: one level up
    }
  }
  throw new Error('cannot find the rhachet-roles-bhrain package root above the bench code');
};

/** .what = an agent CLI under test: how to start it on a task against the stand-in, and which protocol it speaks */
export interface Peer {
  name: string;
  protocol: 'anthropic' | 'openai';
  /** the shell tool the model is told to call, and its input for a command */
  shellCall: (command: string) => { name: string; input: Record<string, unknown> };
  /** null when available; otherwise why not */
  unavailable: string | null;
  help: () => { command: string; args: string[] };
  task: (input: { prompt: string; standinUrl: string; home: string }) => {
    command: string;
    args: string[];
    env: Record<string, string | undefined>;
  };
}

const BASE_ENV = () => ({
  PATH: process.env.PATH,
  DISABLE_AUTOUPDATER: '1',
  CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
  DISABLE_TELEMETRY: '1',
});

/** .what = the binary a package declares, resolved from node_modules, or the reason it is missing */
const resolvePackageBin = (pkg: string, bin: string): { path: string | null; reason: string | null } => {
  try {
    const manifestPath = require.resolve(`${pkg}/package.json`);
    const manifest = JSON.parse(readFileSync(manifestPath, 'utf8'));
    const relative = typeof manifest.bin === 'string' ? manifest.bin : manifest.bin?.[bin];
    return { path: join(dirname(manifestPath), relative), reason: null };
  } catch {
    return { path: null, reason: `${pkg} is not installed (it is a devDependency: npm ci installs it)` };
  }
};

/** .what = the three harnesses compared: bhrain (on both protocols), Claude Code, Qwen Code */
export const genPeers = (): Peer[] => {
  const root = findPackageRoot();
  const bhrain = join(root, 'bin', 'bhrain');
  const claude = resolvePackageBin('@anthropic-ai/claude-code', 'claude');
  const qwen = resolvePackageBin('@qwen-code/qwen-code', 'qwen');
  const bhrainPeer = (name: string, atom: string, protocol: Peer['protocol']): Peer => ({
    name,
    protocol,
    shellCall: (command) => ({ name: 'bash', input: { command } }),
    unavailable: null,
    help: () => ({ command: process.execPath, args: [bhrain, '--help'] }),
    task: ({ prompt, standinUrl, home }) => ({
      command: process.execPath,
      args: [bhrain, 'act', '--atom', atom, '--input', prompt, '--quiet', '--max-iterations', '50'],
      env: {
        ...BASE_ENV(),
        HOME: home,
        BHRAIN_HOME: join(home, '.bhrain'),
        ANTHROPIC_API_KEY: 'bench',
        ANTHROPIC_BASE_URL: standinUrl,
        QWEN_API_KEY: 'bench',
        QWEN_BASE_URL: `${standinUrl}/v1`,
      },
    }),
  });
  return [
    bhrainPeer('bhrain (claude protocol)', 'claude/haiku', 'anthropic'),
    {
      name: 'claude code',
      protocol: 'anthropic',
      shellCall: (command) => ({ name: 'Bash', input: { command, description: 'run the step' } }),
      unavailable: claude.reason,
      help: () => ({ command: claude.path!, args: ['--help'] }),
      task: ({ prompt, standinUrl, home }) => ({
        command: claude.path!,
        args: ['-p', prompt, '--model', 'claude-haiku-4-5', '--allowedTools', 'Bash', '--output-format', 'text'],
        env: { ...BASE_ENV(), HOME: home, ANTHROPIC_API_KEY: 'sk-ant-bench-0123456789abcdefghij', ANTHROPIC_BASE_URL: standinUrl },
      }),
    },
    bhrainPeer('bhrain (qwen protocol)', 'qwen/qwen3-coder-plus', 'openai'),
    {
      name: 'qwen code',
      protocol: 'openai',
      shellCall: (command) => ({ name: 'run_shell_command', input: { command } }),
      unavailable: qwen.reason,
      help: () => ({ command: process.execPath, args: [qwen.path!, '--help'] }),
      task: ({ prompt, standinUrl, home }) => ({
        command: process.execPath,
        args: [qwen.path!, '-p', prompt, '--auth-type', 'openai', '--yolo', '--model', 'qwen3-coder-plus'],
        env: {
          ...BASE_ENV(),
          HOME: home,
          OPENAI_API_KEY: 'bench',
          OPENAI_BASE_URL: `${standinUrl}/v1`,
          QWEN_CODE_SUPPRESS_YOLO_WARNING: '1',
        },
      }),
    },
  ];
};
