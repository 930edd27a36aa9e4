import { describe, expect, it } from 'vitest';

import { PROTOCOL_SLUGS, useStandin } from '#standin/useStandin.js';
import type { StandinRequest } from '#standin/types.js';
import { computeCash } from '../../providers/computeCash.js';
import { genBrainAtom } from '../../providers/genBrainAtom.js';
import { BadRequestError } from '../../core/contract/errors.js';
import type { BhrainEvent } from '../events.js';
import { genBhrain, invoke } from '../genBhrain.js';
import type { BhrainMemoryManager } from '../memory/BhrainMemoryManager.js';
import type { BhrainToolBox } from '../tool/BhrainToolBox.js';
import { genBashToolBox } from '../toolboxes/bash/genBashToolBox.js';
import { checkBudget, emptySpend, sumTokens } from './checkBudget.js';
import { tempDir } from '#test-helpers/fs.js';

const { standin, contextFor } = useStandin();

/** a tool that always succeeds: a model calling it forever is a runaway loop */
const counter: BhrainToolBox = {
  name: 'counter',
  definitions: [{ name: 'count', description: 'returns n', inputSchema: { type: 'object', properties: { n: { type: 'integer' } } } }],
  execute: async ({ call }) => ({ callId: call.id, success: true, output: `counted ${call.input.n}` }),
};

/** the stand-in plays a model that never stops calling the tool (each call different, so no runaway notice ends it) */
const playRunaway = () => {
  let n = 0;
  standin().respond = (request) =>
    JSON.stringify(request.body).includes('SUMMARIZE') ? undefined : { toolCalls: [{ name: 'count', input: { n: ++n } }] };
};

/** the tokens the stand-in reported for one request, in the budget's sense: input, output and both cache parts */
const tokensOf = (request: StandinRequest): number => {
  const usage = request.usage!;
  // openai's prompt count already includes the cached part
  return usage.input + usage.output + usage.cacheWrite + (request.protocol === 'openai' ? 0 : usage.cacheRead);
};
const cumulative = (requests: readonly StandinRequest[]) =>
  requests.reduce<number[]>((sums, request) => [...sums, (sums.at(-1) ?? 0) + tokensOf(request)], []);

