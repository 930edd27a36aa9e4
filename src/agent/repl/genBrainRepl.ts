import type { PickOne } from 'type-fns';
import type { z } from 'zod';

import { asBrainAtom } from '../../providers/asBrainAtom.js';
import { genBrainAtom } from '../../providers/genBrainAtom.js';
import { preloadAjv } from '../../providers/structured/compileJsonSchema.js';
import { runStructuredOutputTurn } from '../../providers/structured/runStructuredOutputTurn.js';
import { compileOutputSchema, instructSchema } from '../../providers/structured/structuredOutput.js';
import type { BrainAtom } from '../../core/contract/BrainAtom.js';
import type { RhachetSupplierAtom } from '../../rhachet/contract/RhachetSupplierAtom.js';
import type { BhrainConfig } from '../config/BhrainConfig.js';
import type { BhrainContext } from '../BhrainContext.js';
import type { BhrainSessionResult } from '../BhrainSessionResult.js';
import { genBhrain, type Bhrain } from '../genBhrain.js';
import { addRequestSpend, addSpend, emptySpend, type BhrainSpend } from '../session/checkBudget.js';
import type { BhrainPermissionGuard } from '../permission/BhrainPermissionGuard.js';
import { readOnly } from '../permission/builtinGuards.js';
import type { BhrainToolBox } from '../tool/BhrainToolBox.js';
import { genToolset } from '../toolboxes/genToolset.js';
import { asExchangeSteps } from '../../core/continuation/asExchangeSteps.js';
import { asPriorTurns } from '../../core/continuation/asPriorTurns.js';
import { compactEpisode } from '../../core/continuation/compactEpisode.js';
import { isEpisodeCompacted, markEpisodesCompacted, type BrainCompactionMarks } from '../../core/continuation/compactedEpisodes.js';
import { assertBrainEpisode, assertBrainSeries } from '../../core/contract/assertBrainRef.js';
import { silentLog } from '../../core/contract/BrainContext.js';
import { appendBrainExchange, type BrainEpisode } from '../../core/contract/BrainEpisode.js';
import { genBrainExchange } from '../../core/contract/BrainExchange.js';
import type { BrainOutput } from '../../core/contract/BrainOutput.js';
import { genBrainSeries, getCurrentEpisode, replaceCurrentEpisode, type BrainSeries } from '../../core/contract/BrainSeries.js';
import { BadRequestError, ContinuationNotSupportedError, EpisodeCompactedError } from '../../core/contract/errors.js';
import { refuseRhachetCall } from '../../rhachet/contract/refuseRhachetCall.js';
import { addCash, addTokens } from '../../core/contract/tokens.js';
import { pluralize } from '../../core/text/pluralize.js';

/** .what = the archs a repl can run */
export const BRAIN_REPL_ARCHS = ['bhrain.struct.v1'] as const;

/** share of the context window an episode may fill before the repl compacts it into a recap */
export const REPL_COMPACT_AT_RATIO = 0.6;

/** .what = continue from exactly one of: an episode (branch, revive) or a series (linear continuation) */
export type BrainReplOn = PickOne<{ episode: BrainEpisode; series: BrainSeries }>;

/**
 * .what = a repl call's output plus the loop session behind it (termination, transcript, tool calls)
 * .note = with a schema, output is the validated value when session.termination is 'complete'; otherwise (max-iterations,
 *         budget, error: an OutputInvalidError in session.error when the answer did not fit after one corrective turn) it
 *         is the answer's text, as in session.output
 */
export type BrainReplOutput<TOutput = string> = BrainOutput<TOutput, BrainSeries> & { session: BhrainSessionResult };

/** .what = the shape a repl call's answer must have: a zod schema (typed) or a plain JSON Schema object (validated by ajv) */
export type BrainReplSchema<TOutput = unknown> =
  { output: z.ZodType<TOutput>; jsonSchema?: never } | { jsonSchema: object; output?: never };

/** .what = a repl call; a zod schema types the output, a JSON Schema leaves it unknown, none makes it the answer's text */
export interface BrainReplCall<TInput> {
  <TOutput = string>(
    call: TInput & { on?: BrainReplOn; schema?: { output: z.ZodType<TOutput> } },
    context?: BhrainContext,
  ): Promise<BrainReplOutput<TOutput>>;
  (call: TInput & { on?: BrainReplOn; schema?: { jsonSchema: object } }, context?: BhrainContext): Promise<BrainReplOutput<unknown>>;
}

