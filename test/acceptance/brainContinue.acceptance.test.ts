// acceptance: brain-continue workflows (docs/design/continuation.md), through the public API and the real SDKs over HTTP to the stand-in
import { describe, expect, it } from 'vitest';
import { z } from 'zod';

import { genClaudeAtom } from '../../src/providers/anthropic/genClaudeAtom.js';
import {
  BadRequestError,
  CLAUDE_MODELS,
  ContextOverflowError,
  ContinuationNotSupportedError,
  EpisodeCompactedError,
  genBrainAtom,
  genBrainRepl,
  hashBrainEpisode,
  type BrainEpisode,
  type BrainSeries,
} from '../../src/index.js';
import type { StandinRequest } from '#standin/types.js';
import { useStandin } from '#standin/useStandin.js';
import { systemOf } from '#standin/requestParts.js';

// a window as small as qwen-max's, so the stand-in refuses what a real 32k model would refuse
const { standin, contextFor } = useStandin({ cacheMinTokens: 0, contextLimitTokens: 32_768 });

/** the conversation turns a request carried, as plain { role, text }, whichever protocol carried them */
const turnsOf = (request: StandinRequest): Array<{ role: string; text: string }> =>
  request.protocol === 'anthropic'
    ? request.body.messages.map((message: { role: string; content: string | Array<{ type: string; text?: string }> }) => ({
        role: message.role,
        text:
          typeof message.content === 'string'
            ? message.content
            : message.content.map((block) => block.text ?? `[${block.type}]`).join('\n'),
      }))
    : request.body.messages
        .filter((message: { role: string }) => message.role !== 'system')
        .map((message: { role: string; content: string | null }) => ({ role: message.role, text: message.content ?? '' }));

/** whether prior context travelled as plain text turns: no tool blocks, no supplier-specific ids */
const isPlaintext = (request: StandinRequest): boolean =>
  request.protocol === 'anthropic'
    ? request.body.messages.every((message: { content: Array<{ type: string }> }) =>
        message.content.every((block) => block.type === 'text'),
      )
    : request.body.messages.every(
        (message: { tool_calls?: unknown; content: unknown }) => !message.tool_calls && typeof message.content === 'string',
      );

/** what the user said last in a request */
const lastSaid = (request: StandinRequest): string =>
  turnsOf(request)
    .filter((turn) => turn.role === 'user')
    .at(-1)?.text ?? '';

/** the text of everything a request carried */
const sentText = (request: StandinRequest): string => JSON.stringify(request.body);

/** an echo model: every answer names what it was asked, so each branch's answer is traceable */
const echo = (request: StandinRequest) => ({ text: `re: ${lastSaid(request)}` });

/** a brain under test, atom or repl, reduced to ask-on-an-episode */
interface Asker {
  ask: (call: { say: string; on?: { episode: BrainEpisode } }) => Promise<{ output: string; episode: BrainEpisode }>;
}

/** every brain these workflows run on: both atoms and both repls, one per wire protocol */
const BRAINS: Array<{ name: string; protocol: 'anthropic' | 'openai'; make: () => Asker }> = [
  { name: 'atom claude/haiku', protocol: 'anthropic', make: () => askerOf(genBrainAtom({ slug: 'claude/haiku' })) },
  { name: 'atom qwen/qwen-plus', protocol: 'openai', make: () => askerOf(genBrainAtom({ slug: 'qwen/qwen-plus' })) },
  {
    name: 'repl bhrain.struct.v1@claude/haiku',
    protocol: 'anthropic',
    make: () => askerOf(genBrainRepl({ slug: 'bhrain.struct.v1@claude/haiku' })),
  },
  {
    name: 'repl bhrain.struct.v1@qwen/qwen-plus',
    protocol: 'openai',
    make: () => askerOf(genBrainRepl({ slug: 'bhrain.struct.v1@qwen/qwen-plus' })),
  },
];
const askerOf = (brain: {
  ask: (
    call: { say: string; on?: { episode: BrainEpisode } },
    context?: ReturnType<typeof contextFor>,
  ) => Promise<{ output: string; episode: BrainEpisode }>;
}): Asker => ({
  ask: (call) => brain.ask(call, contextFor()),
});
const ATOMS = BRAINS.filter((brain) => brain.name.startsWith('atom'));
const REPLS = [
  { slug: 'bhrain.struct.v1@claude/haiku', protocol: 'anthropic' as const },
  { slug: 'bhrain.struct.v1@qwen/qwen-plus', protocol: 'openai' as const },
];