describe.each(PROTOCOL_SLUGS)('budgets on $slug', ({ slug }) => {
  it('budgets: limits.maxTokens stops a runaway loop after a bounded number of requests, with the partial answer and the transcript', async () => {
    playRunaway();
    const cap = 20_000;
    const result = await invoke(
      { config: { atom: slug, toolBoxes: [counter], maxIterations: 10_000, limits: { maxTokens: cap } }, prompt: 'count forever' },
      contextFor(),
    );

    expect(result.termination).toBe('budget');
    const sums = cumulative(standin().requests);
    // checked before every request: the last request was sent under the cap, and no request was sent once it was reached
    expect(sums.at(-2)!).toBeLessThan(cap);
    expect(sums.at(-1)!).toBeGreaterThanOrEqual(cap);
    expect(standin().requests.length).toBeLessThan(40);
    expect(sumTokens(result.tokens)).toBe(sums.at(-1));
    expect(result.budgetReached).toEqual({ limit: 'maxTokens', spent: sums.at(-1), cap });
    expect(result.output).toBe(
      `[bhrain stopped before the task was complete: the token budget was reached: ${sums.at(-1)} tokens spent (input, output and cache) of a cap of ${cap} (--max-tokens, limits.maxTokens). The answer above is partial. Continue from this session's refs, or raise the limit.]`,
    );
    expect(result.iterations).toBe(standin().requests.length);
    expect(result.transcript.filter((message) => message.role === 'tool')).toHaveLength(standin().requests.length);
  });

  it('budgets: limits.maxBudgetUsd stops the loop once the summed price of the requests reaches the cap', async () => {
    playRunaway();
    const price = genBrainAtom({ slug }).spec.price;
    const costs: number[] = [];
    const onEvent = (event: BhrainEvent) => {
      if (event.type !== 'IterationCompleted') return;
      costs.push(computeCash(event.tokens, price)!.total);
    };
    const cap = 0.005;
    const result = await invoke(
      { config: { atom: slug, toolBoxes: [counter], maxIterations: 10_000, limits: { maxBudgetUsd: cap } }, prompt: 'count forever' },
      contextFor({ onEvent }),
    );
    expect(result.termination).toBe('budget');
    const sums = costs.reduce<number[]>((all, cost) => [...all, (all.at(-1) ?? 0) + cost], []);
    expect(costs).toHaveLength(standin().requests.length);
    expect(sums.length).toBeGreaterThan(2);
    // checked before every request: the last one was sent under the cap, and none once it was reached
    expect(sums.at(-2)!).toBeLessThan(cap);
    expect(sums.at(-1)!).toBeGreaterThanOrEqual(cap);
    expect(result.cash!.total).toBeCloseTo(sums.at(-1)!, 8);
    expect(result.budgetReached).toEqual({ limit: 'maxBudgetUsd', spent: result.cash!.total, cap });
    expect(result.output).toBe(
      `[bhrain stopped before the task was complete: the cost budget was reached: $${result.cash!.total.toFixed(6)} spent of a cap of $0.005000 (--max-budget-usd, limits.maxBudgetUsd). The answer above is partial. Continue from this session's refs, or raise the limit.]`,
    );
  });

  it('budgets: a compaction summary is a request like any other: counted in the spend, and not sent once the budget is reached', async () => {
    playRunaway();
    const summarizeOnce: BhrainMemoryManager = {
      name: 'summarize-once',
      shouldUpdate: ({ messages }) => messages.length === 3,
      getUpdate: async (_, context) => {
        await context.generate({ system: 'SUMMARIZE', messages: [{ role: 'user', content: 'SUMMARIZE the transcript' }] });
        return { shouldUpdate: false };
      },
    };
    standin().script({ text: 'summary' });
    const counted = await invoke(
      { config: { atom: slug, toolBoxes: [counter], memoryManager: summarizeOnce, maxIterations: 2 }, prompt: 'count' },
      contextFor(),
    );
    expect(standin().requests).toHaveLength(3);
    expect(sumTokens(counted.tokens)).toBe(cumulative(standin().requests).at(-1));

    // with a cap the first request already reached, the summary is never requested and the loop stops
    standin().reset();
    playRunaway();
    const stopped = await invoke(
      {
        config: { atom: slug, toolBoxes: [counter], memoryManager: summarizeOnce, maxIterations: 10, limits: { maxTokens: 1 } },
        prompt: 'count',
      },
      contextFor(),
    );
    expect(stopped.termination).toBe('budget');
    expect(standin().requests).toHaveLength(1);
  });
});