/** .what = the spend of a finished session, toward the budget of what follows it in the same call */
const spendOf = (session: BhrainSessionResult): BhrainSpend => ({
  tokens: session.tokens,
  // a session without requests has no cash; one whose price was unknown has none either, and stays unknown (fail closed)
  cash: session.cash ?? (session.iterations ? null : emptySpend().cash),
  elapsedMs: session.elapsedMs,
  requests: session.iterations,
});

/** .what = a session and its corrective turn as one: the second's ending and context, both sessions' spend and calls */
const mergeSessions = (first: BhrainSessionResult, second: BhrainSessionResult): BhrainSessionResult => ({
  ...second,
  iterations: first.iterations + second.iterations,
  tokens: addTokens(first.tokens, second.tokens),
  cash: addCash(first.cash, second.cash),
  elapsedMs: first.elapsedMs + second.elapsedMs,
  transcript: [...first.transcript, ...second.transcript.slice(first.messages.length)],
  compactions: [...first.compactions, ...second.compactions],
  subagents: [...first.subagents, ...second.subagents],
  toolCalls: {
    made: first.toolCalls.made + second.toolCalls.made,
    failed: first.toolCalls.failed + second.toolCalls.failed,
    denied: first.toolCalls.denied + second.toolCalls.denied,
    promptedDenied: first.toolCalls.promptedDenied + second.toolCalls.promptedDenied,
    denials: [...first.toolCalls.denials, ...second.toolCalls.denials],
  },
});

/** .what = reads `arch@atom` (the arch defaults to bhrain.struct.v1) */
const parseReplSlug = (slug: string): { arch: string; atom: string } => {
  const [arch, atom] = slug.includes('@') ? slug.split('@', 2) : ['bhrain.struct.v1', slug];
  if (!BRAIN_REPL_ARCHS.includes(arch as (typeof BRAIN_REPL_ARCHS)[number]))
    throw new BadRequestError(`unknown arch '${arch}': choose one of ${BRAIN_REPL_ARCHS.join(', ')}`);
  return { arch, atom };
};

/**
 * .what = what one repl call adds to the repl's own setup: toolboxes offered for this call only (ask allows their tools
 *         besides the read-only ones), and system prompt text after config.systemPrompt
 * .why = a caller's own tools (rhachet's plugs.tools) run inside the loop without touching the repl's shared toolboxes,
 *        so concurrent calls never see each other's tools
 */
export interface BrainReplCallPlugs {
  toolBoxes?: readonly BhrainToolBox[];
  systemPrompt?: string;
}

/** .what = the read-only guard, which also allows the tools of the call's own toolboxes */
const readOnlyAnd = (names: ReadonlySet<string>): BhrainPermissionGuard => ({
  name: `${readOnly.name}+${[...names].join(',')}`,
  check: (input, context) => (names.has(input.call.name) ? { decision: 'allow' } : readOnly.check(input, context)),
});

/** .what = what a repl is made over: its atom (or slug) and the config of its brains */
type BrainReplInput = ({ slug: string; atom?: never } | { atom: BrainAtom | RhachetSupplierAtom; slug?: never }) & {
  config?: Omit<BhrainConfig, 'atom' | 'toolBoxes'>;
  /**
   * where the repl records the episodes it compacted, so that every process reading the same store refuses to continue
   * them (genBrainRefStore({ home: getBhrainHome() }) is the CLI's); absent = this process, and the series refs, only
   */
  refStore?: BrainCompactionMarks;
};

/** .what = the brains behind ask (read-only tools, the readOnly guard) and act (files, bash, websearch) */
const genReplBrains = (atom: BrainAtom, config: BrainReplInput['config']) => ({
  ask: genBhrain({
    ...config,
    atom,
    permissionGuard: readOnly,
    // read-only: no guard of the caller's, so only the config's own sandbox.allowRead hands paths back
    toolBoxes: genToolset({ access: 'read-only', sandbox: config?.sandbox }),
  }),
  act: genBhrain({
    ...config,
    atom,
    // hidden beyond the defaults, and handed back by its config and its guard's rules
    toolBoxes: genToolset({ access: 'all', sandbox: config?.sandbox, permissionGuard: config?.permissionGuard }),
  }),
});

