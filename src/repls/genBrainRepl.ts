import type { PickOne } from 'type-fns';
import type { z } from 'zod';

import { genBrainAtom } from '../atoms/genBrainAtom.js';
import type { BrainAtom } from '../contract/BrainAtom.js';
import { instructSchema, validateAnswer } from '../atoms/structuredOutput.js';
import type { BhrainConfig } from '../archs/bhrain.struct.v1/BhrainConfig.js';
import type { BhrainContext } from '../archs/bhrain.struct.v1/BhrainContext.js';
import type { BhrainSessionResult } from '../archs/bhrain.struct.v1/BhrainSessionResult.js';
import { genBhrain } from '../archs/bhrain.struct.v1/genBhrain.js';
import { READ_ONLY_TOOLS, readOnly } from '../archs/bhrain.struct.v1/permission/builtinGuards.js';
import { genBashToolBox } from '../archs/bhrain.struct.v1/tools/bash/genBashToolBox.js';
import { genFilesToolBox } from '../archs/bhrain.struct.v1/tools/files/genFilesToolBox.js';
import { pickTools } from '../archs/bhrain.struct.v1/tools/pickTools.js';
import { genWebsearchToolBox } from '../archs/bhrain.struct.v1/tools/websearch/genWebsearchToolBox.js';
import { asPriorTurns } from '../continuation/asPriorTurns.js';
import { compactEpisode } from '../continuation/compactEpisode.js';
import { isEpisodeCompacted, markEpisodeCompacted } from '../continuation/compactedEpisodes.js';
import { assertBrainEpisode, assertBrainSeries } from '../contract/assertBrainRef.js';
import { silentLog } from '../contract/BrainContext.js';
import { appendBrainExchange, type BrainEpisode } from '../contract/BrainEpisode.js';
import { genBrainExchange } from '../contract/BrainExchange.js';
import type { BrainOutput } from '../contract/BrainOutput.js';
import { genBrainSeries, getCurrentEpisode, replaceCurrentEpisode, type BrainSeries } from '../contract/BrainSeries.js';
import { BadRequestError, ContinuationNotSupportedError, EpisodeCompactedError, OutputInvalidError } from '../contract/errors.js';
import { addCash, addTokens } from '../contract/tokens.js';

/** .what = the archs a repl can run */
export const BRAIN_REPL_ARCHS = ['bhrain.struct.v1'] as const;

/** share of the context window an episode may fill before the repl compacts it into a recap */
export const REPL_COMPACT_AT_RATIO = 0.6;

/** .what = continue from exactly one of: an episode (branch, revive) or a series (linear continuation) */
export type BrainReplOn = PickOne<{ episode: BrainEpisode; series: BrainSeries }>;

/** .what = a repl call's output plus the loop session behind it (termination, transcript) */
export type BrainReplOutput<TOutput = string> = BrainOutput<TOutput, BrainSeries> & { session: BhrainSessionResult };

/** .what = reads `arch@atom` (the arch defaults to bhrain.struct.v1) */
const parseReplSlug = (slug: string): { arch: string; atom: string } => {
  const [arch, atom] = slug.includes('@') ? slug.split('@', 2) : ['bhrain.struct.v1', slug];
  if (!BRAIN_REPL_ARCHS.includes(arch as (typeof BRAIN_REPL_ARCHS)[number]))
    throw new BadRequestError(`unknown arch '${arch}': choose one of ${BRAIN_REPL_ARCHS.join(', ')}`);
  return { arch, atom };
};

/**
 * .what = a BrainRepl: .ask() (read-only tools) and .act() (full tools) on bhrain.struct.v1, over a slug
 *         (`bhrain.struct.v1@claude/sonnet`, or just the atom's slug) or an atom of your own
 * .why = every call returns NEW episode and series refs; continuing from a ref sees the context exactly as of that
 *        ref; a series that outgrows the window is compacted into a recap episode, transparently
 * .note = the repl keeps only its latest refs, so memory does not grow with the number of calls
 */