const inputsOf = (episode: BrainEpisode) => episode.exchanges.map((exchange) => exchange.input);

describe.each(ATOMS)('multistep review workflow (BrainAtom) on $name', ({ make, protocol }) => {
  const ROLE = 'You are a code reviewer. Flag vague variable names, one line per issue. Reply "ready" to confirm.';
  const CONFIRMATION = 'ready: I will flag vague variable names, one line per issue';
  const CONTENT = 'const x = fetchUsers();';
  const REVIEW = 'issue: `x` says nothing; name it `users`';

  it('given a reviewer role set up in one ask, when content follows on its episode, then the review follows the role', async () => {
    const brain = make();
    standin().script({ text: CONFIRMATION }, { text: REVIEW });

    // when: the user starts an episode with role instructions
    const setup = await brain.ask({ say: ROLE });
    expect(setup.output).toBe(CONFIRMATION);
    expect(setup.episode.exchanges).toHaveLength(1);
    const setupHash = setup.episode.hash;

    // when: the user continues with content to review
    const review = await brain.ask({ say: CONTENT, on: { episode: setup.episode } });

    // then: the brain received the role and its confirmation, as plain text turns, before the content
    const request = standin().requests[1];
    expect(request.protocol).toBe(protocol);
    expect(turnsOf(request)).toEqual([
      { role: 'user', text: ROLE },
      { role: 'assistant', text: CONFIRMATION },
      { role: 'user', text: CONTENT },
    ]);
    expect(isPlaintext(request)).toBe(true);
    // then: the review comes back, on a NEW episode of two exchanges; the setup episode is untouched
    expect(review.output).toBe(REVIEW);
    expect(review.episode.exchanges.map((exchange) => [exchange.input, exchange.output])).toEqual([
      [ROLE, CONFIRMATION],
      [CONTENT, REVIEW],
    ]);
    expect(review.episode.hash).not.toBe(setupHash);
    expect(setup.episode.hash).toBe(setupHash);
    expect(setup.episode.exchanges).toHaveLength(1);
  });
});

describe.each(BRAINS)('pattern.1: fanout via saved episodes, on $name', ({ make }) => {
  it('given a saved episode, when several asks branch from it concurrently, then each sees the checkpoint and no sibling', async () => {
    const brain = make();
    standin().respond = echo;
    const saved = (await brain.ask({ say: 'checkpoint: the service is called ORCHID and runs on port 7070' })).episode;
    const savedHash = saved.hash;
    const branches = ['branch A: propose a cache', 'branch B: propose a queue', 'branch C: propose a rewrite'];

    // when: the same saved episode is continued three times at once
    const results = await Promise.all(branches.map((say) => brain.ask({ say, on: { episode: saved } })));

    // then: each request carries the checkpoint and only its own branch
    const requests = standin().requests.slice(1);
    expect(requests).toHaveLength(branches.length);
    for (const say of branches) {
      const own = requests.filter((request) => sentText(request).includes(say));
      expect(own).toHaveLength(1);
      expect(sentText(own[0])).toContain('ORCHID');
      for (const sibling of branches.filter((other) => other !== say)) expect(sentText(own[0])).not.toContain(sibling);
    }
    // then: each branch answers its own question, on its own NEW episode
    expect(results.map((result) => result.output)).toEqual(branches.map((say) => `re: ${say}`));
    expect(results.map((result) => inputsOf(result.episode))).toEqual(branches.map((say) => [saved.exchanges[0].input, say]));
    expect(new Set([savedHash, ...results.map((result) => result.episode.hash)]).size).toBe(branches.length + 1);
    // then: the saved episode is unchanged, frozen, and still intact
    expect(saved.hash).toBe(savedHash);
    expect(saved.exchanges).toHaveLength(1);
    expect(hashBrainEpisode(saved)).toBe(savedHash);
    expect(Object.isFrozen(saved) && Object.isFrozen(saved.exchanges)).toBe(true);
    expect(() => (saved.exchanges as BrainEpisode['exchanges'][number][]).push(saved.exchanges[0])).toThrow(TypeError);
  });
});