/** .what = the brain of one call: the repl's own, or (with plugs) one over its current toolboxes plus the call's */
const brainForCall = (
  input: { brains: ReturnType<typeof genReplBrains>; atom: BrainAtom; config: BrainReplInput['config'] },
  mode: 'ask' | 'act',
  plugs: BrainReplCallPlugs,
): Bhrain => {
  const extra = plugs.toolBoxes ?? [];
  if (!extra.length && !plugs.systemPrompt) return input.brains[mode];
  const names = new Set(extra.flatMap((box) => box.definitions.map((definition) => definition.name)));
  return genBhrain({
    ...input.config,
    atom: input.atom,
    systemPrompt: [input.config?.systemPrompt, plugs.systemPrompt].filter((part) => !!part).join('\n\n') || undefined,
    toolBoxes: [...input.brains[mode].toolBoxes.list(), ...extra],
    ...(mode === 'ask' ? { permissionGuard: readOnlyAnd(names) } : {}),
  });
};

/**
 * .what = the starting point of a call: the episode to build on and the series it belongs to, if any; an episode a
 *         series compacted (seen by this process, or recorded in the repl's ref store) is refused
 */
const resolveOn = async (
  on: BrainReplOn | undefined,
  repl: { atom: BrainAtom; slug: string; latest: BrainSeries | null; refStore: BrainCompactionMarks | null },
): Promise<{ episode: BrainEpisode | null; series: BrainSeries | null }> => {
  if (!on) return { episode: null, series: null };
  if (on.episode && on.series)
    throw new BadRequestError('on takes exactly one of episode or series, not both: pass { episode } to branch or { series } to continue');
  if (repl.atom.spec.continuation === false)
    throw new ContinuationNotSupportedError(
      `${repl.slug} does not support continuation. Continue this ${on.series ? 'series' : 'episode'} (error.ref) on a brain that can, or call without \`on\``,
      on,
    );
  if (on.series) {
    const series = assertBrainSeries(on.series);
    // the series says which of its episodes are closed: learned, so that continuing one of them alone is refused
    await markEpisodesCompacted(series);
    return { series, episode: getCurrentEpisode(series) };
  }
  const episode = assertBrainEpisode(on.episode);
  if (await isEpisodeCompacted(episode.hash, repl.refStore)) {
    const series = repl.latest?.episodes.some((closed) => closed.hash === episode.hash) ? repl.latest : null;
    throw new EpisodeCompactedError(
      `episode ${episode.hash} has been compacted: its exchanges were summarized into the recap that opens the next episode of its series${series ? ` (${series.hash})` : ''}. Continue via { on: { series } } instead`,
      { episode, series },
    );
  }
  return { series: null, episode };
};

/**
 * .what = a series whose current episode (plus the prompt) fills the window continues in a new episode that opens with
 *         a recap (the one summarizer, summarizeTranscript); the recap's requests are measured as spend
 */
const recapIfFull = async (
  input: { episode: BrainEpisode | null; series: BrainSeries | null; prompt: string; compactAtTokens: number; windowTokens: number },
  repl: { atom: BrainAtom; slug: string; refStore: BrainCompactionMarks | null },
  context: BhrainContext,
): Promise<{ episode: BrainEpisode | null; series: BrainSeries | null; spend: BhrainSpend }> => {
  let spend = emptySpend();
  if (!input.episode) return { episode: null, series: input.series, spend };
  // a recap's requests are spend like any other: measured, and counted toward the session's budget
  const measuredAtom: BrainAtom = {
    ...repl.atom,
    generate: async (request, generateContext) => {
      const generation = await repl.atom.generate(request, generateContext);
      spend = addRequestSpend(spend, generation);
      return generation;
    },
  };
  const compacted = await compactEpisode({
    atom: measuredAtom,
    episode: input.episode,
    pendingChars: input.prompt.length,
    compactAtTokens: input.compactAtTokens,
    windowTokens: input.windowTokens,
    context,
  });
  if (!compacted) return { episode: input.episode, series: input.series, spend };
  const series = genBrainSeries({
    episodes: [...(input.series ?? genBrainSeries({ episodes: [input.episode] })).episodes, compacted.episode],
    summaries: [...(input.series?.summaries ?? []), compacted.summary],
    exid: input.series?.exid ?? null,
  });
  await markEpisodesCompacted(series, repl.refStore);
  // said, not only logged: the model will not see these exchanges as they were, only the recap of them
  const calls = input.episode.exchanges.reduce(
    (sum, exchange) => sum + (exchange.steps ?? []).reduce((count, step) => count + step.calls.length, 0),
    0,
  );
  (context.log ?? silentLog).warn(
    `${repl.slug}: the episode ${input.episode.hash} (${pluralize(input.episode.exchanges.length, 'exchange')}, ${pluralize(calls, 'tool call')}) fills the context window, so it was compacted into a recap of ${pluralize(compacted.summary.length, 'character')} before this request; the series continues in episode ${compacted.episode.hash}`,
  );
  return { episode: compacted.episode, series, spend };
};

