import { describe, expect, it } from 'vitest';
import { z } from 'zod';

import { genBrainAtom } from '../../src/providers/genBrainAtom.js';

// live tests talk to the real suppliers; they run only when a key is set, and say so when skipped
const live = [
  { slug: 'claude/haiku', key: 'ANTHROPIC_API_KEY' },
  { slug: 'qwen/qwen-turbo', key: process.env.QWEN_API_KEY ? 'QWEN_API_KEY' : 'DASHSCOPE_API_KEY' },
];

for (const { slug, key } of live) {
  const enabled = !!process.env[key];
  describe.skipIf(!enabled)(`live ${slug} (${enabled ? 'runs' : `skipped: set ${key} to run`})`, () => {
    it('answers a question and returns structured output', async () => {
      const atom = genBrainAtom({ slug });
      const plain = await atom.ask({ say: 'Reply with the single word: pong' });
      expect(plain.output.toLowerCase()).toContain('pong');
      const typed = await atom.ask({ say: 'What is 2 + 3?', schema: { output: z.object({ sum: z.number() }) } });
      expect(typed.output.sum).toBe(5);
    });
  });
}
