import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';

import { useStandin } from '#standin/useStandin.js';
import type { BrainMessage } from '../../core/contract/BrainMessage.js';
import { silentLog } from '../../core/contract/BrainContext.js';
import { BadRequestError } from '../../core/contract/errors.js';
import { estimateMessagesTokens } from '../../core/contract/tokens.js';
import { SUMMARIZER_SYSTEM } from '../../core/continuation/summarizeTranscript.js';
import { genBrainAtom } from '../../providers/genBrainAtom.js';
import { genBhrain } from '../genBhrain.js';
import type { BhrainToolBox } from '../tool/BhrainToolBox.js';
import { genFilesToolBox } from '../toolboxes/files/genFilesToolBox.js';
import { BhrainMemory } from './BhrainMemory.js';
import type { BhrainMemoryContext, BhrainMemoryManager } from './BhrainMemoryManager.js';
import { tempDir } from '#test-helpers/fs.js';

const { standin, contextFor } = useStandin();

/** a conversation of one request and `turns` iterations, each a call with a result of `size` characters */
const genConversation = (turns: number, size = 400): BrainMessage[] => [
  { role: 'user', content: 'fetch the blobs' },
  ...Array.from({ length: turns }, (_, index): BrainMessage[] => [
    {
      role: 'assistant',
      content: `fetching ${index + 1}`,
      toolCalls: [{ id: `call_${index + 1}`, name: 'fetch', input: { n: index + 1 } }],
    },
    { role: 'tool', toolCallId: `call_${index + 1}`, toolName: 'fetch', content: `blob ${index + 1}: ${'z'.repeat(size)}`, isError: false },
  ]).flat(),
];

/** a memory context over the stand-in's claude, as the loop gives one */
const genMemoryContext = async (overrides: Partial<BhrainMemoryContext> = {}): Promise<BhrainMemoryContext> => {
  const atom = genBrainAtom({ slug: 'claude/haiku' });
  return {
    atom,
    generate: (request) => atom.generate(request, contextFor()),
    contextTokens: 10_000,
    limitTokens: 10_000,
    fixedTokens: 100,
    spillDir: tempDir('bhrain-memory-ops-'),
    log: silentLog,
    ...overrides,
  };
};

