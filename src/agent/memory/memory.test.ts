import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

import { PROTOCOL_SLUGS, useStandin } from '#standin/useStandin.js';
import type { BrainMessage } from '../../core/contract/BrainMessage.js';
import type { BhrainEvent } from '../events.js';
import { genBhrain, invoke } from '../genBhrain.js';
import type { BhrainToolBox } from '../tool/BhrainToolBox.js';
import { genFilesToolBox } from '../toolboxes/files/genFilesToolBox.js';
import type { BhrainMemoryManager } from './BhrainMemoryManager.js';
import { genTruncate } from './genTruncate.js';
import { tempDir } from '#test-helpers/fs.js';

const { standin, contextFor } = useStandin();

/** a toolbox with one tool that returns `size` characters of filler, tagged with the call's n */
const bulky: BhrainToolBox = {
  name: 'bulky',
  definitions: [
    {
      name: 'fetch',
      description: 'returns a big blob',
      inputSchema: { type: 'object', properties: { n: { type: 'integer' }, size: { type: 'integer' } } },
    },
  ],
  execute: async ({ call }) => ({
    callId: call.id,
    success: true,
    output: `blob ${call.input.n}: ${'z'.repeat(Number(call.input.size ?? 100))}`,
  }),
};
const fetchTurns = (count: number, size: number) =>
  Array.from({ length: count }, (_, index) => ({ toolCalls: [{ name: 'fetch', input: { n: index + 1, size } }] }));
const sentText = (index: number) => JSON.stringify(standin().requests[index].body);

