import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import {
  genBashToolBox,
  genBhrain,
  genSummarizeOnLimit,
  genTruncate,
  type BhrainEvent,
  type BhrainMemoryManager,
} from 'rhachet-roles-bhrain';

import { startStandin, type StandinRequest } from '../../test/standin/standin.js';
import { median, type BenchOptions, type BenchSection } from '../BenchReport.js';

const FACT = 'the secret word is plover';
const SUMMARIZER_MARK = 'You compact the working memory';

/** .what = the text a request shows the model, in either protocol */
const textOf = (request: StandinRequest) => JSON.stringify(request.body);
const stepsDone = (request: StandinRequest) => (textOf(request).match(/step-output-/g) ?? []).length;

/**
 * .what = section 5: a task that overflows a small context limit: compactions, tokens before and after, extra LLM
 *         calls spent, and whether a fact given at the start survives into the final answer
 * .why = compaction must free context without losing what the user said
 */
export const benchCompaction = async (options: BenchOptions): Promise<BenchSection> => {
  const steps = options.smoke ? 12 : 20;
  const contextTokens = 8_000;
  const standin = await startStandin({ cacheMinTokens: 1024 });
  const strategies: Array<[string, () => BhrainMemoryManager]> = [
    ['summarize-on-limit', () => genSummarizeOnLimit()],
    ['truncate', () => genTruncate()],
  ];
  const results: Record<
    string,
    { compactions: number; before: number | null; after: number | null; extraCalls: number; survived: boolean }
  > = {};
  try {
    for (const [name, genManager] of strategies) {
      options.log(`compaction: ${name}`);
      standin.reset();
      let stepCounter = 0;
      standin.respond = (request) => {
        const text = textOf(request);
        // a faithful summarizer keeps the user's facts: it repeats every line that states one
        if (text.includes(SUMMARIZER_MARK)) return { text: `Summary: ${text.includes(FACT) ? FACT : 'no facts'}; steps were run.` };
        if (stepCounter < steps && stepsDone(request) >= 0) {
          stepCounter += 1;
          return {
            toolCalls: [{ name: 'bash', input: { command: `printf 'step-output-${stepCounter} %.0s' {1..60}; printf 'x%.0s' {1..2500}` } }],
          };
        }
        return { text: text.includes(FACT) ? `Done. ${FACT}.` : 'Done. I no longer know the secret word.' };
      };
      const events: BhrainEvent[] = [];
      const cwd = await mkdtemp(join(tmpdir(), 'bhrain-bench-compaction-'));
      const brain = genBhrain({
        atom: 'claude/haiku',
        toolBoxes: [genBashToolBox()],
        memoryManager: genManager(),
        limits: { contextTokens },
      });
      const result = await brain.invoke(
        { prompt: `Remember this: ${FACT}. Then run ${steps} steps, one bash call each, and finally tell me the secret word.` },
        {
          cwd,
          env: { PATH: process.env.PATH },
          creds: { anthropic: { apiKey: 'bench', url: standin.url } },
          onEvent: (event) => events.push(event),
        },
      );
      await rm(cwd, { recursive: true, force: true });
      const compacted = events.flatMap((event) => (event.type === 'Compacted' ? [event] : []));
      results[name] = {
        compactions: compacted.length,
        before: median(compacted.map((event) => event.tokensBefore)),
        after: median(compacted.map((event) => event.tokensAfter)),
        extraCalls: standin.requests.filter((request) => textOf(request).includes(SUMMARIZER_MARK)).length,
        survived: result.output.includes(FACT),
      };
    }
  } finally {
    await standin.close();
  }
  const values = (pick: (result: (typeof results)[string]) => number | null) =>
    Object.fromEntries(Object.entries(results).map(([name, result]) => [name, pick(result)]));
  return {
    title: `Compaction: a ${steps}-step task of ~2.6k-character tool outputs in an ${contextTokens.toLocaleString('en-US')}-token window`,
    rows: [
      { metric: 'compactions', unit: 'count', values: values((result) => result.compactions) },
      { metric: 'context tokens before a compaction (median)', unit: 'tokens', values: values((result) => result.before) },
      { metric: 'context tokens after a compaction (median)', unit: 'tokens', values: values((result) => result.after) },
      { metric: 'extra LLM calls spent on compaction', unit: 'count', values: values((result) => result.extraCalls) },
      {
        metric: 'a fact given at the start survives into the final answer',
        unit: '1 = yes',
        values: values((result) => (result.survived ? 1 : 0)),
        target: { text: 'survives with every strategy', met: Object.values(results).every((result) => result.survived) },
      },
    ],
    notes: [
      'the scripted model answers the fact only if it is still in the context it is sent; the scripted summarizer keeps stated facts (a faithful summarizer); both strategies keep the latest user request verbatim, which is why the fact survives even truncation',
    ],
  };
};