describe('BhrainMemory.truncate and BhrainMemory.compact', () => {
  // docs/design/loop.md#memory
  it('BhrainMemory.truncate drops the oldest turns to fit the limit, with no llm call; the request and the newest iteration stay, and no call loses its result', () => {
    const messages = genConversation(6);
    const kept = BhrainMemory.truncate({ messages, limit: 400 });
    expect(kept[0]).toEqual({
      role: 'user',
      content: '[context truncated: the 6 oldest messages of this session were dropped to fit the context window]',
    });
    expect(kept.slice(1).map((message) => message.content.slice(0, 10))).toEqual([
      'fetch the ',
      'fetching 4',
      'blob 4: zz',
      'fetching 5',
      'blob 5: zz',
      'fetching 6',
      'blob 6: zz',
    ]);
    expect(estimateMessagesTokens(kept.slice(1))).toBeLessThanOrEqual(400);
    // what fits is returned as it was given
    expect(BhrainMemory.truncate({ messages, limit: 100_000 })).toBe(messages);
    expect(standin().requests).toHaveLength(0);
  });

  it('BhrainMemory.compact compacts now by a builtin strategy, whatever its shouldUpdate would say; an unknown strategy is a BadRequestError naming the choices', async () => {
    const context = await genMemoryContext({ limitTokens: 1_000, fixedTokens: 0 });
    const result = await BhrainMemory.compact({ messages: genConversation(6), strategy: 'truncate' }, context);
    expect(result.shouldUpdate).toBe(true);
    expect(result.newMessages![0].content).toMatch(/^\[context truncated: the \d+ oldest messages/);
    await expect(BhrainMemory.compact({ messages: [], strategy: 'toString' }, context)).rejects.toThrow(
      new BadRequestError("unknown compaction strategy 'toString': choose one of summarize-on-limit, truncate"),
    );
  });
});

describe('BhrainMemory.summarize: one summarizer', () => {
  // docs/design/loop.md#memory
  it('BhrainMemory.summarize condenses messages into one summary message by the llm, with the one summarizer prompt the repl recap uses', async () => {
    standin().script({ text: 'SUMMARY: six blobs were fetched' });
    const summary = await BhrainMemory.summarize({ messages: genConversation(6) }, await genMemoryContext());
    expect(summary).toEqual({
      role: 'user',
      content: '[context summary: earlier turns of this session were compacted into this summary]\nSUMMARY: six blobs were fetched',
    });
    const [request] = standin().requests;
    expect(JSON.stringify(request.body.system)).toContain(SUMMARIZER_SYSTEM.slice(0, 60));
    expect(JSON.stringify(request.body.messages)).toContain('result of fetch: blob 6');
  });

  it('one summarizer: messages larger than half the window are summarized in parts, then the parts together', async () => {
    let parts = 0;
    standin().respond = (request) => (JSON.stringify(request.body).includes('summarized:') ? { text: 'ALL' } : { text: `PART ${++parts}` });
    const summary = await BhrainMemory.summarize({ messages: genConversation(6, 3_000) }, await genMemoryContext({ limitTokens: 2_000 }));
    expect(parts).toBeGreaterThan(1);
    expect(summary.content).toMatch(/\nALL$/);
    expect(standin().requests.every((request) => JSON.stringify(request.body.system).includes('You compact a conversation'))).toBe(true);
  });
});

describe('BhrainMemory.externalize', () => {
  // docs/design/loop.md#memory
  it('BhrainMemory.externalize stores content in the session spill dir and returns a BhrainMemoryExternalRef; the same content gives the same ref', async () => {
    const context = await genMemoryContext();
    const ref = await BhrainMemory.externalize({ content: 'the whole log, 12 lines' }, context);
    expect(ref).toEqual({
      ref: expect.stringMatching(new RegExp(`^${context.spillDir}/external-[0-9a-f]{16}\\.txt$`)),
      chars: 23,
      tokens: 6,
      placeholder: `[externalized: 23 characters (~6 tokens) were moved out of the context to ${ref.ref}; read that file with the read tool when you need them]`,
    });
    expect(await readFile(ref.ref, 'utf8')).toBe('the whole log, 12 lines');
    expect((await BhrainMemory.externalize({ content: 'the whole log, 12 lines' }, context)).ref).toBe(ref.ref);
  });

  it('a manager externalizes a big tool result with Memory.externalize; its placeholder replaces it in the context and the brain reads it back with read', async () => {
    const bulky: BhrainToolBox = {
      name: 'bulky',
      definitions: [{ name: 'fetch', description: 'returns a big blob', inputSchema: { type: 'object', properties: {} } }],
      execute: async ({ call }) => ({ callId: call.id, success: true, output: `BLOB-START\n${'zzzz\n'.repeat(600)}BLOB-END` }),
    };
    const externalizing: BhrainMemoryManager = {
      name: 'externalize',
      shouldUpdate: ({ messages }) =>
        messages.some((message) => message.role === 'tool' && message.toolName === 'fetch' && message.content.length > 1_000),
      getUpdate: async ({ messages }, context) => {
        const refs: string[] = [];
        const newMessages = await Promise.all(
          messages.map(async (message) => {
            if (message.role !== 'tool' || message.toolName !== 'fetch' || message.content.length <= 1_000) return message;
            const external = await BhrainMemory.externalize({ content: message.content }, context);
            refs.push(external.ref);
            return { ...message, content: external.placeholder };
          }),
        );
        return { shouldUpdate: true, newMessages, externalizedRefs: refs };
      },
    };
    standin().respond = (request) => {
      const ref = /moved out of the context to ([^;]+);/.exec(JSON.stringify(request.body))?.[1];
      if (ref && !JSON.stringify(request.body).includes('BLOB-END')) return { toolCalls: [{ name: 'read', input: { path: ref } }] };
      return undefined;
    };
    standin().script({ toolCalls: [{ name: 'fetch' }] }, { text: 'read it back: it ends with BLOB-END' });
    const result = await genBhrain({ atom: 'claude/haiku', toolBoxes: [bulky, genFilesToolBox()], memoryManager: externalizing }).invoke(
      { prompt: 'fetch, then read the blob' },
      contextFor(),
    );
    expect(result.output).toBe('read it back: it ends with BLOB-END');
    expect(result.compactions).toHaveLength(1);
    expect(JSON.stringify(standin().requests[1].body)).not.toContain('BLOB-START');
    expect(result.transcript.filter((message) => message.role === 'tool').at(-1)?.content).toContain('BLOB-END');
  });
});