describe('budgets: wall time, configuration', () => {
  it('budgets: limits.maxWallTimeMs cuts a request still running at the deadline and ends with termination budget', async () => {
    const events: BhrainEvent[] = [];
    standin().script({ delayMs: 10_000, then: { text: 'too late' } });
    const started = Date.now();
    const result = await invoke(
      { config: { atom: 'claude/haiku', toolBoxes: [counter], limits: { maxWallTimeMs: 400 } }, prompt: 'slow' },
      contextFor({ onEvent: (event) => events.push(event) }),
    );
    expect(Date.now() - started).toBeLessThan(3_000);
    expect(result.termination).toBe('budget');
    expect(result.error).toBeNull();
    expect(result.budgetReached).toMatchObject({ limit: 'maxWallTimeMs', cap: 400 });
    expect(result.budgetReached!.spent).toBeGreaterThanOrEqual(400);
    expect(result.output).toMatch(
      /^\[bhrain stopped before the task was complete: the wall-time budget was reached: [\d.]+ s elapsed of a cap of 0\.4 s \(--max-wall-time, limits\.maxWallTimeMs\)/,
    );
    expect(events.at(-1)).toMatchObject({ type: 'SessionCompleted', termination: 'budget' });
  });

  it('budgets: limits.maxWallTimeMs stops a bash command still running at the deadline; no request follows it', async () => {
    const cwd = tempDir('bhrain-wall-');
    standin().script({ text: 'sleeping', toolCalls: [{ name: 'bash', input: { command: 'sleep 20' } }] }, { text: 'never asked' });
    const started = Date.now();
    const result = await invoke(
      { config: { atom: 'claude/haiku', toolBoxes: [genBashToolBox()], limits: { maxWallTimeMs: 1_500 } }, prompt: 'sleep' },
      contextFor({ cwd }),
    );
    expect(Date.now() - started).toBeLessThan(8_000);
    expect(result.termination).toBe('budget');
    expect(standin().requests).toHaveLength(1);
    expect(result.output).toMatch(/^sleeping\n\n\[bhrain stopped before the task was complete: the wall-time budget was reached/);
    expect(result.transcript.filter((message) => message.role === 'tool')).toHaveLength(1);
  }, 20_000);

  it('budgets: limits.maxBudgetUsd over a model without a price fails at configure time (fail closed), before any request', () => {
    expect(() => genBhrain({ atom: 'qwen/my-self-hosted-model', limits: { maxBudgetUsd: 1 } })).toThrow(BadRequestError);
    expect(() => genBhrain({ atom: 'qwen/my-self-hosted-model', limits: { maxBudgetUsd: 1 } })).toThrow(
      'the price of my-self-hosted-model is unknown, so --max-budget-usd (limits.maxBudgetUsd) cannot be enforced; use a model with a known price, or cap the run with --max-tokens (limits.maxTokens) or --max-wall-time (limits.maxWallTimeMs) instead',
    );
    // the other limits need no price
    expect(
      genBhrain({ atom: 'qwen/my-self-hosted-model', limits: { maxTokens: 1_000, maxWallTimeMs: 1_000 } }).config.limits,
    ).toMatchObject({ maxTokens: 1_000, maxWallTimeMs: 1_000 });
    expect(standin().requests).toHaveLength(0);
  });

  it('budgets: a limit that is not a positive number is a bad request naming the field', () => {
    const configure = (limits: object) => () => genBhrain({ atom: 'claude/haiku', limits: limits as never });
    expect(configure({ maxTokens: 0 })).toThrow(/limits\.maxTokens must be at least 1[\s\S]*→ at limits\.maxTokens/);
    expect(configure({ maxTokens: 1.5 })).toThrow(/limits\.maxTokens must be a whole number of tokens/);
    expect(configure({ maxBudgetUsd: -1 })).toThrow(/limits\.maxBudgetUsd must be more than 0 US dollars/);
    expect(configure({ maxWallTimeMs: '90s' })).toThrow(/limits\.maxWallTimeMs must be a number of milliseconds/);
    expect(configure({ maxTokens: 0 })).toThrow(BadRequestError);
  });
});

describe('checkBudget', () => {
  const spent = (tokens: number, usd: number | null, elapsedMs = 0) => ({
    ...emptySpend(),
    tokens: { input: tokens, output: 0, cache: { get: 0, set: 0 } },
    cash: usd === null ? null : { currency: 'USD' as const, total: usd, deets: { input: usd, output: 0, cache: { get: 0, set: 0 } } },
    elapsedMs,
  });

  it('budgets: a limit is reached at its cap, not before; no limit, no stop', () => {
    expect(checkBudget({ spent: spent(999, 0.1), budget: { maxTokens: 1_000 } })).toBeNull();
    expect(checkBudget({ spent: spent(1_000, 0.1), budget: { maxTokens: 1_000 } })).toEqual({
      limit: 'maxTokens',
      spent: 1_000,
      cap: 1_000,
    });
    expect(checkBudget({ spent: spent(10, 0.5), budget: { maxBudgetUsd: 0.5 } })).toEqual({ limit: 'maxBudgetUsd', spent: 0.5, cap: 0.5 });
    expect(checkBudget({ spent: spent(10, 0, 60_000), budget: { maxWallTimeMs: 60_000 } })).toEqual({
      limit: 'maxWallTimeMs',
      spent: 60_000,
      cap: 60_000,
    });
    expect(checkBudget({ spent: spent(10 ** 9, 10 ** 6, 10 ** 9), budget: {} })).toBeNull();
  });

  it('budgets: a USD cap over a spend whose price is unknown counts as reached (fail closed)', () => {
    expect(checkBudget({ spent: spent(1, null), budget: { maxBudgetUsd: 100 } })).toEqual({ limit: 'maxBudgetUsd', spent: null, cap: 100 });
    expect(checkBudget({ spent: spent(1, null), budget: { maxTokens: 100 } })).toBeNull();
  });
});