/**
 * .what = the engine of a BrainRepl: its slug, its brains, and run(), which takes per-call plugs besides the call
 * .why = genBrainRepl wraps it in ask({ say }) / act({ do }) (docs/design/continuation.md#continuing); the rhachet repl calls run() with its plugs
 */
export const genBrainReplRunner = (input: BrainReplInput) => {
  const atom = input.atom ? asBrainAtom(input.atom) : genBrainAtom({ slug: parseReplSlug(input.slug!).atom });
  const slug = `bhrain.struct.v1@${atom.slug}`;
  const refStore = input.refStore ?? null;
  const brains = genReplBrains(atom, input.config);
  const windowTokens = brains.act.config.limits.contextTokens;
  const compactAtTokens = windowTokens * REPL_COMPACT_AT_RATIO;
  let latest: { episode: BrainEpisode; series: BrainSeries } | null = null;

  const run = async <TOutput>(
    mode: 'ask' | 'act',
    prompt: string,
    on: BrainReplOn | undefined,
    schemaInput: BrainReplSchema<TOutput> | undefined,
    context: BhrainContext = {},
    plugs: BrainReplCallPlugs = {},
  ): Promise<BrainReplOutput<TOutput>> => {
    const started = performance.now();
    const brain = brainForCall({ brains, atom, config: input.config }, mode, plugs);
    const log = context.log ?? silentLog;
    // a schema that cannot be used fails before any request
    if (schemaInput?.jsonSchema !== undefined) await preloadAjv();
    const schema = schemaInput ? compileOutputSchema<TOutput>(schemaInput.output ?? { jsonSchema: schemaInput.jsonSchema! }) : null;
    const prior = await resolveOn(on, { atom, slug, latest: latest?.series ?? null, refStore });
    const {
      episode,
      series,
      spend: recapSpend,
    } = await recapIfFull({ ...prior, prompt, compactAtTokens, windowTokens }, { atom, slug, refStore }, context);

    const instructions = schema ? instructSchema(schema) : undefined;
    const recapped = { ...recapSpend, elapsedMs: performance.now() - started };
    const history = asPriorTurns(episode);
    let session = await brain.invoke({ prompt, history, instructions, spentBefore: recapped }, context);
    let output = session.output as unknown as TOutput;
    if (schema) {
      const turn = await runStructuredOutputTurn({
        slug,
        schema,
        first: session,
        answerOf: (run) => (run.termination === 'complete' ? run.output : null),
        // one corrective turn on top of the same session, within what is left of the same budget
        correct: async ({ run: first, prompt: correction }) => {
          const spentBefore = { ...addSpend(recapSpend, spendOf(first)), elapsedMs: performance.now() - started };
          const retry = await brain.invoke({ prompt: correction, history: first.messages, instructions, spentBefore }, context);
          // a corrective turn cut short (budget, error) ends as it ended, keeping the first answer when it said nothing new
          const saidNothing = !retry.transcript
            .slice(first.messages.length)
            .some((message) => message.role === 'assistant' && message.content.trim());
          const merged = mergeSessions(first, retry);
          return retry.termination !== 'complete' && saidNothing
            ? { ...merged, output: [first.output, retry.output].filter((text) => !!text).join('\n\n') }
            : merged;
        },
      });
      session = turn.run;
      if (turn.verdict.kind === 'invalid') session = { ...session, termination: 'error', error: turn.verdict.error };
      // the validated value, or (when the session did not complete with one) the answer's text
      output = turn.verdict.kind === 'valid' ? turn.verdict.value : (session.output as unknown as TOutput);
    }
    // the call's spend includes the recap's requests and time
    if (recapSpend.requests)
      session = {
        ...session,
        tokens: addTokens(recapSpend.tokens, session.tokens),
        cash: addCash(recapSpend.cash, session.cash),
        elapsedMs: session.elapsedMs + Math.round(recapped.elapsedMs),
      };
    const { tokens, cash } = session;

    // a failed exchange is still a checkpoint to resume from: it records what happened, so a continuation knows
    const outputText =
      session.termination === 'error'
        ? `${session.output ? `${session.output}\n\n` : ''}[bhrain: this exchange ended with an error: ${session.error?.message}]`
        : schema && session.termination === 'complete'
          ? JSON.stringify(output)
          : session.output;
    // the whole turn: what the model called and read on its way to the answer (the transcript opens with the history)
    const steps = asExchangeSteps(session.transcript.slice(history.length));
    const nextEpisode = appendBrainExchange({ episode, exchange: genBrainExchange({ input: prompt, output: outputText, steps }) });
    const nextSeries = series ? replaceCurrentEpisode({ series, episode: nextEpisode }) : genBrainSeries({ episodes: [nextEpisode] });
    latest = { episode: nextEpisode, series: nextSeries };
    log.info(`${slug}: episode ${nextEpisode.hash} series ${nextSeries.hash}`, { episode: nextEpisode.hash, series: nextSeries.hash });
    return {
      output,
      episode: nextEpisode,
      series: nextSeries,
      session,
      metrics: {
        size: {
          tokens,
          chars: { input: prompt.length, output: outputText.length, cache: { get: 0, set: 0 } },
        },
        cost: { time: { milliseconds: session.elapsedMs }, cash },
      },
    };
  };

  return {
    slug,
    /** the brains behind ask and act: add or remove toolboxes at runtime (the CLI offers MCP servers' tools this way) */
    brains: brains as { readonly ask: Pick<Bhrain, 'toolBoxes'>; readonly act: Pick<Bhrain, 'toolBoxes'> },
    run,
  };
};

