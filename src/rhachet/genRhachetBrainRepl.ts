import type { BhrainConfig } from '../agent/config/BhrainConfig.js';
import type { BhrainToolBox } from '../agent/tool/BhrainToolBox.js';
import { asBrainAtom } from '../providers/asBrainAtom.js';
import { genBrainAtom } from '../providers/genBrainAtom.js';
import type { BrainAtom } from '../core/contract/BrainAtom.js';
import type { RhachetSupplierAtom } from './contract/RhachetSupplierAtom.js';
import { BadRequestError, OutputInvalidError } from '../core/contract/errors.js';
import { genBrainReplRunner, type BrainReplOn } from '../agent/repl/genBrainRepl.js';
import { asBhrainContext, asBhrainEpisode, asBhrainSeries, asOutputSchema, readBriefs } from './readRhachetCall.js';
import { asRhachetEpisode, asRhachetMetrics, asRhachetSeries } from './asRhachetOutput.js';
import { genPlugTools, type PlugTools } from './genPlugTools.js';
import { getRhachetBrainSpec } from './getRhachetBrainSpec.js';
import type { RhachetBrainContext, RhachetBrainRepl, RhachetBrainReplCall } from './RhachetBrain.js';
import { asToolResultContent } from './toolTurnBlocks.js';

/**
 * .what = a repl call's plugged tools as a toolbox of the loop: each call runs the tool's own execute, and the model
 *         reads its output (or error) as JSON, as an atom's caller would send it back
 * .why = a repl runs plugged tools itself; the toolbox is made per call, so concurrent calls never share tools
 * .note = execute gets the caller's rhachet context as its context, as rhachet passes it one
 */
const genPlugToolBox = (input: { plugs: PlugTools; context: unknown }): BhrainToolBox => ({
  name: 'rhachet.plugs',
  definitions: input.plugs.definitions,
  execute: async ({ call }) => {
    const tool = input.plugs.toolOf(call.name)!;
    const execution = await tool.execute!({ invocation: { exid: call.id, slug: tool.slug, input: call.input } }, input.context);
    return { callId: call.id, success: execution?.signal === 'success', output: asToolResultContent(execution) };
  },
});

/**
 * .what = the bhrain.struct.v1 repl over one of our atoms (or its slug) in rhachet's BrainRepl shape: ask (read-only
 *         tools) and act (full tools), slug `bhrain/bhrain.struct.v1@<atom slug>`
 * .why = rhachet calls every repl so; briefs join the system prompt, plugs.tools run inside the loop (in ask too) through
 *        their own execute, on continues an episode or a series made by bhrain or by rhachet, and every call returns a
 *        NEW episode and series in rhachet's hash rule
 * .note = the repl is built on its first call, so listing it costs nothing; a session that ended in an error throws that
 *         error, and one that stopped early (budget, max iterations) without a valid answer to a schema throws
 *         OutputInvalidError: rhachet's output is the typed value, never a partial text in its place
 */
export const genRhachetBrainRepl = (input: {
  /** one of our atoms, its slug, or a rhachet brain atom (a supplier's), run as ours (asBrainAtom) */
  atom: BrainAtom | RhachetSupplierAtom | string;
  config?: Omit<BhrainConfig, 'atom' | 'toolBoxes'>;
}): RhachetBrainRepl => {
  const atom = typeof input.atom === 'string' ? genBrainAtom({ slug: input.atom }) : asBrainAtom(input.atom);
  const slug = `bhrain/bhrain.struct.v1@${atom.slug}`;
  let runner: ReturnType<typeof genBrainReplRunner> | null = null;

  const run = async <TOutput>(mode: 'ask' | 'act', call: RhachetBrainReplCall<TOutput>, contextGiven?: RhachetBrainContext) => {
    if (typeof call.prompt !== 'string')
      throw new BadRequestError(
        `${slug}.${mode}() takes prompt as a string: a repl runs plugged tools itself (plugs.tools[].execute), so it never asks for their executions`,
      );
    if (call.on?.episode && call.on?.series)
      throw new BadRequestError(
        'on takes exactly one of episode or series, not both: pass { episode } to branch or { series } to continue',
      );
    const missing = (call.plugs?.tools ?? []).find((tool) => typeof tool?.execute !== 'function');
    if (missing)
      throw new BadRequestError(
        `${slug}.${mode}() runs plugged tools itself, and plugs.tools '${missing.slug}' has no execute: plug tools made with execute`,
      );
    const context = await asBhrainContext(contextGiven);
    const on: BrainReplOn | undefined = call.on?.series
      ? { series: asBhrainSeries(call.on.series) }
      : call.on?.episode
        ? { episode: asBhrainEpisode(call.on.episode) }
        : undefined;
    const plugs = genPlugTools(call.plugs?.tools);
    const schema = asOutputSchema(call.schema?.output);
    runner ??= genBrainReplRunner({ atom, config: input.config });
    const result = await runner.run<TOutput>(mode, call.prompt, on, schema ? { output: schema } : undefined, context, {
      toolBoxes: plugs.definitions.length ? [genPlugToolBox({ plugs, context: contextGiven })] : [],
      systemPrompt: await readBriefs(call.role?.briefs),
    });
    if (result.session.error) throw result.session.error;
    if (schema && result.session.termination !== 'complete')
      throw new OutputInvalidError(
        `${slug}.${mode}() ended with ${result.session.termination} before an answer that fits the schema: ${String(result.output).slice(0, 500)}`,
        String(result.output),
      );
    return {
      output: result.output,
      calls: null,
      metrics: asRhachetMetrics(result.metrics),
      episode: asRhachetEpisode(result.episode),
      series: asRhachetSeries(result.series),
    };
  };

  return {
    repo: 'bhrain',
    slug,
    description: `bhrain.struct.v1, bhrain's agentic loop, over ${atom.description}: ask reads (read, glob, grep, websearch), act also writes, edits and runs bash in a sandbox`,
    spec: getRhachetBrainSpec(atom.spec),
    ask: (call, context) => run('ask', call, context),
    act: (call, context) => run('act', call, context),
  };
};