describe.each(BRAINS)('pattern.2: revive via saved episodes, on $name', ({ make }) => {
  it('given a third exchange that went wrong, when the user re-asks on the second episode, then the bad exchange is out of context', async () => {
    const brain = make();
    const BAD = 'BAD ANSWER: spend the whole budget on billboards';
    standin().respond = (request) => (lastSaid(request).startsWith('step 3:') ? { text: BAD } : echo(request));
    const one = await brain.ask({ say: 'step 1: the budget is 100 dollars' });
    const two = await brain.ask({ say: 'step 2: spend 40 on tools', on: { episode: one.episode } });
    const three = await brain.ask({ say: 'step 3: how to spend the rest?', on: { episode: two.episode } });
    expect(three.output).toBe(BAD);

    // when: the user revives from the second episode
    const retry = await brain.ask({ say: 'step 3 (retry): how to spend the remaining 60?', on: { episode: two.episode } });

    // then: the brain sees steps 1 and 2 only
    const request = standin().requests.at(-1)!;
    expect(sentText(request)).toContain('step 1: the budget is 100 dollars');
    expect(sentText(request)).toContain('step 2: spend 40 on tools');
    expect(sentText(request)).not.toContain('step 3: how to spend the rest?');
    expect(sentText(request)).not.toContain('BAD ANSWER');
    // then: a NEW episode for the retry path: [1, 2, retry]; the bad path still exists as it was
    expect(inputsOf(retry.episode)).toEqual([
      'step 1: the budget is 100 dollars',
      'step 2: spend 40 on tools',
      'step 3 (retry): how to spend the remaining 60?',
    ]);
    expect(retry.output).toBe('re: step 3 (retry): how to spend the remaining 60?');
    expect(retry.episode.hash).not.toBe(three.episode.hash);
    expect(three.episode.exchanges.map((exchange) => exchange.output).at(-1)).toBe(BAD);
    expect(two.episode.exchanges).toHaveLength(2);
  });
});

describe.each(BRAINS)('prior refs remain valid after new calls, on $name', ({ make }) => {
  it('given an episode continued twice, when the user continues from the oldest ref again, then the brain sees context only as of that ref', async () => {
    const brain = make();
    standin().respond = echo;
    const one = await brain.ask({ say: 'fact one: the repo is a monorepo' });
    const oneHash = one.episode.hash;
    const two = await brain.ask({ say: 'fact two: it uses pnpm', on: { episode: one.episode } });
    await brain.ask({ say: 'fact three: CI runs on every push', on: { episode: two.episode } });

    const again = await brain.ask({ say: 'what do you know?', on: { episode: one.episode } });

    const request = standin().requests.at(-1)!;
    expect(turnsOf(request).map((turn) => turn.text)).toEqual([
      'fact one: the repo is a monorepo',
      're: fact one: the repo is a monorepo',
      'what do you know?',
    ]);
    expect(sentText(request)).not.toContain('fact two');
    expect(sentText(request)).not.toContain('fact three');
    expect(inputsOf(again.episode)).toEqual(['fact one: the repo is a monorepo', 'what do you know?']);
    expect(one.episode.hash).toBe(oneHash);
    expect(inputsOf(two.episode)).toEqual(['fact one: the repo is a monorepo', 'fact two: it uses pnpm']);
  });
});

describe.each(REPLS)('prior series refs remain valid after new calls, on $slug', ({ slug }) => {
  it('given a series continued by ask then act, when the user continues from the first series again, then later exchanges are not visible', async () => {
    const repl = genBrainRepl({ slug });
    standin().respond = echo;
    const first = await repl.ask({ say: 'plan: add a readme section' }, contextFor());
    const firstHash = first.series.hash;
    const second = await repl.act({ do: 'write the plan down', on: { series: first.series } }, contextFor());
    expect(sentText(standin().requests[1])).toContain('plan: add a readme section');
    expect(second.series.hash).not.toBe(firstHash);

    const branch = await repl.ask({ say: 'instead, add a changelog', on: { series: first.series } }, contextFor());

    expect(sentText(standin().requests[2])).toContain('plan: add a readme section');
    expect(sentText(standin().requests[2])).not.toContain('write the plan down');
    expect(inputsOf(branch.episode)).toEqual(['plan: add a readme section', 'instead, add a changelog']);
    expect(first.series.hash).toBe(firstHash);
    expect(Object.isFrozen(first.series)).toBe(true);
  });
});

