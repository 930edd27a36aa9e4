import type { BrainAtom, BrainAtomGenerateInput, BrainAtomGeneration, BrainAtomSpec } from '../../core/contract/BrainAtom.js';
import { silentLog, type BrainContext } from '../../core/contract/BrainContext.js';
import type { BrainAssistantMessage, BrainToolDefinition } from '../../core/contract/BrainMessage.js';
import { AbortedError, SupplierError } from '../../core/contract/errors.js';
import {
  getRhachetSlugFull,
  type RhachetSupplierAtom,
  type RhachetSupplierEpisode,
  type RhachetSupplierOutput,
  type RhachetSupplierTool,
} from '../../rhachet/contract/RhachetSupplierAtom.js';
import { askAtom } from '../askAtom.js';
import { DEFAULT_RETRY_POLICY } from '../constants.js';
import { readToolValue } from '../readToolArguments.js';
import { renderToolDescription } from '../renderToolDescription.js';
import { withRetry } from '../withRetry.js';
import { isWireFailure, mapRhachetError } from './mapRhachetError.js';
import { chainAnswer, planRhachetAsk } from './planRhachetAsk.js';
import { readRhachetCash, readRhachetPrice, readRhachetTokens } from './readRhachetMetrics.js';
import { getRhachetSupplierCreds } from './rhachetSupplierCreds.js';

/** .what = the window assumed for a rhachet atom whose spec names none (gain.size.context.tokens) */
const ASSUMED_WINDOW_TOKENS = 128_000;

/** .what = the output-token limit said in our spec: a rhachet atom sets its own, which its spec does not say */
const ASSUMED_MAX_OUTPUT_TOKENS = 16_384;

/** .what = how many answers' episodes an adapter remembers, to continue them; older ones are dropped first */
const KNOWN_EPISODES_MAX = 256;

/** .what = our tools as rhachet's plugs: slug and name are the tool's name, input a zod schema of its JSON Schema */
const asPlugTools = async (tools: readonly BrainToolDefinition[]): Promise<RhachetSupplierTool[]> => {
  if (!tools.length) return [];
  // zod is loaded by the first call of a rhachet atom, never at start-up
  const { z } = await import('zod');
  return tools.map((tool) => ({
    slug: tool.name,
    name: tool.name,
    description: renderToolDescription(tool),
    schema: { input: z.fromJSONSchema(tool.inputSchema as never), output: z.string() },
  }));
};

/** .what = a promise that rejects as AbortedError once the signal aborts (the supplier's ask takes no signal) */
const orAbort = <T>(promise: Promise<T>, signal: AbortSignal | undefined, slug: string): Promise<T> => {
  if (!signal) return promise;
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(new AbortedError(`${slug}: the call was interrupted (Ctrl-C, SIGTERM, or the caller's abort signal)`));
    if (signal.aborted) return onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
};

/** .what = the answer checked for what the loop relies on: an episode to continue, and calls each with a slug */
const checkOutput = (output: RhachetSupplierOutput | null | undefined, slug: string): RhachetSupplierOutput => {
  const given = output as Partial<RhachetSupplierOutput> | null | undefined;
  if (!given || typeof given !== 'object' || !given.episode || !Array.isArray(given.episode.exchanges))
    throw new SupplierError(
      `${slug} answered without an episode ({ output, calls, metrics, episode }): it does not keep rhachet's atom contract`,
    );
  const calls = given.calls?.tools ?? [];
  if (!Array.isArray(calls) || calls.some((call) => typeof call?.slug !== 'string'))
    throw new SupplierError(`${slug} answered with calls.tools that are not [{ exid, slug, input }]`);
  return given as RhachetSupplierOutput;
};

/** .what = our spec of a rhachet atom: its price and window from its spec, the rest assumed (and said so) */
const specOf = (atom: RhachetSupplierAtom, slug: string): BrainAtomSpec => ({
  supplier: 'rhachet',
  model: slug,
  contextWindowTokens: atom.spec?.gain?.size?.context?.tokens ?? ASSUMED_WINDOW_TOKENS,
  maxOutputTokens: ASSUMED_MAX_OUTPUT_TOKENS,
  price: readRhachetPrice(atom.spec),
  continuation: true,
});

