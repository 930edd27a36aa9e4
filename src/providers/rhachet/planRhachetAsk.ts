import type { BrainAssistantMessage, BrainMessage, BrainToolMessage } from '../../core/contract/BrainMessage.js';
import { sha256hex } from '../../core/contract/hash.js';
import type { RhachetSupplierEpisode, RhachetSupplierExecution } from '../../rhachet/contract/RhachetSupplierAtom.js';

/** .what = the messages a rhachet atom is told of: all but system messages, which go to role.briefs */
type Turn = Exclude<BrainMessage, { role: 'system' }>;

/** .what = one ask of a rhachet atom, planned from the loop's messages: the episode to continue (or none) and the prompt */
export interface RhachetAskPlan {
  episode: RhachetSupplierEpisode | null;
  prompt: string | RhachetSupplierExecution[];
  /** the fingerprint of the messages sent, to which the answer's is chained (chainAnswer) */
  chained: string;
}

/** .what = what of a message a continuation depends on: its role, text, calls and results, never its timestamp */
const fingerprintOf = (message: Turn): string =>
  JSON.stringify(
    message.role === 'assistant'
      ? ['assistant', message.content, message.toolCalls.map((call) => [call.id, call.name, call.input])]
      : message.role === 'tool'
        ? ['tool', message.toolCallId, message.content, message.isError]
        : ['user', message.content],
  );

/** .what = the chained fingerprint after one more message */
const chain = (prior: string, message: Turn): string => sha256hex(`${prior}\n${fingerprintOf(message)}`);

/** .what = the fingerprint of the messages sent with the answer appended: the key its episode is remembered under */
export const chainAnswer = (plan: Pick<RhachetAskPlan, 'chained'>, answer: BrainAssistantMessage): string => chain(plan.chained, answer);

/**
 * .what = a tool result as rhachet's BrainPlugToolExecution: success with the text the tool gave, or an error whose
 *         signal says who can fix it: error:malfunction when the tool broke, error:constraint for every other failure
 *         (a denial, an unknown tool, arguments the session's check refused, a call the tool could not do)
 */
export const asExecution = (result: BrainToolMessage, input: unknown, note: string | null): RhachetSupplierExecution => {
  const content = note ? `${result.content}\n\n${note}` : result.content;
  const metrics = { cost: { time: { milliseconds: 0 } } };
  if (!result.isError) return { exid: result.toolCallId, slug: result.toolName, input, signal: 'success', output: content, metrics };
  const error = Object.assign(new Error(content), { name: result.malfunction ? 'MalfunctionError' : 'ConstraintError' });
  const signal = result.malfunction ? 'error:malfunction' : 'error:constraint';
  return { exid: result.toolCallId, slug: result.toolName, input, signal, output: { error }, metrics };
};

/** .what = the prompt after a known answer: the results of its calls as executions, or the user's text; null for any other shape */
const promptAfter = (answer: BrainAssistantMessage, rest: readonly Turn[]): RhachetAskPlan['prompt'] | null => {
  const results = rest.filter((turn): turn is BrainToolMessage => turn.role === 'tool');
  const said = rest.slice(results.length);
  if (!rest.length || said.some((turn) => turn.role !== 'user') || rest.slice(0, results.length).some((turn) => turn.role !== 'tool'))
    return null;
  const text = said.map((turn) => turn.content).join('\n\n');
  if (!results.length) return text;
  const inputOf = new Map(answer.toolCalls.map((call) => [call.id, call.input]));
  if (results.some((result) => !inputOf.has(result.toolCallId))) return null;
  // text the loop adds after the results (a notice) goes with the last of them: an executions prompt holds no text
  return results.map((result, index) =>
    asExecution(result, inputOf.get(result.toolCallId), index === results.length - 1 && text ? text : null),
  );
};

/** .what = messages as one text: what a new rhachet episode starts from when none of its own continues them */
const asTranscript = (turns: readonly Turn[]): string => {
  const only = turns.length === 1 ? turns[0] : null;
  if (only?.role === 'user') return only.content;
  const lines = turns.map((turn) =>
    turn.role === 'user'
      ? `[user]\n${turn.content}`
      : turn.role === 'tool'
        ? `[result of ${turn.toolName} (${turn.toolCallId})${turn.isError ? ', an error' : ''}]\n${turn.content}`
        : [
            ...(turn.content ? [`[assistant]\n${turn.content}`] : []),
            ...turn.toolCalls.map((call) => `[assistant called ${call.name} (${call.id})]\n${JSON.stringify(call.input)}`),
          ].join('\n'),
  );
  const last = turns[turns.length - 1];
  return [
    'The conversation so far, as a transcript (its tool calls and their results are given as text):',
    ...lines,
    ...(last?.role === 'user' ? [] : ['Continue from here.']),
  ].join('\n\n');
};

/**
 * .what = the ask that continues the loop's messages on a rhachet atom: on the episode the atom returned for the latest
 *         answer it gave, with what came after it as the prompt (tool results as executions, else the user's text);
 *         else a new episode, from the messages as a transcript (a history from elsewhere, or one compaction rewrote)
 * .why = rhachet's atoms continue only their own episodes, one prompt at a time; the loop sends its whole context
 *        every turn, so the two meet where the context still ends with what the atom saw
 */
export const planRhachetAsk = (input: {
  messages: readonly BrainMessage[];
  known: ReadonlyMap<string, RhachetSupplierEpisode>;
}): RhachetAskPlan => {
  const turns = input.messages.filter((message): message is Turn => message.role !== 'system');
  const chains: string[] = [];
  for (const turn of turns) chains.push(chain(chains[chains.length - 1] ?? '', turn));
  const chained = chains[chains.length - 1] ?? '';
  for (let at = turns.length - 1; at >= 0; at--) {
    const turn = turns[at];
    const episode = turn.role === 'assistant' ? input.known.get(chains[at]) : undefined;
    if (!episode) continue;
    const prompt = promptAfter(turn as BrainAssistantMessage, turns.slice(at + 1));
    if (prompt !== null) return { episode, prompt, chained };
    break;
  }
  return { episode: null, prompt: asTranscript(turns), chained };
};