describe('cross-supplier consensus fanout', () => {
  const schema = z.object({ verdict: z.enum(['approve', 'reject']), reasons: z.array(z.string()).min(1) });
  const DIFF = 'diff: rename `x` to `users` in src/users.ts; no behaviour change';
  const NOTED = 'noted the diff: one rename in src/users.ts';

  it('given an episode made on claude, when claude, qwen and a qwen repl answer on it with one schema, then the outputs conform and aggregate', async () => {
    standin().script({ text: NOTED });
    const made = await genBrainAtom({ slug: 'claude/haiku' }).ask({ say: DIFF }, contextFor());
    expect(standin().requests[0].protocol).toBe('anthropic');
    // each voter answers in its own style: a repl (tools offered) and claude approve; the qwen atom rejects, in a code fence
    standin().respond = (request) => {
      if (!systemOf(request).includes('conforms to this JSON Schema:')) return undefined;
      if (request.body.tools) return { text: '{"verdict":"approve","reasons":["the rename is mechanical"]}' };
      return request.protocol === 'anthropic'
        ? { text: '{"verdict":"approve","reasons":["clearer name"]}' }
        : { text: '```json\n{"verdict":"reject","reasons":["no test touches it"]}\n```' };
    };

    // when: the same episode and the same schema go to every voter at once
    const say = 'Should this change be approved?';
    const voters = [
      {
        name: 'claude/haiku',
        ask: () =>
          genBrainAtom({ slug: 'claude/haiku' }).ask({ say, on: { episode: made.episode }, schema: { output: schema } }, contextFor()),
      },
      {
        name: 'qwen/qwen-plus',
        ask: () =>
          genBrainAtom({ slug: 'qwen/qwen-plus' }).ask({ say, on: { episode: made.episode }, schema: { output: schema } }, contextFor()),
      },
      {
        name: 'bhrain.struct.v1@qwen/qwen-plus',
        ask: () =>
          genBrainRepl({ slug: 'bhrain.struct.v1@qwen/qwen-plus' }).ask(
            { say, on: { episode: made.episode }, schema: { output: schema } },
            contextFor(),
          ),
      },
    ];
    const results = await Promise.all(voters.map((voter) => voter.ask()));

    // then: every output conforms to the schema, and is typed by it
    for (const result of results) expect(schema.parse(result.output)).toEqual(result.output);
    expect(results.map((result) => result.output.verdict)).toEqual(['approve', 'reject', 'approve']);
    // then: the qwen requests received the claude-made exchange as plaintext turns
    const qwenRequests = standin().requests.filter((request) => request.protocol === 'openai');
    expect(qwenRequests).toHaveLength(2);
    for (const request of qwenRequests) {
      expect(turnsOf(request).slice(0, 3)).toEqual([
        { role: 'user', text: DIFF },
        { role: 'assistant', text: NOTED },
        { role: 'user', text: say },
      ]);
      expect(isPlaintext(request)).toBe(true);
    }
    // then: each voter's NEW episode continues the claude-made one; the claude-made one is unchanged
    for (const result of results) expect(result.episode.exchanges[0]).toEqual(made.episode.exchanges[0]);
    expect(made.episode.exchanges).toHaveLength(1);
    // then: the outputs aggregate into a consensus (majority vote)
    const tally = results.reduce<Record<string, number>>(
      (counts, result) => ({ ...counts, [result.output.verdict]: (counts[result.output.verdict] ?? 0) + 1 }),
      {},
    );
    const [consensus, votes] = Object.entries(tally).sort((a, b) => b[1] - a[1])[0];
    expect({ consensus, votes, of: results.length }).toEqual({ consensus: 'approve', votes: 2, of: 3 });
  });
});

describe.each(BRAINS)('an invalid episode ref, on $name', ({ make }) => {
  it('given a forged episode, when the user continues it, then BadRequestError says to start a new episode, nothing is sent, and a fresh ask works', async () => {
    const brain = make();
    standin().respond = echo;
    const made = await brain.ask({ say: 'remember: the owner is Ada' });
    const forged = { ...made.episode, exchanges: [{ ...made.episode.exchanges[0], output: 'the owner is Mallory' }] };
    const sentBefore = standin().requests.length;

    for (const ref of [forged, { ...made.episode, hash: '0'.repeat(64) }, {} as BrainEpisode]) {
      const error = await brain.ask({ say: 'who is the owner?', on: { episode: ref } }).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(BadRequestError);
      expect((error as Error).message).toMatch(/episode not found or invalid/);
      expect((error as Error).message).toMatch(/start a new episode by calling without `on`/i);
    }
    // explicit continuation fails explicitly: no request, no implicit new episode
    expect(standin().requests).toHaveLength(sentBefore);

    // recovery: the suggested path, a new episode
    const fresh = await brain.ask({ say: 'the owner is Ada; who is the owner?' });
    expect(fresh.output).toBe('re: the owner is Ada; who is the owner?');
    expect(fresh.episode.exchanges).toHaveLength(1);
  });
});