/**
 * .what = a BrainRepl: .ask() (read-only tools) and .act() (full tools) on bhrain.struct.v1, over a slug
 *         (`bhrain.struct.v1@claude/sonnet`, or just the atom's slug) or an atom of your own
 * .why = every call returns NEW episode and series refs; continuing from a ref sees the context exactly as of that
 *        ref; a series that outgrows the window is compacted into a recap episode, transparently
 * .note = the repl keeps only its latest refs, so memory does not grow with the number of calls. With a schema ({ output:
 *         zod } or { jsonSchema }), an answer that does not fit gets one corrective turn with the validation errors; a
 *         second miss ends the call with an OutputInvalidError in session.error (never thrown: the refs still come back).
 *         One call is one budget: a recap of the series and the corrective turn count toward config.limits with the loop
 */
export const genBrainRepl = (input: BrainReplInput) => {
  const { slug, brains, run } = genBrainReplRunner(input);
  return {
    repo: 'bhrain' as const,
    slug,
    /** the brains behind ask and act: add or remove toolboxes at runtime (the CLI offers MCP servers' tools this way) */
    brains,
    /** read-only tools; with a schema ({ output: zod } or { jsonSchema }), the output is validated (and typed, with zod) */
    ask: (async (call: { say: string; on?: BrainReplOn; schema?: BrainReplSchema<unknown> }, context?: BhrainContext) => {
      refuseRhachetCall({ call, field: 'say', brain: slug, method: 'ask' });
      return run('ask', call.say, call.on, call.schema, context);
    }) as BrainReplCall<{ say: string }>,
    /** full tools: read, write, edit, glob, grep, bash, websearch; a schema works as for ask */
    act: (async (call: { do: string; on?: BrainReplOn; schema?: BrainReplSchema<unknown> }, context?: BhrainContext) => {
      refuseRhachetCall({ call, field: 'do', brain: slug, method: 'act' });
      return run('act', call.do, call.on, call.schema, context);
    }) as BrainReplCall<{ do: string }>,
  };
};

/** .what = a BrainRepl instance */
export type BrainRepl = ReturnType<typeof genBrainRepl>;