describe.each(PROTOCOL_SLUGS)('memory managers on $slug', ({ slug }) => {
  it('a custom manager is consulted after each iteration; its replacement applies before the next generation', async () => {
    const consulted: number[] = [];
    const manager: BhrainMemoryManager = {
      name: 'custom',
      shouldUpdate: ({ messages }) => (consulted.push(messages.length), messages.length === 3),
      getUpdate: ({ messages }) => ({
        shouldUpdate: true,
        newMessages: [{ role: 'user', content: 'REPLACED CONTEXT: the user asked to fetch twice' }, ...messages.slice(1)],
      }),
    };
    standin().script(...fetchTurns(2, 10), { text: 'done' });
    const result = await invoke(
      { config: { atom: slug, toolBoxes: [bulky], memoryManager: manager }, prompt: 'fetch twice' },
      contextFor(),
    );
    expect(consulted).toEqual([3, 5]);
    expect(sentText(1)).toContain('REPLACED CONTEXT');
    expect(sentText(0)).not.toContain('REPLACED CONTEXT');
    expect(result.compactions).toEqual([expect.objectContaining({ strategy: 'custom' })]);
  });

  it('when the manager decides not to update, the context is unchanged', async () => {
    const manager: BhrainMemoryManager = {
      name: 'idle',
      shouldUpdate: () => false,
      getUpdate: () => ({ shouldUpdate: true, newMessages: [] }),
    };
    standin().script(...fetchTurns(1, 10), { text: 'done' });
    const result = await invoke({ config: { atom: slug, toolBoxes: [bulky], memoryManager: manager }, prompt: 'fetch' }, contextFor());
    expect(result.compactions).toEqual([]);
    expect(result.messages).toEqual(result.transcript);
  });

  it('a manager can externalize content to a file and the brain reads it back with a tool', async () => {
    const cwd = tempDir('bhrain-mem-');
    const externalizing: BhrainMemoryManager = {
      name: 'externalize',
      shouldUpdate: ({ messages }) =>
        messages.some((message) => message.role === 'tool' && message.toolName === 'fetch' && message.content.length > 500),
      getUpdate: async ({ messages }) => {
        const newMessages: BrainMessage[] = [];
        const refs: string[] = [];
        for (const message of messages) {
          if (message.role === 'tool' && message.toolName === 'fetch' && message.content.length > 500) {
            const path = join(cwd, `external-${message.toolCallId}.txt`);
            await writeFile(path, message.content);
            refs.push(path);
            newMessages.push({ ...message, content: `[externalized: read ${path}]` });
          } else newMessages.push(message);
        }
        return { shouldUpdate: true, newMessages, externalizedRefs: refs };
      },
    };
    standin().respond = (request) => {
      const body = JSON.stringify(request.body);
      const ref = /\[externalized: read ([^\]]+)\]/.exec(body)?.[1];
      if (ref && !body.includes('blob 1: zzz')) return { toolCalls: [{ name: 'read', input: { path: ref } }] };
      return undefined;
    };
    standin().script(...fetchTurns(1, 2_000), { text: 'I read it back' });
    const result = await invoke(
      { config: { atom: slug, toolBoxes: [bulky, genFilesToolBox()], memoryManager: externalizing }, prompt: 'fetch' },
      contextFor({ cwd }),
    );
    expect(result.output).toBe('I read it back');
    expect(result.transcript.filter((message) => message.role === 'tool').at(-1)?.content).toContain('blob 1: zzz');
  });

  it('a background observer signals an update that is applied between iterations', async () => {
    const manager: BhrainMemoryManager = {
      name: 'background',
      shouldUpdate: () => false,
      getUpdate: () => ({ shouldUpdate: false }),
      observe: ({ messages }, { signalUpdate }) => {
        setTimeout(
          () => signalUpdate({ shouldUpdate: true, newMessages: [{ role: 'user', content: 'OBSERVED SUMMARY' }, ...messages.slice(1)] }),
          5,
        );
      },
    };
    standin().script(...fetchTurns(2, 10), { text: 'done' });
    const slowBulky: BhrainToolBox = {
      ...bulky,
      execute: async (input, context) => (await new Promise((resolve) => setTimeout(resolve, 30)), bulky.execute(input, context)),
    };
    const result = await invoke({ config: { atom: slug, toolBoxes: [slowBulky], memoryManager: manager }, prompt: 'fetch' }, contextFor());
    expect(result.output).toBe('done');
    expect(sentText(2)).toContain('OBSERVED SUMMARY');
  });

  it('summarize-on-limit is the default; near the limit earlier turns are summarized by the llm and tool results condensed', async () => {
    const brain = genBhrain({ atom: slug, toolBoxes: [bulky], limits: { contextTokens: 6_000 } });
    expect(brain.config.memoryManager.name).toBe('summarize-on-limit');
    const events: BhrainEvent[] = [];
    standin().respond = (request) => {
      const system = JSON.stringify(request.body.system ?? request.body.messages[0]);
      return system.includes('You compact the working memory')
        ? { text: 'SUMMARY: the user wants blobs; the secret word is plover' }
        : undefined;
    };
    standin().script(...fetchTurns(6, 5_000), { text: 'the secret word is plover' });
    const result = await brain.invoke(
      { prompt: 'remember the secret word plover, then fetch six blobs' },
      contextFor({ onEvent: (event) => events.push(event) }),
    );
    expect(result.output).toBe('the secret word is plover');
    const compacted = events.filter((event) => event.type === 'Compacted');
    expect(compacted.length).toBeGreaterThan(0);
    for (const event of compacted) if (event.type === 'Compacted') expect(event.tokensAfter).toBeLessThan(event.tokensBefore);
    const summarizerRequests = standin().requests.filter((request) =>
      JSON.stringify(request.body).includes('You compact the working memory'),
    );
    expect(summarizerRequests.length).toBe(compacted.length);
    expect(JSON.stringify(summarizerRequests[0].body)).toMatch(/condensed: \d+ of \d+ characters removed/);
    const last = sentText(standin().requests.length - 1);
    expect(last).toContain('SUMMARY: the user wants blobs');
    expect(last).toContain('remember the secret word plover, then fetch six blobs');
  });

  it('truncate drops the oldest turns with no llm call', async () => {
    standin().script(...fetchTurns(6, 3_000), { text: 'done' });
    const events: BhrainEvent[] = [];
    const result = await invoke(
      {
        config: { atom: slug, toolBoxes: [bulky], memoryManager: genTruncate(), limits: { contextTokens: 5_000 } },
        prompt: 'fetch six blobs',
      },
      contextFor({ onEvent: (event) => events.push(event) }),
    );
    expect(result.output).toBe('done');
    expect(standin().requests).toHaveLength(7);
    expect(events.some((event) => event.type === 'Compacted' && event.strategy === 'truncate')).toBe(true);
    const last = sentText(6);
    expect(last).toContain('fetch six blobs');
    expect(last).toMatch(/context truncated: the \d+ oldest messages/);
    expect(last).not.toContain('blob 1:');
    expect(last).toContain('blob 6:');
  });
});
