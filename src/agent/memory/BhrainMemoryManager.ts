import type { BrainAtom, BrainAtomGenerateInput, BrainAtomGeneration } from '../../core/contract/BrainAtom.js';
import type { BrainLog } from '../../core/contract/BrainContext.js';
import type { BrainMessage } from '../../core/contract/BrainMessage.js';

/** .what = a memory manager's decision: whether to replace the context, and with what */
export interface BhrainCompactionResult {
  shouldUpdate: boolean;
  newMessages?: BrainMessage[];
  /** references to content the manager stored outside the context (e.g. files the model can read back) */
  externalizedRefs?: string[];
}

/** .what = what a memory manager may use: the atom (to summarize), the context size and its limit, the spill dir */
export interface BhrainMemoryContext {
  atom: BrainAtom;
  /** the atom's generate, bound to the session's context (creds, retries, log): use this to summarize */
  generate: (input: BrainAtomGenerateInput) => Promise<BrainAtomGeneration>;
  /** estimated tokens of the current context (system, tools and messages) */
  contextTokens: number;
  /** the context window the loop works within */
  limitTokens: number;
  /** tokens of what never changes and is not in messages: system prompt and tool definitions */
  fixedTokens: number;
  /** the session's spill dir: where BhrainMemory.externalize keeps content the model can read back with the read tool */
  spillDir: string;
  log: BrainLog;
}

/**
 * .what = the plugin that controls the context window, consulted after every iteration
 * .why = memory policy (summarize, truncate, externalize, page) is fully delegated; the core only applies replacements
 */
export interface BhrainMemoryManager {
  name: string;
  shouldUpdate: (input: { messages: readonly BrainMessage[] }, context: BhrainMemoryContext) => boolean | Promise<boolean>;
  getUpdate: (
    input: { messages: readonly BrainMessage[] },
    context: BhrainMemoryContext,
  ) => BhrainCompactionResult | Promise<BhrainCompactionResult>;
  /**
   * optional background observation: called after every iteration without being awaited;
   * a replacement signalled through signalUpdate is applied between iterations
   */
  observe?: (
    input: { messages: readonly BrainMessage[] },
    context: BhrainMemoryContext & { signalUpdate: (result: BhrainCompactionResult) => void },
  ) => void;
}
