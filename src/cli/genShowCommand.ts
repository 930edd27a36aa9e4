import { readFile } from 'node:fs/promises';
import { isAbsolute, join, resolve } from 'node:path';

import { Command } from 'commander';

import type { BrainEpisode } from '../core/contract/BrainEpisode.js';
import type { BrainSeries } from '../core/contract/BrainSeries.js';
import { BadRequestError, EpisodeCompactedError } from '../core/contract/errors.js';
import { EXIT_CODES } from './exitCodes.js';
import { reportReadCommandFailure, type ReadCommandContext } from './genRunsCommand.js';
import type { RunRecordMeta } from './runRecord.js';
import type { BrainRefStore } from '../core/continuation/genBrainRefStore.js';

/** .what = what `show` found for its argument: a recorded run, or only a ref in the refs store */
type Shown =
  | { source: 'run'; meta: RunRecordMeta; dir: string }
  | { source: 'refs'; kind: 'series'; ref: BrainSeries }
  | { source: 'refs'; kind: 'episode'; ref: BrainEpisode };

/** .what = a ref: the hex hash a run printed, or a prefix of at least 8 characters */
const REF = /^[0-9a-f]{8,64}$/;

/**
 * .what = finds what an argument names, in this order: a record directory (an argument with a `/`); a ref (8 or more
 *         hex digits: no run id is one, it holds `-`): a run whose episode or series hash starts with it, then the refs
 *         store (series, then episode); anything else, the run whose id it is, or starts or ends (findRunById)
 * .why = a user holds whichever the CLI printed: `record:`, an id from `bhrain runs` or its tail, or the
 *        `episode:`/`series:` refs
 */
const findShown = async (arg: string, context: { home: string; cwd: string; openStore: () => Promise<BrainRefStore> }): Promise<Shown> => {
  const { listRunRecords, readRunRecordMeta } = await import('./runRecord.js');
  const { describeAmbiguousRuns, findRunById } = await import('./findRunById.js');
  if (arg.includes('/') || isAbsolute(arg)) {
    const dir = resolve(context.cwd, arg);
    return { source: 'run', meta: await readRunRecordMeta(dir), dir };
  }
  const { runs } = await listRunRecords({ home: context.home });
  const kept = `\`bhrain runs\` lists the recorded runs (kept in ${join(context.home, 'runs')})`;
  if (!REF.test(arg)) {
    const run = findRunById({
      runs,
      arg,
      hint: `${kept}; a ref is the hex hash (at least 8 characters) a run printed as episode: or series:`,
    });
    return { source: 'run', meta: run, dir: run.dir };
  }
  const byRef = runs.filter((run) => run.refs && (run.refs.series.startsWith(arg) || run.refs.episode.startsWith(arg)));
  // one hash may belong to several runs (the same question answered the same way): the newest stands for them
  const hashes = new Set(byRef.map((run) => (run.refs!.series.startsWith(arg) ? run.refs!.series : run.refs!.episode)));
  const candidates = hashes.size === 1 ? [byRef[0]] : byRef;
  if (candidates.length > 1) throw new BadRequestError(describeAmbiguousRuns(arg, candidates));
  if (candidates.length === 1) return { source: 'run', meta: candidates[0], dir: candidates[0].dir };

  const notFound = `no run or ref matches '${arg}': ${kept}; a ref is the hex hash (at least 8 characters) a run printed as episode: or series:, kept in ${join(context.home, 'refs')} (set BHRAIN_HOME to the home the run used)`;
  // a ref whose run record is gone (pruned, --no-record, --record-dir, another machine's) may still be in the refs store
  const store = await context.openStore();
  const errors: Error[] = [];
  const series = await store.getSeries(arg).catch((error: Error) => void errors.push(error));
  if (series) return { source: 'refs', kind: 'series', ref: series };
  const episode = await store.getEpisode(arg).catch((error: Error) => {
    // a compacted episode cannot be continued, but it can be read
    if (error instanceof EpisodeCompactedError) return error.ref.episode as BrainEpisode;
    errors.push(error);
  });
  if (episode) return { source: 'refs', kind: 'episode', ref: episode };
  // not found in both kinds: our message; anything else (ambiguous, damaged) is the store's own
  const other = errors.find((error) => !/\bnot found\b/.test(error.message));
  if (other) throw other;
  throw new BadRequestError(
    store.home === undefined
      ? notFound.replace(
          `kept in ${join(context.home, 'refs')} (set BHRAIN_HOME to the home the run used)`,
          `kept in ${store.location} (set BHRAIN_STORE, or --store, to the store the run used)`,
        )
      : notFound,
  );
};