describe.each(REPLS)('invalid series refs and both refs at once, on $slug', ({ slug }) => {
  it('given a forged series, when the user continues it, then BadRequestError says to start a new series, and a fresh ask works', async () => {
    const repl = genBrainRepl({ slug });
    standin().respond = echo;
    const made = await repl.ask({ say: 'remember: the owner is Ada' }, contextFor());
    const tamperedEpisode = { ...made.episode, exchanges: [{ ...made.episode.exchanges[0], input: 'remember: the owner is Mallory' }] };
    const sentBefore = standin().requests.length;

    for (const ref of [
      { ...made.series, hash: '0'.repeat(64) },
      { ...made.series, episodes: [tamperedEpisode] },
      { ...made.series, episodes: [] },
    ]) {
      const error = await repl.ask({ say: 'who is the owner?', on: { series: ref } }, contextFor()).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(BadRequestError);
      expect((error as Error).message).toMatch(/series not found or invalid/);
      expect((error as Error).message).toMatch(/start a new series by calling without `on`/i);
    }
    expect(standin().requests).toHaveLength(sentBefore);

    const fresh = await repl.ask({ say: 'start over: the owner is Ada' }, contextFor());
    expect(fresh.series.episodes).toEqual([fresh.episode]);
    expect(fresh.series.hash).not.toBe(made.series.hash);
  });

  it('given both episode and series at runtime (past the PickOne type), then ask and act fail with BadRequestError, and one ref works', async () => {
    const repl = genBrainRepl({ slug });
    standin().respond = echo;
    const made = await repl.ask({ say: 'remember: the owner is Ada' }, contextFor());
    const both = { episode: made.episode, series: made.series } as never;

    await expect(repl.ask({ say: 'who?', on: both }, contextFor())).rejects.toThrow(BadRequestError);
    await expect(repl.act({ do: 'write it down', on: both }, contextFor())).rejects.toThrow(/exactly one of episode or series/);
    expect(standin().requests).toHaveLength(1);

    const onSeries = await repl.ask({ say: 'who is the owner?', on: { series: made.series } }, contextFor());
    expect(sentText(standin().requests[1])).toContain('remember: the owner is Ada');
    expect(inputsOf(onSeries.episode)).toEqual(['remember: the owner is Ada', 'who is the owner?']);
  });
});

describe('a supplier without continuation support', () => {
  const limited = genClaudeAtom({ slug: 'claude/haiku', entry: { ...CLAUDE_MODELS.haiku, continuation: false } });

  it('given a prior episode, when the limited atom is asked to continue it, then ContinuationNotSupportedError carries the episode, and qwen continues it', async () => {
    standin().respond = echo;
    // a fresh ask on the limited atom still succeeds and returns an episode
    const fresh = await limited.ask({ say: 'context: the release is on Tuesday' }, contextFor());
    expect(fresh.output).toBe('re: context: the release is on Tuesday');
    expect(fresh.episode.exchanges).toHaveLength(1);

    const error = await limited
      .ask({ say: 'when is the release?', on: { episode: fresh.episode } }, contextFor())
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ContinuationNotSupportedError);
    expect(error).toBeInstanceOf(BadRequestError);
    expect((error as Error).message).toMatch(/claude\/haiku does not support continuation/);
    const ref = (error as ContinuationNotSupportedError).ref;
    expect(ref.episode).toBe(fresh.episode);
    expect(standin().requests).toHaveLength(1);

    // recovery: the same ref, continued on a capable brain of another supplier, which sees the context as plaintext
    const recovered = await genBrainAtom({ slug: 'qwen/qwen-plus' }).ask(
      { say: 'when is the release?', on: { episode: ref.episode as BrainEpisode } },
      contextFor(),
    );
    const request = standin().requests[1];
    expect(request.protocol).toBe('openai');
    expect(turnsOf(request)).toEqual([
      { role: 'user', text: 'context: the release is on Tuesday' },
      { role: 'assistant', text: 're: context: the release is on Tuesday' },
      { role: 'user', text: 'when is the release?' },
    ]);
    expect(inputsOf(recovered.episode)).toEqual(['context: the release is on Tuesday', 'when is the release?']);
  });

  it('given a repl over the limited atom, when it is asked to continue a series, then the error carries the series, and a capable repl continues it', async () => {
    standin().respond = echo;
    const repl = genBrainRepl({ atom: limited });
    const fresh = await repl.ask({ say: 'context: the release is on Tuesday' }, contextFor());
    expect(fresh.series.episodes).toEqual([fresh.episode]);

    const error = await repl.ask({ say: 'when?', on: { series: fresh.series } }, contextFor()).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ContinuationNotSupportedError);
    const ref = (error as ContinuationNotSupportedError).ref;
    expect(ref.series).toBe(fresh.series);

    const recovered = await genBrainRepl({ slug: 'bhrain.struct.v1@qwen/qwen-plus' }).ask(
      { say: 'when?', on: { series: ref.series as BrainSeries } },
      contextFor(),
    );
    expect(sentText(standin().requests.at(-1)!)).toContain('context: the release is on Tuesday');
    expect(recovered.series.hash).not.toBe(fresh.series.hash);
  });
});

