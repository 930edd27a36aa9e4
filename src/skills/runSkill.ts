import { BRAIN_ATOM_SLUGS } from '../atoms/genBrainAtom.js';
import { genSummarizeOnLimit } from '../archs/bhrain.struct.v1/memory/genSummarizeOnLimit.js';
import { genTruncate } from '../archs/bhrain.struct.v1/memory/genTruncate.js';
import { getBhrainHome, genBrainRefStore } from '../continuation/genBrainRefStore.js';
import { genSecretRedactor } from '../security/genSecretRedactor.js';
import { redactBrainEpisode, redactBrainSeries } from '../security/redactBrainRefs.js';
import { BadRequestError, BhrainError } from '../contract/errors.js';
import { BRAIN_REPL_ARCHS, genBrainRepl, type BrainReplOn } from '../repls/genBrainRepl.js';
import { EXIT_CODES, exitCodeOf } from './exitCodes.js';
import type { SkillName, SkillOptions } from './genSkillCommand.js';
import { genProgressLog } from './genProgressLog.js';
import { genTtyPrompter } from './genTtyPrompter.js';
import { readSkillInput } from './readSkillInput.js';
import { resolvePermission } from './resolvePermission.js';
import { writeRunRecord } from './writeRunRecord.js';

const MEMORY = { 'summarize-on-limit': genSummarizeOnLimit, truncate: genTruncate } as const;

/** .what = every flag checked before anything runs; each failure names the flag and the valid choices */
const validateOptions = (options: SkillOptions) => {
  if (!BRAIN_REPL_ARCHS.includes(options.arch as (typeof BRAIN_REPL_ARCHS)[number]))
    throw new BadRequestError(`unknown --arch '${options.arch}': choose one of ${BRAIN_REPL_ARCHS.join(', ')}`);
  if (!options.atom) throw new BadRequestError(`missing --atom: choose one of ${BRAIN_ATOM_SLUGS.join(', ')}`);
  if (!['text', 'json'].includes(options.output)) throw new BadRequestError(`unknown --output '${options.output}': choose text or json`);
  if (!(options.memory in MEMORY))
    throw new BadRequestError(`unknown --memory '${options.memory}': choose ${Object.keys(MEMORY).join(' or ')}`);
  const maxIterations = options.maxIterations === undefined ? undefined : Number(options.maxIterations);
  if (maxIterations !== undefined && !(Number.isInteger(maxIterations) && maxIterations >= 1))
    throw new BadRequestError(`--max-iterations must be a whole number of at least 1, got '${options.maxIterations}'`);
  if (options.onEpisode && options.onSeries)
    throw new BadRequestError('give --on-episode or --on-series, not both: --on-series continues a conversation, --on-episode branches from a checkpoint');
  const timeoutMs = options.timeoutMs === undefined ? undefined : Number(options.timeoutMs);
  if (timeoutMs !== undefined && !(Number.isInteger(timeoutMs) && timeoutMs >= 1))
    throw new BadRequestError(`--timeout-ms must be a whole number of milliseconds of at least 1, got '${options.timeoutMs}'`);
  return { maxIterations, timeoutMs, memory: MEMORY[options.memory as keyof typeof MEMORY]() };
};

/**
 * .what = one run of a skill: flags → config → loop → refs saved → record written → answer printed
 * .why = the one implementation behind `bhrain <skill>` and the rhachet skill; returns the exit code
 */
export const runSkill = async (skill: SkillName, options: SkillOptions): Promise<number> => {
  // secrets in the environment never reach the model, the terminal, the run record or the refs store
  const redact = genSecretRedactor(process.env);
  const log = genProgressLog({ stream: process.stderr, quiet: !!options.quiet, redact });
  try {
    const cwd = process.cwd();
    const { maxIterations, timeoutMs, memory } = validateOptions(options);
    const permissionGuard = await resolvePermission(skill === 'ask' ? 'readOnly' : options.permission, cwd);
    const repl = genBrainRepl({ slug: `${options.arch}@${options.atom}`, config: { permissionGuard, memoryManager: memory, maxIterations } });
    const store = genBrainRefStore({ home: getBhrainHome() });
    const on: BrainReplOn | undefined = options.onSeries
      ? { series: await store.getSeries(options.onSeries) }
      : options.onEpisode
        ? { episode: await store.getEpisode(options.onEpisode) }
        : undefined;
    const prompt = redact(await readSkillInput({ flag: options.input, stdin: process.stdin }));
    if (!prompt.trim())
      throw new BadRequestError('missing input: the task is empty. Pass it with --input "..." or pipe it on stdin');

    const interactive = !!process.stdin.isTTY && !!process.stderr.isTTY;
    // Ctrl-C or a CI cancel stops the run gracefully: tools are killed, the refs saved, exit 130; a second one exits at once
    const interrupt = new AbortController();
    const onSignal = (signal: NodeJS.Signals) => {
      if (interrupt.signal.aborted) process.exit(EXIT_CODES.interrupted);
      log.warn(`${signal}: stopping (the run's refs are saved); send it again to exit at once`);
      interrupt.abort();
    };
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
    const context = {
      cwd,
      log,
      env: process.env,
      timeoutMs,
      signal: interrupt.signal,
      prompter: interactive ? genTtyPrompter({ stdin: process.stdin, stderr: process.stderr }) : undefined,
    };
    const result = skill === 'ask' ? await repl.ask({ say: prompt, on }, context) : await repl.act({ do: prompt, on }, context);
    const { session } = result;
    // the answer may hold a secret the model decoded from a form redaction cannot match (base64): nothing printed or kept does
    const output = redact(session.output);
    const episode = redactBrainEpisode(result.episode, redact);
    const series = redactBrainSeries(result.series, redact);

    // every run is a checkpoint, a failed one too (its exchange records the error), so there is always a ref to resume from
    await Promise.all([
      store.saveEpisode(episode),
      store.saveSeries(series),
      store.markCompacted(series.episodes.slice(0, -1).map((compacted) => compacted.hash)),
    ]);
    const refs = { episode: episode.hash, series: series.hash };
    const metrics = {
      iterations: session.iterations,
      tokens: session.tokens,
      cost: { usd: session.cash?.total ?? null },
      elapsedMs: session.elapsedMs,
    };
    const record = await writeRunRecord({ cwd, skill, prompt, output, refs, metrics, transcript: session.transcript, redact });
    log.stop();

    if (options.output === 'json')
      process.stdout.write(
        `${JSON.stringify({
          output,
          termination: session.termination,
          episode: { hash: refs.episode },
          series: { hash: refs.series },
          metrics,
          ...(session.error ? { error: { code: session.error.code, message: redact(session.error.message) } } : {}),
        })}\n`,
      );
    else if (output) process.stdout.write(output.endsWith('\n') ? output : `${output}\n`);
    if (session.error) log.error(session.error.message);
    if (!options.quiet) {
      process.stderr.write(`episode: ${refs.episode}\nseries: ${refs.series}\n`);
      process.stderr.write(`record: ${record}\n`);
    }
    return exitCodeOf(session.termination, session.error?.exitCode ?? null);
  } catch (error) {
    log.stop();
    if (error instanceof BhrainError) {
      process.stderr.write(redact(`bhrain ${skill}: ${error.message}\n`));
      return error.exitCode;
    }
    process.stderr.write(
      redact(`bhrain ${skill}: unexpected failure: ${(error as Error)?.message ?? error}${options.debug ? `\n${(error as Error)?.stack}` : ' (run with --debug for the stack)'}\n`),
    );
    return EXIT_CODES.crash;
  }
};
