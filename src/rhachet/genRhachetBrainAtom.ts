import { generateAnswer } from '../providers/generateAnswer.js';
import { genBrainAtom } from '../providers/genBrainAtom.js';
import { instructSchema } from '../providers/structured/structuredOutput.js';
import type { BrainAtom } from '../core/contract/BrainAtom.js';
import { silentLog } from '../core/contract/BrainContext.js';
import { appendBrainExchange } from '../core/contract/BrainEpisode.js';
import { genBrainExchange } from '../core/contract/BrainExchange.js';
import type { BrainMessage } from '../core/contract/BrainMessage.js';
import { BadRequestError, ContinuationNotSupportedError } from '../core/contract/errors.js';
import { asBhrainContext, asBhrainEpisode, asOutputSchema, readBriefs } from './readRhachetCall.js';
import { asRhachetEpisode, asRhachetMetrics } from './asRhachetOutput.js';
import { genPlugTools } from './genPlugTools.js';
import { getRhachetBrainSpec } from './getRhachetBrainSpec.js';
import type { RhachetBrainAtom, RhachetPlugToolExecution } from './RhachetBrain.js';
import { asPriorToolTurns, asToolResultContent, asToolResultText, asToolUseText } from './toolTurnBlocks.js';

/**
 * .what = one of our atoms (or its slug) in rhachet's BrainAtom shape: ask({ on, plugs, role, prompt, schema }) over the
 *         atom's native tool calling, slug `bhrain/<atom slug>`
 * .why = rhachet calls every brain so; briefs become the system prompt, schema.output is validated (z.string() is a text
 *        answer), plugs.tools are offered natively and a call to them comes back in calls, continued by a prompt of
 *        BrainPlugToolExecution[] on that episode; the episode returned follows rhachet's hash rule
 * .note = an answer that calls tools returns output null; tokens and cash of a corrective retry are in the metrics;
 *         creds come from context['brain.supplier.bhrain'] (asBhrainContext) or our own context fields
 */
export const genRhachetBrainAtom = (input: { atom: BrainAtom | string }): RhachetBrainAtom => {
  const atom = typeof input.atom === 'string' ? genBrainAtom({ slug: input.atom }) : input.atom;
  const slug = `bhrain/${atom.slug}`;
  return {
    repo: 'bhrain',
    slug,
    description: atom.description,
    spec: getRhachetBrainSpec(atom.spec),
    ask: async (call, contextGiven) => {
      const started = performance.now();
      const executions = Array.isArray(call.prompt) ? (call.prompt as RhachetPlugToolExecution[]) : null;
      if (executions ? !executions.length : typeof call.prompt !== 'string')
        throw new BadRequestError(
          `${slug}.ask() takes prompt as a string, or as the executions of the tools its last answer called (a non-empty BrainPlugToolExecution[])`,
        );
      if (executions && !call.on?.episode)
        throw new BadRequestError(`${slug}.ask() got tool executions without on.episode: pass the episode whose answer called the tools`);
      if (call.on && atom.spec.continuation === false)
        throw new ContinuationNotSupportedError(`${slug} does not support continuation: ask without \`on\``, { episode: call.on.episode });
      const context = await asBhrainContext(contextGiven);
      const prior = call.on ? asBhrainEpisode(call.on.episode) : null;
      const plugs = genPlugTools(call.plugs?.tools);
      const schema = asOutputSchema(call.schema?.output);
      const system = [await readBriefs(call.role?.briefs), schema ? instructSchema(schema) : undefined]
        .filter((part) => !!part)
        .join('\n\n');
      const given: BrainMessage[] = executions
        ? executions.map((execution) => ({
            role: 'tool',
            toolCallId: execution.exid,
            toolName: plugs.nameOf(execution.slug),
            content: asToolResultContent(execution),
            isError: execution.signal !== 'success',
          }))
        : [{ role: 'user', content: call.prompt as string }];
      const answer = await generateAnswer(
        {
          atom,
          request: { system: system || undefined, messages: [...asPriorToolTurns(prior, plugs), ...given], tools: plugs.definitions },
          schema: schema ?? undefined,
        },
        context,
      );

      // the model's calls go back to the caller under the tools' own slugs
      const calls = answer.message.toolCalls.map((toolCall) => ({
        exid: toolCall.id,
        slug: plugs.slugOf(toolCall.name),
        input: toolCall.input,
      }));
      const exchangeInput = executions ? asToolResultText(executions) : (call.prompt as string);
      const exchangeOutput = calls.length
        ? asToolUseText({ text: answer.message.content, calls })
        : schema
          ? JSON.stringify(answer.output)
          : answer.message.content;
      const episode = appendBrainExchange({ episode: prior, exchange: genBrainExchange({ input: exchangeInput, output: exchangeOutput }) });
      const returned = asRhachetEpisode(episode);
      (context.log ?? silentLog).info(`${slug}: episode ${returned.hash}`, { episode: returned.hash });
      return {
        output: calls.length ? null : answer.output,
        calls: calls.length ? { tools: calls } : null,
        metrics: asRhachetMetrics({
          size: {
            tokens: answer.tokens,
            chars: { input: exchangeInput.length + system.length, output: exchangeOutput.length, cache: { get: 0, set: 0 } },
          },
          cost: { time: { milliseconds: Math.round(performance.now() - started) }, cash: answer.cash },
        }),
        episode: returned,
        series: null,
      };
    },
  };
};
