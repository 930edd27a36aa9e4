import { describe, expect, it } from 'vitest';

import { PROTOCOL_SLUGS, useStandin } from '#standin/useStandin.js';
import { genBrainEpisode } from '../core/contract/BrainEpisode.js';
import { genBrainExchange } from '../core/contract/BrainExchange.js';
import { BadRequestError, ContextOverflowError, ContinuationNotSupportedError } from '../core/contract/errors.js';
import { genClaudeAtom } from './anthropic/genClaudeAtom.js';
import { genBrainAtom } from './genBrainAtom.js';
import { CLAUDE_MODELS } from './models.js';

const { standin, contextFor } = useStandin();
const sent = (index: number) => JSON.stringify(standin().requests[index].body.messages);

describe.each(PROTOCOL_SLUGS)('BrainAtom.ask continuation on $slug', ({ slug }) => {
  const atom = genBrainAtom({ slug });

  it('a fresh ask creates a new frozen episode with the output', async () => {
    standin().script({ text: 'pong' });
    const result = await atom.ask({ say: 'ping' }, contextFor());
    expect(result.output).toBe('pong');
    expect(result.episode.exchanges).toEqual([expect.objectContaining({ input: 'ping', output: 'pong', exid: null })]);
    expect(Object.isFrozen(result.episode)).toBe(true);
    expect(result.series).toBeNull();
  });

  it('continuing builds on the prior episode, returns a NEW one, and the prior stays unchanged', async () => {
    standin().script({ text: 'I will remember 7' }, { text: 'the number was 7' }, { text: 'branch answer' });
    const first = await atom.ask({ say: 'remember the number 7' }, contextFor());
    const snapshot = JSON.stringify(first.episode);
    const second = await atom.ask({ say: 'which number?', on: { episode: first.episode } }, contextFor());
    expect(sent(1)).toContain('remember the number 7');
    expect(sent(1)).toContain('I will remember 7');
    expect(second.episode.hash).not.toBe(first.episode.hash);
    expect(JSON.stringify(first.episode)).toBe(snapshot);
    await atom.ask({ say: 'branch', on: { episode: first.episode } }, contextFor());
    expect(sent(2)).not.toContain('which number?');
  });

  it('calls without continuation are independent episodes with no context bleed', async () => {
    standin().script({ text: 'a' }, { text: 'b' });
    const one = await atom.ask({ say: 'first secret: alpha' }, contextFor());
    const two = await atom.ask({ say: 'second question' }, contextFor());
    expect(sent(1)).not.toContain('alpha');
    expect(two.episode.hash).not.toBe(one.episode.hash);
    expect(two.episode.exchanges).toHaveLength(1);
  });

  it('an invalid or non-existent episode fails, suggests a new episode, and creates nothing', async () => {
    const forged = { hash: 'nope', exid: null, exchanges: [genBrainExchange({ input: 'a', output: 'b' })] };
    const error = await atom.ask({ say: 'x', on: { episode: forged } }, contextFor()).catch((caught) => caught);
    expect(error).toBeInstanceOf(BadRequestError);
    expect(error.message).toMatch(/episode not found or invalid.*Start a new episode by calling without `on`/);
    expect(standin().requests).toHaveLength(0);
  });

  it('an episode too long for the window fails before the call, naming the limit', async () => {
    const long = genBrainEpisode({
      exchanges: Array.from({ length: 40 }, (_, index) =>
        genBrainExchange({ input: `q${index} ${'w'.repeat(30_000)}`, output: `a${index}` }),
      ),
    });
    const error = await atom.ask({ say: 'summarize', on: { episode: long } }, contextFor()).catch((caught) => caught);
    expect(error).toBeInstanceOf(ContextOverflowError);
    expect(error.message).toMatch(
      /the episode \(40 exchanges\) and this request are about \d+ tokens, more than .* context window of \d+ tokens/,
    );
    expect(standin().requests).toHaveLength(0);
  });
});

describe('crosssupplier.1: an atom episode from claude continues on qwen', () => {
  it('qwen receives the exchanges as plaintext and returns a NEW episode', async () => {
    standin().script({ text: 'noted, the budget is 300' }, { text: 'the budget is 300' });
    const made = await genBrainAtom({ slug: 'claude/haiku' }).ask({ say: 'the budget is 300' }, contextFor());
    const continued = await genBrainAtom({ slug: 'qwen/qwen-plus' }).ask(
      { say: 'what is the budget?', on: { episode: made.episode } },
      contextFor(),
    );
    expect(standin().requests[1].protocol).toBe('openai');
    expect(sent(1)).toContain('noted, the budget is 300');
    expect(continued.episode.exchanges.map((exchange) => exchange.input)).toEqual(['the budget is 300', 'what is the budget?']);
  });
});

describe('an atom whose supplier lacks continuation', () => {
  const atom = genClaudeAtom({ slug: 'claude/haiku', entry: { ...CLAUDE_MODELS.haiku, continuation: false } });

  it('fails fast with the prior ref on `on`; a fresh call succeeds and returns an episode', async () => {
    standin().script({ text: 'fresh' });
    const fresh = await atom.ask({ say: 'hi' }, contextFor());
    expect(fresh.episode.exchanges).toHaveLength(1);
    const error = await atom.ask({ say: 'again', on: { episode: fresh.episode } }, contextFor()).catch((caught) => caught);
    expect(error).toBeInstanceOf(ContinuationNotSupportedError);
    expect(error.message).toMatch(/claude\/haiku does not support continuation/);
    expect(error.ref.episode).toBe(fresh.episode);
    expect(standin().requests).toHaveLength(1);
  });
});
