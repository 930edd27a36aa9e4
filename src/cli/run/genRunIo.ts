import { resolve } from 'node:path';
import { readGitCredentials } from '../../agent/git/readGitCredentials.js';
import { genSecretRedactor, type KnownSecret, type SecretRedactor } from '../../core/secrets/genSecretRedactor.js';
import type { SkillName, SkillOptions } from '../genSkillCommand.js';
import { genProgressLog, type ProgressLog } from '../genProgressLog.js';
import { fanOutRunSinks, type RunSinks } from './fanOutRunSinks.js';
import { genProgressSink } from './genProgressSink.js';
import type { SkillHost } from './SkillHost.js';

/**
 * .what = how much progress a run hosted by rhachet writes on stderr
 * .why = rhachet runs a skill in spawnSync with stderr buffered, and spawnSync kills a child whose stderr passes its
 *        maxBuffer (1 MiB by default); rhachet shows that stderr only when the skill fails
 */
const RHACHET_STDERR_MAX_BYTES = 256 * 1024;

/**
 * .what = what every step of one run shares, each set from the start: the flags, how it writes (redacted, to stderr and
 *         stdout), its warnings, its sinks (every output that observes it), and what it closes on every way out
 * .why = a later step gets what an earlier one made as that step's return value, never as a field set on the way
 */
export interface RunIo {
  skill: SkillName;
  options: SkillOptions;
  /** where the run works: the host's cwd, else -C's directory, else process.cwd() */
  cwd: string;
  /** the program hosting the run (`bhrain mcp serve`), or null for the CLI */
  host: SkillHost | null;
  redact: SecretRedactor;
  /** redacts these too, from now on, wherever `redact` is used (the values of masked credentials, once read) */
  addSecrets: (secrets: readonly KnownSecret[]) => void;
  log: ProgressLog;
  /** --output json or stream-json: stdout ends with exactly one result object */
  machine: boolean;
  /** rhachet passes its --skill on to the skill: it buffers stderr, drops it on success, and prints a header on stdout */
  viaRhachet: boolean;
  /** a JSON line on stdout; nothing for a hosted run (stdout is its host's channel: it gets the result object returned) */
  writeLine: (value: unknown) => void;
  warnings: string[];
  warn: (message: string) => void;
  /** every output of the run, each one a sink: the progress display from the start, the others added as they open */
  sinks: RunSinks;
  /** what must be closed on every way out (MCP servers, the domain proxy): registered by the step that opens it */
  closeOnExit: (close: () => Promise<void>) => void;
  /** closes all of it, together */
  closeAll: () => Promise<void>;
}

/**
 * .what = the values of the OTLP exporters' headers (OTEL_EXPORTER_OTLP_[TRACES_|METRICS_|LOGS_]HEADERS, `k=v,k=v`,
 *         values percent-encoded), and the credential after a scheme (`Bearer <token>`), as secrets to redact
 * .why = they carry a collector's API key under a name that does not look secret, and a shell the model drives can print
 *        the environment: redacted everywhere, whether telemetry is on or not
 */
const readOtlpHeaderSecrets = (env: Record<string, string | undefined>): KnownSecret[] =>
  ['', 'TRACES_', 'METRICS_', 'LOGS_'].flatMap((signal) => {
    const name = `OTEL_EXPORTER_OTLP_${signal}HEADERS`;
    return (env[name] ?? '').split(',').flatMap((pair) => {
      const raw = pair.slice(pair.indexOf('=') + 1).trim();
      if (!pair.includes('=') || !raw) return [];
      let decoded = raw;
      try {
        decoded = decodeURIComponent(raw);
      } catch {
        // not percent-encoded after all: the raw value is the value
      }
      const credential = decoded.split(/\s+/).at(-1)!;
      return [...new Set([raw, decoded, credential])].map((value) => ({ name, value }));
    });
  });

/** .what = a run's shared state, before anything is checked: its redactor, its log and progress display, its sinks */
export const genRunIo = (skill: SkillName, options: SkillOptions, host: SkillHost | null = null): RunIo => {
  const cwd = host?.cwd ?? (options.cd === undefined ? process.cwd() : resolve(options.cd));
  // secrets in the environment, and the credentials in the repository's git config (a checkout token), never reach the
  // model, the terminal, the run record or the refs store: the config is read once, here, and a bad one is skipped
  const known = [...readGitCredentials({ cwd }, { env: process.env }).secrets, ...readOtlpHeaderSecrets(process.env)];
  let redactor = genSecretRedactor(process.env, known);
  // every use goes through the latest redactor: the masked credentials' values are added once the settings name them
  const redact: SecretRedactor = Object.assign((text: string) => redactor(text), {
    head: (text: string) => redactor.head(text),
    tail: (text: string) => redactor.tail(text),
  });
  const addSecrets = (secrets: readonly KnownSecret[]) => {
    known.push(...secrets);
    redactor = genSecretRedactor(process.env, known);
  };
  const viaRhachet = !host && options.skill !== undefined;
  const log = genProgressLog({
    stream: process.stderr,
    quiet: !!options.quiet,
    redact,
    env: process.env,
    maxBytes: viaRhachet ? RHACHET_STDERR_MAX_BYTES : undefined,
  });
  const warnings: string[] = [];
  const warn = (message: string) => {
    warnings.push(message);
    log.warn(message);
  };
  const sinks = fanOutRunSinks({ warn });
  sinks.add(genProgressSink({ log, redact }));
  const closes: Array<() => Promise<void>> = [];
  return {
    skill,
    options,
    cwd,
    host,
    redact,
    addSecrets,
    log,
    // a hosted run always ends in the one result object, which the host gets instead of stdout
    machine: !!host || options.output === 'json' || options.output === 'stream-json',
    viaRhachet,
    writeLine: host ? () => {} : (value) => process.stdout.write(`${JSON.stringify(value)}\n`),
    warnings,
    warn,
    sinks,
    closeOnExit: (close) => void closes.push(close),
    closeAll: async () => void (await Promise.all(closes.map((close) => close()))),
  };
};