/** .what = a transcript message, as read back from transcript.json (not trusted to have the loop's shape) */
interface RecordedMessage {
  role?: unknown;
  content?: unknown;
  toolCalls?: Array<{ id?: unknown; name?: unknown; input?: unknown; inputError?: unknown }>;
  toolName?: unknown;
  isError?: unknown;
}

/** .what = a transcript as text a person reads: each message under a rule naming its role, tool calls as `→ name {input}` */
const formatTranscript = (messages: readonly RecordedMessage[]): string =>
  messages
    .map((message) => {
      if (message.role === 'assistant') {
        const calls = (Array.isArray(message.toolCalls) ? message.toolCalls : []).map(
          (call) =>
            `→ ${String(call.name)} ${JSON.stringify(call.input ?? {})}${call.inputError ? `  (not run: ${String(call.inputError)})` : ''}`,
        );
        return [`── assistant ──`, ...(message.content ? [String(message.content)] : []), ...calls].join('\n');
      }
      if (message.role === 'tool')
        return `── ${String(message.toolName)} result${message.isError ? ' (error)' : ''} ──\n${String(message.content ?? '')}`;
      if (typeof message.role === 'string' && typeof message.content === 'string') return `── ${message.role} ──\n${message.content}`;
      return `── (unrecognized message) ──\n${JSON.stringify(message)}`;
    })
    .join('\n\n');

/** .what = an answer as a block that ends with exactly one line break */
const asBlock = (text: string): string => (text.endsWith('\n') ? text : `${text}\n`);

/** .what = a run's one-line summary: what, with which atom, how it ended, what it cost */
const formatRunHeader = (meta: RunRecordMeta, dir: string): string => {
  const parts = [
    `${meta.skill} with ${meta.atom}`,
    meta.termination ?? 'unfinished',
    ...(meta.metrics
      ? [
          `${meta.metrics.iterations} iterations`,
          `${meta.metrics.cost.usd === null ? 'cost unknown' : `$${meta.metrics.cost.usd.toFixed(4)}`}`,
        ]
      : []),
    `started ${meta.startedAt}`,
    `in ${meta.cwd}`,
  ];
  const refs = meta.refs ? `\nepisode: ${meta.refs.episode}\nseries: ${meta.refs.series}` : '';
  const error = meta.error ? `\nerror (${meta.error.code}): ${meta.error.message}` : '';
  return `══ run ${meta.id}: ${parts.join(', ')}\nrecord: ${dir}${refs}${error}`;
};

/** .what = the exchanges of a ref from the store, as user/assistant turns with the tool calls between them, episode by episode */
const formatExchanges = async (shown: Extract<Shown, { source: 'refs' }>): Promise<string> => {
  // loaded only to show a ref: --help and the other commands never need it
  const { asPlaintextSteps } = await import('../core/contract/asPlaintext.js');
  const episodes = shown.kind === 'series' ? shown.ref.episodes : [shown.ref];
  return episodes
    .map((episode, index) =>
      [
        ...(episodes.length > 1 ? [`══ episode ${index + 1} of ${episodes.length}: ${episode.hash}`] : []),
        ...episode.exchanges.map((exchange) =>
          [
            `── user ──\n${exchange.input}`,
            ...(exchange.steps?.length ? [`── tool calls ──\n${asPlaintextSteps(exchange.steps)}`] : []),
            `── assistant ──\n${exchange.output}`,
          ].join('\n\n'),
        ),
      ].join('\n\n'),
    )
    .join('\n\n');
};

/** .what = a recorded file, or null when the run never wrote it (unfinished) */
const readOptional = (path: string): Promise<string | null> =>
  readFile(path, 'utf8').catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return null;
    throw new BadRequestError(`the run record file ${path} cannot be read (${error.code ?? error.message})`, { cause: error });
  });

/**
 * .what = the `bhrain show <run | ref>` command: one run's answer, then its transcript (roles, tool calls, results);
 *         `--output json` prints the whole record as one object. A ref with no run record left prints its last answer
 *         and its exchanges from the refs store
 * .why = an answer must never be only inside raw ref JSON or a record file a user has to find
 */