export const genBrainRepl = (
  input: ({ slug: string; atom?: never } | { atom: BrainAtom; slug?: never }) & { config?: Omit<BhrainConfig, 'atom' | 'toolBoxes'> },
) => {
  const atom = input.atom ?? genBrainAtom({ slug: parseReplSlug(input.slug).atom });
  const slug = `bhrain.struct.v1@${atom.slug}`;
  const brains = {
    ask: genBhrain({
      ...input.config,
      atom,
      permissionGuard: readOnly,
      toolBoxes: [pickTools(genFilesToolBox(), [...READ_ONLY_TOOLS]), genWebsearchToolBox()],
    }),
    act: genBhrain({ ...input.config, atom, toolBoxes: [genFilesToolBox(), genBashToolBox(), genWebsearchToolBox()] }),
  };
  const windowTokens = brains.act.config.limits.contextTokens;
  const compactAtTokens = windowTokens * REPL_COMPACT_AT_RATIO;
  let latest: { episode: BrainEpisode; series: BrainSeries } | null = null;

  /** the starting point of a call: the episode to build on and the series it belongs to, if any */
  const resolveOn = (on: BrainReplOn | undefined): { episode: BrainEpisode | null; series: BrainSeries | null } => {
    if (!on) return { episode: null, series: null };
    if (on.episode && on.series)
      throw new BadRequestError('on takes exactly one of episode or series, not both: pass { episode } to branch or { series } to continue');
    if (atom.spec.continuation === false)
      throw new ContinuationNotSupportedError(
        `${slug} does not support continuation. Continue this ${on.series ? 'series' : 'episode'} (error.ref) on a brain that can, or call without \`on\``,
        on,
      );
    if (on.series) {
      const series = assertBrainSeries(on.series);
      return { series, episode: getCurrentEpisode(series) };
    }
    const episode = assertBrainEpisode(on.episode);
    if (isEpisodeCompacted(episode.hash)) {
      const series = latest?.series.episodes.some((closed) => closed.hash === episode.hash) ? latest.series : null;
      throw new EpisodeCompactedError(
        `episode ${episode.hash} has been compacted: its exchanges were summarized into the recap that opens the next episode of its series${series ? ` (${series.hash})` : ''}. Continue via { on: { series } } instead`,
        { episode, series },
      );
    }
    return { series: null, episode };
  };

  const run = async <TOutput>(
    mode: 'ask' | 'act',
    prompt: string,
    on: BrainReplOn | undefined,
    schema: z.ZodType<TOutput> | undefined,
    context: BhrainContext = {},
  ): Promise<BrainReplOutput<TOutput>> => {
    const log = context.log ?? silentLog;
    const prior = resolveOn(on);
    let { episode, series } = prior;

    // a series whose current episode fills the window continues in a new episode that opens with a recap
    if (episode) {
      const compacted = await compactEpisode({ atom, episode, pendingChars: prompt.length, compactAtTokens, windowTokens, context });
      if (compacted) {
        markEpisodeCompacted(episode.hash);
        series = genBrainSeries({
          episodes: [...(series ?? genBrainSeries({ episodes: [episode] })).episodes, compacted.episode],
          summaries: [...(series?.summaries ?? []), compacted.summary],
          exid: series?.exid ?? null,
        });
        episode = compacted.episode;
        log.info(`${slug}: compacted the episode into a recap; series continues in episode ${episode.hash}`);
      }
    }

    const instructions = schema ? instructSchema(schema) : undefined;
    let session = await brains[mode].invoke({ prompt, history: asPriorTurns(episode), instructions }, context);
    let tokens = session.tokens;
    let cash = session.cash;
    let output = session.output as unknown as TOutput;
    if (schema && session.termination === 'complete') {
      let verdict = validateAnswer(session.output, schema);
      if (!verdict.ok) {
        // one corrective turn on top of the same session
        const retry = await brains[mode].invoke(
          { prompt: `Your answer does not fit the required schema: ${verdict.reason}\nReply again with only the corrected JSON.`, history: session.messages, instructions },
          context,
        );
        tokens = addTokens(tokens, retry.tokens);
        cash = addCash(cash, retry.cash);
        session = { ...retry, transcript: [...session.transcript, ...retry.transcript.slice(session.messages.length)] };
        verdict = validateAnswer(session.output, schema);
      }
      if (!verdict.ok)
        throw new OutputInvalidError(`${slug} did not return output that fits the schema, after one corrective turn: ${verdict.reason}`, session.output);
      output = verdict.value;
    }

    // a failed exchange is still a checkpoint to resume from: it records what happened, so a continuation knows
    const outputText =
      session.termination === 'error'
        ? `${session.output ? `${session.output}\n\n` : ''}[bhrain: this exchange ended with an error: ${session.error?.message}]`
        : schema && session.termination === 'complete'
          ? JSON.stringify(output)
          : session.output;
    const nextEpisode = appendBrainExchange({ episode, exchange: genBrainExchange({ input: prompt, output: outputText }) });
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
    repo: 'bhrain' as const,
    slug,
    /** read-only tools; with a schema, the output is validated and typed */
    ask: <TOutput = string>(call: { say: string; on?: BrainReplOn; schema?: { output: z.ZodType<TOutput> } }, context?: BhrainContext) =>
      run<TOutput>('ask', call.say, call.on, call.schema?.output, context),
    /** full tools: read, write, edit, glob, grep, bash, websearch */
    act: (call: { do: string; on?: BrainReplOn }, context?: BhrainContext) => run<string>('act', call.do, call.on, undefined, context),
  };
};

/** .what = a BrainRepl instance */
export type BrainRepl = ReturnType<typeof genBrainRepl>;
