import { createHash } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

import { estimateTokens } from '../../core/contract/tokens.js';
import type { BhrainMemoryContext } from './BhrainMemoryManager.js';

/**
 * .what = content kept outside the context (BhrainMemoryExternalRef, docs/design/loop.md#memory): where it is, how big it is, and the line
 *         that stands for it in the context
 */
export interface BhrainMemoryExternalRef {
  /** the file that holds the content: the model reads it back with the read tool (also what externalizedRefs lists) */
  ref: string;
  chars: number;
  tokens: number;
  /** what replaces the content in the context: its size, where it is, and how to read it */
  placeholder: string;
}

/**
 * .what = stores content outside the context (BhrainMemory.externalize, docs/design/loop.md#memory), as a file in the session's spill dir,
 *         named by its content's hash (storing the same content twice keeps one file)
 * .why = the spill dir is where truncated tool outputs already go: the files tools read it even inside a hidden path, so
 *        the model can read the content back (docs/design/loop.md#memory: the model reads externalized content back with read)
 */
export const externalizeContent = async (
  input: { content: string },
  context: Pick<BhrainMemoryContext, 'spillDir'>,
): Promise<BhrainMemoryExternalRef> => {
  const name = `external-${createHash('sha256').update(input.content).digest('hex').slice(0, 16)}.txt`;
  const ref = join(context.spillDir, name);
  await mkdir(context.spillDir, { recursive: true });
  await writeFile(ref, input.content);
  const chars = input.content.length;
  const tokens = estimateTokens(input.content);
  return {
    ref,
    chars,
    tokens,
    placeholder: `[externalized: ${chars} characters (~${tokens} tokens) were moved out of the context to ${ref}; read that file with the read tool when you need them]`,
  };
};