export const genShowCommand = (context: ReadCommandContext & { cwd?: string } = {}): Command => {
  const stdout = context.stdout ?? process.stdout;
  const stderr = context.stderr ?? process.stderr;
  const setExitCode = context.setExitCode ?? ((code: number) => void (process.exitCode = code));
  return new Command('show')
    .description("print a run's answer, then its transcript")
    .argument(
      '<run>',
      'a run id from `bhrain runs`, or its start or its end (the 6 hex digits) if no other run shares it; a record directory; or an episode or series ref (8+ hex characters)',
    )
    .option('-o, --output <format>', 'text, or json (the record as one object)', 'text')
    .option(
      '--store <url>',
      'the shared ref store to look refs up in: s3://bucket/prefix (default: BHRAIN_STORE, your settings, else the local one)',
    )
    .addHelpText(
      'after',
      '\nExamples:\n  $ bhrain show 2025-06-01T09-30-00-123Z-a1b2c3   # an id from `bhrain runs`\n  $ bhrain show a1b2c3                            # the same run, by the end of its id\n  $ bhrain show 3f2a9c1e                          # the episode: or series: ref a run printed\n  $ bhrain show ./bhrain-record -o json           # a --record-dir directory, as JSON',
    )
    .action(async (arg: string, options: { output: string; store?: string }) => {
      const json = options.output === 'json';
      try {
        if (!['text', 'json'].includes(options.output))
          throw new BadRequestError(`unknown --output '${options.output}': choose text or json`);
        const { getBhrainHome } = await import('../core/continuation/genBrainRefStore.js');
        const home = context.home ?? getBhrainHome();
        // the store setting is read (and checked) first: a bad one is an error whatever the argument names
        const { resolveStoreSetting } = await import('./settings/resolveStoreSetting.js');
        const storeSetting = await resolveStoreSetting({ flag: options.store, env: process.env });
        const openStore = async () =>
          (await import('../core/continuation/genBrainRefStore.js')).openBrainRefStore({
            url: storeSetting,
            home,
            endpoint: process.env.BHRAIN_S3_ENDPOINT || undefined,
            env: process.env,
          });
        const shown = await findShown(arg, { home, cwd: context.cwd ?? process.cwd(), openStore });
        if (shown.source === 'run') {
          const [input, output, transcriptText] = await Promise.all(
            ['input.md', 'output.md', 'transcript.json'].map((name) => readOptional(join(shown.dir, name))),
          );
          let transcript: unknown = null;
          try {
            transcript = transcriptText === null ? null : JSON.parse(transcriptText);
          } catch (error) {
            throw new BadRequestError(
              `the transcript ${join(shown.dir, 'transcript.json')} is not valid JSON (${(error as Error).message})`,
              { cause: error },
            );
          }
          if (json) {
            stdout.write(`${JSON.stringify({ source: 'run', ...shown.meta, dir: shown.dir, input, output, transcript })}\n`);
          } else {
            const messages = Array.isArray(transcript) ? (transcript as RecordedMessage[]) : [];
            stdout.write(
              [
                output === null ? '(no answer: the run is unfinished, or stopped before it answered)\n' : asBlock(output),
                `\n${formatRunHeader(shown.meta, shown.dir)}\n`,
                ...(messages.length ? [`\n${asBlock(formatTranscript(messages))}`] : ['\n(no transcript)\n']),
              ].join(''),
            );
          }
        } else {
          const episodes = shown.kind === 'series' ? shown.ref.episodes : [shown.ref];
          const last = episodes.at(-1)?.exchanges.at(-1) ?? null;
          if (json) {
            const { RUN_RECORD_SCHEMA_VERSION } = await import('./runRecord.js');
            stdout.write(
              `${JSON.stringify({ source: 'refs', schemaVersion: RUN_RECORD_SCHEMA_VERSION, kind: shown.kind, hash: shown.ref.hash, output: last?.output ?? null, [shown.kind]: shown.ref })}\n`,
            );
          } else {
            stdout.write(
              [
                last ? asBlock(last.output) : '(no answer: the ref holds no exchange)\n',
                `\n══ ${shown.kind} ${shown.ref.hash}: no run record is left for it (pruned, --no-record, or recorded elsewhere); its exchanges from the refs store:\n`,
                `\n${asBlock(await formatExchanges(shown))}`,
              ].join(''),
            );
          }
        }
        setExitCode(EXIT_CODES.complete);
      } catch (error) {
        reportReadCommandFailure({ command: 'show', error, json }, { stdout, stderr, setExitCode });
      }
    });
};
