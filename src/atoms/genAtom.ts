import type {
  BrainAtom,
  BrainAtomGenerateInput,
  BrainAtomGeneration,
  BrainAtomSpec,
} from '../contract/BrainAtom.js';
import { silentLog, type BrainContext, type BrainCreds } from '../contract/BrainContext.js';
import { AuthFailedError } from '../contract/errors.js';
import type { BrainToolCall } from '../contract/BrainMessage.js';
import type { BrainTokens } from '../contract/BrainOutput.js';
import { askAtom } from './askAtom.js';
import { computeCash } from './computeCash.js';
import { DEFAULT_MAX_OUTPUT_TOKENS, DEFAULT_REQUEST_TIMEOUT_MS, DEFAULT_RETRY_POLICY, DEFAULT_STREAM_IDLE_MS } from './constants.js';
import { mapSupplierError } from './mapSupplierError.js';
import { checkToolInput, readToolArguments } from './readToolArguments.js';
import { withRetry } from './withRetry.js';

/** .what = one supplier call's result in vendor-neutral form, before arguments are checked */
export interface AtomRawGeneration {
  text: string;
  /** raw: the JSON text the model streamed; value: arguments already parsed (e.g. recovered from <tool_call> text) */
  toolCalls: Array<{ id: string; name: string; raw: string } | { id: string; name: string; value: unknown }>;
  stopReason: 'end' | 'tool_calls' | 'max_tokens';
  tokens: BrainTokens;
}

/** .what = where an atom reads its credentials and endpoint from */
export interface AtomCredsSpec {
  /** key in context.creds */
  supplier: 'anthropic' | 'qwen';
  /** env vars that may hold the key, in order of preference */
  keyEnvVars: readonly string[];
  urlEnvVar: string;
  defaultUrl: string;
  /** whether a key is required at this url (a self-hosted server may need none) */
  needsKey: (url: string) => boolean;
}

/** .what = the vendor-specific part of an atom: one streamed call over its SDK */
export type AtomCall = (input: {
  apiKey: string;
  baseURL: string;
  request: BrainAtomGenerateInput;
  maxOutputTokens: number;
  timeoutMs: number;
  /** the longest silence allowed inside the stream */
  idleMs: number;
  signal?: AbortSignal;
}) => Promise<AtomRawGeneration>;

const resolveCreds = (spec: AtomCredsSpec, slug: string, context: BrainContext): { apiKey: string; baseURL: string } => {
  const env = context.env ?? process.env;
  const creds: BrainCreds = context.creds?.[spec.supplier] ?? {};
  const baseURL = creds.url ?? env[spec.urlEnvVar] ?? spec.defaultUrl;
  const apiKey = creds.apiKey ?? spec.keyEnvVars.map((name) => env[name]).find((value) => !!value);
  if (apiKey) return { apiKey, baseURL };
  if (spec.needsKey(baseURL))
    throw new AuthFailedError(
      `no API key for ${slug}: set ${spec.keyEnvVars.join(' or ')} (or pass context.creds.${spec.supplier}.apiKey)`,
    );
  return { apiKey: 'none', baseURL };
};

/**
 * .what = assembles a BrainAtom from its spec and its vendor call
 * .why = creds, bounded retries, argument checks, cost and ask() are the same for every supplier; only the wire differs
 */
export const genAtom = (input: {
  slug: string;
  description: string;
  spec: BrainAtomSpec;
  creds: AtomCredsSpec;
  call: AtomCall;
}): BrainAtom => {
  const generate = async (request: BrainAtomGenerateInput, context: BrainContext = {}): Promise<BrainAtomGeneration> => {
    const { apiKey, baseURL } = resolveCreds(input.creds, input.slug, context);
    const log = context.log ?? silentLog;
    const started = performance.now();
    // a caller's text callback that throws is the caller's bug: logged, never retried as a supplier failure (re-billed)
    const onTextDelta = request.onTextDelta;
    const guarded: BrainAtomGenerateInput = onTextDelta
      ? {
          ...request,
          onTextDelta: (text) => {
            try {
              onTextDelta(text);
            } catch (error) {
              log.error(`${input.slug}: the onTextDelta callback threw: ${(error as Error)?.message ?? error}; the answer goes on`);
            }
          },
        }
      : request;
    const { value: raw, attempts } = await withRetry({
      supplier: input.slug,
      policy: { ...DEFAULT_RETRY_POLICY, ...context.retry },
      log,
      signal: context.signal,
      // text streamed by a failed attempt is void: the caller is told before the retry streams the answer anew
      onRetry: () => request.onTextReset?.(),
      mapError: (error) => mapSupplierError({ error, supplier: input.slug, keyEnvVars: input.creds.keyEnvVars }),
      run: () =>
        input.call({
          apiKey,
          baseURL,
          request: guarded,
          maxOutputTokens: Math.min(request.maxOutputTokens ?? DEFAULT_MAX_OUTPUT_TOKENS, input.spec.maxOutputTokens),
          timeoutMs: context.timeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS,
          idleMs: context.timeoutMs ?? DEFAULT_STREAM_IDLE_MS,
          signal: context.signal,
        }),
    });
    const tools = request.tools ?? [];
    const toolCalls: BrainToolCall[] = raw.toolCalls.map((call) => ({
      id: call.id,
      name: call.name,
      ...('raw' in call
        ? readToolArguments({ raw: call.raw, name: call.name, tools })
        : checkToolInput({ value: call.value, name: call.name, tools })),
    }));
    return {
      message: { role: 'assistant', content: raw.text, toolCalls },
      stopReason: toolCalls.length ? 'tool_calls' : raw.stopReason === 'tool_calls' ? 'end' : raw.stopReason,
      tokens: raw.tokens,
      cash: computeCash(raw.tokens, input.spec.price),
      elapsedMs: performance.now() - started,
      attempts,
    };
  };
  const atom: BrainAtom = {
    repo: 'bhrain',
    slug: input.slug,
    description: input.description,
    spec: input.spec,
    generate,
    ask: (askInput, context) => askAtom({ atom, ...askInput }, context),
  };
  return atom;
};
