import { describe, expect, it } from 'vitest';

import { anthropicMessageEvents, anthropicSse } from '#standin/rawReplay.js';
import { useRawReplay } from '#standin/useRawReplay.js';
import { genBhrain } from '../genBhrain.js';
import type { BhrainMemoryManager } from '../memory/BhrainMemoryManager.js';

const { replayer, contextFor } = useRawReplay();

/** an anthropic answer of one text block (none when empty), stopped for the given reason */
const claudeText = (text: string, stopReason: string) =>
  anthropicSse(
    anthropicMessageEvents({
      content: [
        { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
        ...(text ? [{ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text } }] : []),
        { type: 'content_block_stop', index: 0 },
      ],
      stopReason,
    }),
  );

/** an anthropic answer whose only tool call the output-token limit cut mid-arguments */
const claudeCutCall = anthropicSse(
  anthropicMessageEvents({
    content: [
      { type: 'content_block_start', index: 0, content_block: { type: 'tool_use', id: 'toolu_cut', name: 'write', input: {} } },
      {
        type: 'content_block_delta',
        index: 0,
        delta: { type: 'input_json_delta', partial_json: '{"path": "big.txt", "content": "part on' },
      },
      { type: 'content_block_stop', index: 0 },
    ],
    stopReason: 'max_tokens',
  }),
);

describe('the memory manager is consulted after every iteration', () => {
  // docs/design/loop.md#memory
  it('after a paused turn, after calls cut off by the output limit, and after an empty answer too, before the next request (and not after the final answer)', async () => {
    const consulted: string[] = [];
    const watching: BhrainMemoryManager = {
      name: 'watching',
      shouldUpdate: ({ messages }) => {
        const last = messages.at(-1)!;
        consulted.push(`${last.role}: ${last.content}`);
        return false;
      },
      getUpdate: () => ({ shouldUpdate: false }),
    };
    replayer().replay(
      claudeText('Still searching. ', 'pause_turn'),
      claudeCutCall,
      claudeText('', 'end_turn'),
      claudeText('Found it: 42.', 'end_turn'),
    );
    const result = await genBhrain({ atom: 'claude/haiku', toolBoxes: [], memoryManager: watching }).invoke(
      { prompt: 'find the answer' },
      contextFor(),
    );

    expect(result.output).toBe('Found it: 42.');
    expect(result.iterations).toBe(4);
    expect(consulted).toEqual([
      'assistant: Still searching. ',
      expect.stringMatching(/^user: \[bhrain: your last tool call \(write, 39 characters of arguments received\) was cut off/),
      expect.stringMatching(/^user: \[bhrain: your last reply was empty/),
    ]);
    expect(replayer().requests).toHaveLength(4);
  });
});