describe.each(REPLS)('a compacted episode, on $slug', ({ slug }) => {
  it('given a series that compacted, when the user continues its closed episode, then EpisodeCompactedError points to the series, which works', async () => {
    const repl = genBrainRepl({ slug, config: { limits: { contextTokens: 3_000 } } });
    standin().respond = (request) => {
      if (systemOf(request).includes('You compact a conversation')) return { text: 'RECAP: the password is swordfish' };
      return lastSaid(request).includes('long poem') ? { text: 'y'.repeat(8_000) } : echo(request);
    };
    const first = await repl.ask({ say: 'remember the password swordfish, then write a long poem' }, contextFor());
    const second = await repl.ask({ say: 'what is the password?', on: { series: first.series } }, contextFor());
    expect(second.series.episodes).toHaveLength(2);

    const error = await repl.ask({ say: 'more', on: { episode: first.episode } }, contextFor()).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(EpisodeCompactedError);
    expect((error as Error).message).toMatch(/Continue via \{ on: \{ series \} \} instead/);
    const ref = (error as EpisodeCompactedError).ref;
    expect(ref.series).toBe(second.series);

    // recovery: continue the series the error names; the brain reads the recap, not the compacted poem
    const recovered = await repl.ask({ say: 'and the password again?', on: { series: ref.series as BrainSeries } }, contextFor());
    const request = standin().requests.at(-1)!;
    expect(sentText(request)).toContain('RECAP: the password is swordfish');
    expect(sentText(request)).not.toContain('y'.repeat(100));
    expect(recovered.output).toBe('re: and the password again?');
    expect(recovered.series.episodes).toHaveLength(2);
  });
});

describe('a long episode that outgrows a smaller window', () => {
  it('given an episode made on a 1M-window atom, when a 32k atom continues it, then ContextOverflowError names the limit, and a repl on the same atom continues it by compaction', async () => {
    const LONG = `the spec, at length: ${'a'.repeat(100_000)}`;
    standin().respond = (request) =>
      systemOf(request).includes('You compact a conversation') ? { text: 'RECAP: the user shared a long spec' } : { text: 'noted' };
    const made = await genBrainAtom({ slug: 'qwen/qwen-turbo' }).ask({ say: LONG }, contextFor());
    const say = `now this addendum: ${'b'.repeat(40_000)}`;

    const error = await genBrainAtom({ slug: 'qwen/qwen-max' })
      .ask({ say, on: { episode: made.episode } }, contextFor())
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ContextOverflowError);
    expect((error as ContextOverflowError).limit.tokens).toBe(32_768);
    expect((error as Error).message).toMatch(/continue it on a BrainRepl \(which compacts a long episode into a recap\)/);
    expect(standin().requests).toHaveLength(1);

    // recovery: the same episode on a repl over the same small atom compacts it into a recap first
    const recovered = await genBrainRepl({ slug: 'bhrain.struct.v1@qwen/qwen-max' }).ask(
      { say, on: { episode: made.episode } },
      contextFor(),
    );
    expect(recovered.series.summaries).toEqual(['RECAP: the user shared a long spec']);
    const last = standin().requests.at(-1)!;
    expect(sentText(last)).toContain('RECAP: the user shared a long spec');
    expect(sentText(last)).not.toContain('a'.repeat(100));
    expect(recovered.output).toBe('noted');
    expect(inputsOf(recovered.episode)).toEqual([expect.stringContaining('RECAP: the user shared a long spec'), say]);
  });
});
