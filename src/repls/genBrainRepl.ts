import { asPriorTurns } from '../atoms/askAtom.js';
import { genBrainAtom } from '../atoms/genBrainAtom.js';
import type { BhrainConfig } from '../archs/bhrain.struct.v1/BhrainConfig.js';
import type { BhrainContext } from '../archs/bhrain.struct.v1/BhrainContext.js';
import type { BhrainSessionResult } from '../archs/bhrain.struct.v1/BhrainSessionResult.js';
import { genBhrain } from '../archs/bhrain.struct.v1/genBhrain.js';
import { READ_ONLY_TOOLS, readOnly } from '../archs/bhrain.struct.v1/permission/builtinGuards.js';
import { genBashToolBox } from '../archs/bhrain.struct.v1/tools/bash/genBashToolBox.js';
import { genFilesToolBox } from '../archs/bhrain.struct.v1/tools/files/genFilesToolBox.js';
import { pickTools } from '../archs/bhrain.struct.v1/tools/pickTools.js';
import { genWebsearchToolBox } from '../archs/bhrain.struct.v1/tools/websearch/genWebsearchToolBox.js';
import { assertBrainEpisode, assertBrainSeries } from '../contract/assertBrainRef.js';
import { silentLog } from '../contract/BrainContext.js';
import { appendBrainExchange, type BrainEpisode } from '../contract/BrainEpisode.js';
import { genBrainExchange } from '../contract/BrainExchange.js';
import type { BrainOutput } from '../contract/BrainOutput.js';
import { genBrainSeries, getCurrentEpisode, replaceCurrentEpisode, type BrainSeries } from '../contract/BrainSeries.js';
import { BadRequestError } from '../contract/errors.js';

/** .what = the archs a repl can run */
export const BRAIN_REPL_ARCHS = ['bhrain.struct.v1'] as const;

/** .what = continue from exactly one of: an episode (branch, revive) or a series (linear continuation) */
export type BrainReplOn = { episode: BrainEpisode; series?: never } | { series: BrainSeries; episode?: never };

/** .what = a repl call's output plus the loop session behind it (termination, transcript) */
export type BrainReplOutput = BrainOutput<string, BrainSeries> & { session: BhrainSessionResult };

/** .what = reads `arch@atom` (the arch defaults to bhrain.struct.v1) */
const parseReplSlug = (slug: string): { arch: string; atom: string } => {
  const [arch, atom] = slug.includes('@') ? slug.split('@', 2) : ['bhrain.struct.v1', slug];
  if (!BRAIN_REPL_ARCHS.includes(arch as (typeof BRAIN_REPL_ARCHS)[number]))
    throw new BadRequestError(`unknown arch '${arch}': choose one of ${BRAIN_REPL_ARCHS.join(', ')}`);
  return { arch, atom };
};

/** .what = the continuation's starting point: prior episode and, for a series, the series it continues */
const resolveOn = (on: BrainReplOn | undefined): { episode: BrainEpisode | null; series: BrainSeries | null } => {
  if (!on) return { episode: null, series: null };
  if (on.episode && on.series)
    throw new BadRequestError('on takes exactly one of episode or series, not both: pass { episode } to branch or { series } to continue');
  if (on.series) {
    const series = assertBrainSeries(on.series);
    return { series, episode: getCurrentEpisode(series) };
  }
  return { series: null, episode: assertBrainEpisode(on.episode) };
};

/**
 * .what = a BrainRepl: .ask() (read-only tools) and .act() (full tools) on bhrain.struct.v1, over any atom
 * .why = every call returns NEW episode and series refs; continuing from a ref sees the context exactly as of that ref
 */
export const genBrainRepl = (input: { slug: string; config?: Omit<BhrainConfig, 'atom' | 'toolBoxes'> }) => {
  const { atom: atomSlug } = parseReplSlug(input.slug);
  const atom = genBrainAtom({ slug: atomSlug });
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

  const run = async (mode: 'ask' | 'act', prompt: string, on: BrainReplOn | undefined, context: BhrainContext = {}): Promise<BrainReplOutput> => {
    const prior = resolveOn(on);
    const session = await brains[mode].invoke({ prompt, history: asPriorTurns(prior.episode) }, context);
    const episode = appendBrainExchange({ episode: prior.episode, exchange: genBrainExchange({ input: prompt, output: session.output }) });
    const series = prior.series ? replaceCurrentEpisode({ series: prior.series, episode }) : genBrainSeries({ episodes: [episode] });
    (context.log ?? silentLog).info(`${slug}: episode ${episode.hash} series ${series.hash}`, { episode: episode.hash, series: series.hash });
    return {
      output: session.output,
      episode,
      series,
      session,
      metrics: {
        size: {
          tokens: session.tokens,
          chars: { input: prompt.length, output: session.output.length, cache: { get: 0, set: 0 } },
        },
        cost: { time: { milliseconds: session.elapsedMs }, cash: session.cash },
      },
    };
  };

  return {
    repo: 'bhrain' as const,
    slug,
    ask: (call: { say: string; on?: BrainReplOn }, context?: BhrainContext) => run('ask', call.say, call.on, context),
    act: (call: { do: string; on?: BrainReplOn }, context?: BhrainContext) => run('act', call.do, call.on, context),
  };
};

/** .what = a BrainRepl instance */
export type BrainRepl = ReturnType<typeof genBrainRepl>;