/**
 * .what = a rhachet brain atom (a `rhachet-brains-*` supplier's) as one of bhrain's atoms: generate() is one ask of it
 * .why = bhrain.struct.v1 runs on generate(); this makes every rhachet supplier a bhrain atom:
 *        - the system prompt is role.briefs (one brief), the tools are plugs.tools (name, description, zod of the schema);
 *        - the loop's messages become an ask on the episode the atom returned for its latest answer (planRhachetAsk):
 *          tool results go back as executions (a denial error:constraint, a crash error:malfunction), a new context
 *          (compaction, a history from elsewhere) starts a new episode from its transcript;
 *        - calls.tools come back as tool calls, run by the session as any atom's are; tokens and cash are read from the
 *          metrics' IsoPrice strings; a failure is one of our errors (mapRhachetError)
 * .note = context binds rhachet's supplies (context['brain.supplier.<repo>'], as rhachet's asBrainAtomWithContextBound
 *         does); an atom whose spec says it uses no tools (gain.skills.tooluse false) runs text-only, with a warning;
 *         schema.output is z.string(): the loop reads a text answer
 */
export const genBrainAtomOfRhachet = (input: { atom: RhachetSupplierAtom; context?: Record<string, unknown> }): BrainAtom => {
  const foreign = input.atom;
  const slug = getRhachetSlugFull(foreign);
  const creds = getRhachetSupplierCreds(foreign.repo);
  const toolless = foreign.spec?.gain?.skills?.tooluse === false;
  const known = new Map<string, RhachetSupplierEpisode>();
  let warnedToolless = false;

  const ask = async (request: BrainAtomGenerateInput, context: BrainContext) => {
    const plan = planRhachetAsk({ messages: request.messages, known });
    const system = [request.system, ...request.messages.filter((message) => message.role === 'system').map((message) => message.content)]
      .filter((part): part is string => !!part)
      .join('\n\n');
    const tools = toolless ? [] : await asPlugTools(request.tools ?? []);
    const { z } = await import('zod');
    const call = {
      ...(plan.episode ? { on: { episode: plan.episode } } : {}),
      ...(tools.length ? { plugs: { tools } } : {}),
      role: { briefs: system ? [{ get: async () => ({ content: system }) }] : [] },
      prompt: plan.prompt,
      schema: { output: z.string() },
    };
    return { plan, output: checkOutput(await orAbort(foreign.ask(call, input.context), context.signal, slug), slug) };
  };

  const generate = async (request: BrainAtomGenerateInput, context: BrainContext = {}): Promise<BrainAtomGeneration> => {
    const log = context.log ?? silentLog;
    if (toolless && request.tools?.length && !warnedToolless) {
      warnedToolless = true;
      log.warn(`${slug} uses no tools (its spec says gain.skills.tooluse false): the loop runs text-only, and its tools are not offered`);
    }
    const started = performance.now();
    const { value, attempts } = await withRetry({
      supplier: slug,
      policy: { ...DEFAULT_RETRY_POLICY, ...context.retry },
      log,
      signal: context.signal,
      onRetry: (retry) => request.onRetry?.(retry),
      mapError: (error) => mapRhachetError({ error, slug, keyEnvVars: creds.keyEnvVars, suppliesKey: creds.suppliesKeys[0] }),
      // only a failure on the wire is retried; one the supplier package raised itself is mapped at once
      run: () =>
        ask(request, context).catch((error: unknown) => {
          throw isWireFailure(error)
            ? error
            : mapRhachetError({ error, slug, keyEnvVars: creds.keyEnvVars, suppliesKey: creds.suppliesKeys[0] });
        }),
    });
    const { plan, output } = value;
    const toolCalls = (output.calls?.tools ?? []).map((call, index) => ({
      id: typeof call.exid === 'string' && call.exid ? call.exid : `rhachet_call_${index}`,
      // a padded name (' read_file ') names the tool, as in every protocol (genAtom)
      name: call.slug.trim(),
      ...readToolValue({ value: call.input, name: call.slug.trim() }),
    }));
    const text = typeof output.output === 'string' ? output.output : output.output == null ? '' : JSON.stringify(output.output);
    if (text) request.onTextDelta?.(text);
    const message: BrainAssistantMessage = { role: 'assistant', content: text, toolCalls };
    known.set(chainAnswer(plan, message), output.episode);
    if (known.size > KNOWN_EPISODES_MAX) known.delete(known.keys().next().value!);
    return {
      message,
      stopReason: toolCalls.length ? 'tool_calls' : 'end',
      tokens: readRhachetTokens(output.metrics),
      cash: readRhachetCash(output.metrics),
      elapsedMs: performance.now() - started,
      attempts,
    };
  };

  const atom: BrainAtom = {
    repo: 'bhrain',
    slug,
    description: `${foreign.description ?? slug} (rhachet brain atom of ${foreign.repo})`,
    spec: specOf(foreign, slug),
    generate,
    ask: (askInput, context) => askAtom({ atom, ...askInput }, context),
  };
  return atom;
};
