import type { AtomCall, AtomCallInput, AtomRawGeneration } from '../genAtom.js';

/**
 * .what = one model quirk as a layer around a provider's call: it may change the call's input on its way in
 *         (transformInput), and wrap the call itself (wrapCall: its streamed callbacks, its result)
 * .why = after vercel/ai's language-model middleware: a provider speaks its wire protocol and nothing else, and what one
 *        family of models does its own way (thinking in <think> tags, tool calls written as text, request switches of its
 *        own) is middleware that its model entry applies, so the provider stays generic
 */
export interface AtomMiddleware {
  /** what the middleware handles, for a reader of the model entry */
  name: string;
  transformInput?: (input: AtomCallInput) => AtomCallInput;
  wrapCall?: (input: { input: AtomCallInput; doCall: AtomCall }) => Promise<AtomRawGeneration>;
}

/**
 * .what = a provider's call with middleware around it: the first middleware sees the input first and the result last;
 *         the last sits directly around the call
 * .why = one order for every model entry, the same as vercel/ai's wrapLanguageModel
 */
export const wrapAtomCall = (input: { call: AtomCall; middleware: readonly AtomMiddleware[] }): AtomCall =>
  input.middleware.reduceRight<AtomCall>(
    (doCall, middleware) => (callInput) => {
      const transformed = middleware.transformInput ? middleware.transformInput(callInput) : callInput;
      return middleware.wrapCall ? middleware.wrapCall({ input: transformed, doCall }) : doCall(transformed);
    },
    input.call,
  );
