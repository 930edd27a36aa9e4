import type { BrainAtom, BrainAtomGenerateInput, BrainAtomGeneration, BrainAtomSpec, BrainThinking } from '../core/contract/BrainAtom.js';
import { silentLog, type BrainContext, type BrainCreds } from '../core/contract/BrainContext.js';
import { AuthFailedError, BadRequestError } from '../core/contract/errors.js';
import type { BrainReasoning, BrainToolCall } from '../core/contract/BrainMessage.js';
import type { BrainTokens } from '../core/contract/BrainOutput.js';
import type { SupplierFacts } from '../core/contract/supplierTable.js';
import { askAtom } from './askAtom.js';
import { computeCash } from './computeCash.js';
import { DEFAULT_MAX_OUTPUT_TOKENS, DEFAULT_REQUEST_TIMEOUT_MS, DEFAULT_RETRY_POLICY, DEFAULT_STREAM_IDLE_MS } from './constants.js';
import { mapSupplierError } from './mapSupplierError.js';
import { readToolArguments, readToolValue } from './readToolArguments.js';
import { withRetry } from './withRetry.js';

/** .what = one supplier call's result in vendor-neutral form, before arguments are checked */
export interface AtomRawGeneration {
  text: string;
  /** raw: the JSON text the model streamed; value: arguments already parsed (e.g. recovered from <tool_call> text) */
  toolCalls: Array<{ id: string; name: string; raw: string } | { id: string; name: string; value: unknown }>;
  stopReason: BrainAtomGeneration['stopReason'];
  /** calls the output-token limit cut off: reported with stopReason max_tokens, never run */
  truncatedToolCalls?: BrainAtomGeneration['truncatedToolCalls'];
  /** what the model reasoned this turn (thinking blocks, reasoning_content, <think> text), kept apart from text */
  reasoning?: BrainReasoning;
  tokens: BrainTokens;
}

/** .what = the smallest thinking budget each protocol takes (anthropic refuses budget_tokens below 1024) */
const MIN_THINKING_BUDGET: Record<AtomCredsSpec['supplier'], number> = { anthropic: 1024, qwen: 1, openai: 1 };

/**
 * .what = a thinking option checked: 'off', or a whole budget of tokens at least the supplier's minimum
 * .why = a bad budget fails before any request, naming the flag and what it takes, instead of a supplier 400
 */
export const checkThinking = (input: { thinking: BrainThinking | undefined; supplier: AtomCredsSpec['supplier'] }): void => {
  const { thinking } = input;
  if (thinking === undefined || thinking === 'off') return;
  const min = MIN_THINKING_BUDGET[input.supplier];
  const budget = (thinking as { budgetTokens?: unknown } | null)?.budgetTokens;
  if (typeof budget !== 'number' || !Number.isInteger(budget) || budget < min)
    throw new BadRequestError(
      `--thinking '${String(budget ?? thinking)}' is not a thinking budget: give a whole number of tokens of at least ${min}${
        input.supplier === 'anthropic' ? " (Anthropic's minimum)" : ''
      }, or off (the atom's thinking)`,
    );
};

/**
 * .what = how a call authenticates: an API key or a bearer token (a supplier's tokenEnvVars), passed to the SDK as such
 * .note = @anthropic-ai/sdk 1.12 sends either one as `Authorization: Bearer`; the kind decides precedence and error texts
 */
export interface AtomAuth {
  kind: 'apiKey' | 'bearer';
  value: string;
  /** where it came from, to name in errors: an env var or a context.creds field */
  from: string;
}

/** .what = where an atom reads its credentials and endpoint from: its supplier's row, and what its protocol adds */
export interface AtomCredsSpec extends Pick<SupplierFacts, 'supplier' | 'keyEnvVars' | 'tokenEnvVars' | 'urlEnvVar' | 'defaultUrl'> {
  /** whether a key is required at this url (a self-hosted server may need none) */
  needsKey: (url: string) => boolean;
  /** endpoint suffixes a user may paste that the SDK appends itself; stripped from the base URL (e.g. /v1 for anthropic) */
  urlSuffixes: RegExp;
  /** the path the SDK appends to the base URL for one call, to show the full endpoint in a 404 */
  callPath: string;
  /** what a base URL for this protocol looks like, said when the endpoint answers 404 */
  urlHint: string;
}

/** .what = what one supplier call is given: where and as whom to call, the request, its bounds, and how to send it */
export interface AtomCallInput {
  auth: AtomAuth;
  baseURL: string;
  request: BrainAtomGenerateInput;
  maxOutputTokens: number;
  timeoutMs: number;
  /** the longest silence allowed inside the stream */
  idleMs: number;
  signal?: AbortSignal;
  /** the fetch the SDK sends with (context.fetch); the SDK's own when absent */
  fetch?: typeof globalThis.fetch;
  /**
   * fields the request body carries as they are, beside the ones the provider builds: a model's own switches (qwen's
   * enable_thinking), set by its middleware; the OpenAI-compatible provider sends them
   */
  extraBody?: Record<string, unknown>;
}

/** .what = the vendor-specific part of an atom: one streamed call over its SDK */
export type AtomCall = (input: AtomCallInput) => Promise<AtomRawGeneration>;

/**
 * .what = a base URL checked and put in the form its SDK expects: http(s), no trailing slash, no endpoint suffix
 * .why = anthropic's SDK appends /v1/messages and openai's /chat/completions, so `.../v1` is wrong for one and needed
 *        by the other; a suffix the SDK adds itself is stripped, a URL that is not one fails before any request
 */
const readBaseUrl = (input: { raw: string; from: string; spec: AtomCredsSpec }): string => {
  const raw = input.raw.trim();
  let url: URL | null;
  try {
    url = new URL(raw);
  } catch {
    url = null;
  }
  if (!url || !['http:', 'https:'].includes(url.protocol))
    throw new BadRequestError(
      `${input.from} '${input.raw}' is not an http(s) URL: give the supplier's base URL, e.g. ${input.spec.defaultUrl}`,
    );
  return raw.replace(/\/+$/, '').replace(input.spec.urlSuffixes, '').replace(/\/+$/, '');
};

const resolveCreds = (input: {
  spec: AtomCredsSpec;
  slug: string;
  context: BrainContext;
  /** the atom's own endpoint (genBrainAtom's baseUrl, the CLI's --base-url), already checked */
  baseUrl: string | undefined;
}): { auth: AtomAuth; baseURL: string; warning: string | null } => {
  const { spec, slug, context } = input;
  const env = context.env ?? process.env;
  const creds: BrainCreds = context.creds?.[spec.supplier] ?? {};
  // the atom's own endpoint, then the caller's creds, then the env var, then the supplier's default
  const baseURL =
    input.baseUrl ??
    (creds.url
      ? readBaseUrl({ raw: creds.url, from: `context.creds.${spec.supplier}.url`, spec })
      : env[spec.urlEnvVar]
        ? readBaseUrl({ raw: env[spec.urlEnvVar]!, from: spec.urlEnvVar, spec })
        : spec.defaultUrl);
  // a key passed in code is the caller's explicit choice: the environment is not read for another
  if (creds.apiKey)
    return { auth: { kind: 'apiKey', value: creds.apiKey, from: `context.creds.${spec.supplier}.apiKey` }, baseURL, warning: null };
  const tokenVar = spec.tokenEnvVars.find((name) => !!env[name]);
  const keyVar = spec.keyEnvVars.find((name) => !!env[name]);
  // Claude Code's order: a bearer token (for gateways) before a key; said once, never silent
  const warning =
    tokenVar && keyVar
      ? `${tokenVar} and ${keyVar} are both set: ${slug} authenticates with ${tokenVar} (Authorization: Bearer), as Claude Code does. Unset one of them to silence this warning`
      : null;
  if (tokenVar) return { auth: { kind: 'bearer', value: env[tokenVar]!, from: tokenVar }, baseURL, warning };
  if (keyVar) return { auth: { kind: 'apiKey', value: env[keyVar]!, from: keyVar }, baseURL, warning };
  if (spec.needsKey(baseURL))
    throw new AuthFailedError(
      `no API key for ${slug} at ${baseURL}: set ${spec.keyEnvVars.join(' or ')}${
        spec.tokenEnvVars?.length ? `, or ${spec.tokenEnvVars.join(' or ')} for a gateway's bearer token` : ''
      } (library: pass context.creds.${spec.supplier}.apiKey)`,
    );
  return { auth: { kind: 'apiKey', value: 'none', from: 'none' }, baseURL, warning: null };
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
  /** the supplier endpoint for this atom; beats context.creds.<supplier>.url and the env var */
  baseUrl?: string;
  /** the thinking every generate() uses unless its input gives its own */
  thinking?: BrainThinking;
}): BrainAtom => {
  checkThinking({ thinking: input.thinking, supplier: input.creds.supplier });
  // a bad endpoint fails when the atom is made (before a run starts), naming the flag that set it
  const baseUrl =
    input.baseUrl === undefined
      ? undefined
      : readBaseUrl({ raw: input.baseUrl, from: "--base-url (genBrainAtom's baseUrl)", spec: input.creds });
  let warned = false;
  const generate = async (request: BrainAtomGenerateInput, context: BrainContext = {}): Promise<BrainAtomGeneration> => {
    const { auth, baseURL, warning } = resolveCreds({ spec: input.creds, slug: input.slug, context, baseUrl });
    const log = context.log ?? silentLog;
    if (warning && !warned) {
      warned = true;
      log.warn(warning);
    }
    const started = performance.now();
    const thinking = request.thinking ?? input.thinking;
    checkThinking({ thinking, supplier: input.creds.supplier });
    // a caller's callback that throws is the caller's bug: logged, never retried as a supplier failure (re-billed)
    const guard = (name: 'onTextDelta' | 'onReasoningDelta') => {
      const callback = request[name];
      return callback
        ? (text: string) => {
            try {
              callback(text);
            } catch (error) {
              log.error(`${input.slug}: the ${name} callback threw: ${(error as Error)?.message ?? error}; the answer goes on`);
            }
          }
        : undefined;
    };
    const guarded: BrainAtomGenerateInput = {
      ...request,
      ...(thinking ? { thinking } : {}),
      onTextDelta: guard('onTextDelta'),
      onReasoningDelta: guard('onReasoningDelta'),
    };
    const { value: raw, attempts } = await withRetry({
      supplier: input.slug,
      policy: { ...DEFAULT_RETRY_POLICY, ...context.retry },
      log,
      signal: context.signal,
      // text streamed by a failed attempt is void: the caller is told before the retry streams the answer anew
      onRetry: (retry) => {
        request.onTextReset?.();
        request.onRetry?.(retry);
      },
      mapError: (error) =>
        mapSupplierError({
          error,
          supplier: input.slug,
          model: input.spec.model,
          credential: auth.from,
          keyEnvVars: [...input.creds.tokenEnvVars, ...input.creds.keyEnvVars],
          endpoint: { url: `${baseURL}${input.creds.callPath}`, hint: input.creds.urlHint, urlEnvVar: input.creds.urlEnvVar },
        }),
      run: () =>
        input.call({
          auth,
          baseURL,
          request: guarded,
          maxOutputTokens: Math.min(request.maxOutputTokens ?? DEFAULT_MAX_OUTPUT_TOKENS, input.spec.maxOutputTokens),
          timeoutMs: context.timeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS,
          idleMs: context.timeoutMs ?? DEFAULT_STREAM_IDLE_MS,
          signal: context.signal,
          fetch: context.fetch,
        }),
    });
    // arguments are read here; whether they fit the tool's schema is checked where the session runs the call
    // a name padded with spaces (' read_file ') names the tool: trimmed here, for every protocol, not answered "not found"
    const toolCalls: BrainToolCall[] = raw.toolCalls.map((call) => ({
      id: call.id,
      name: call.name.trim(),
      ...('raw' in call ? readToolArguments({ raw: call.raw, name: call.name }) : readToolValue({ value: call.value, name: call.name })),
    }));
    return {
      message: { role: 'assistant', content: raw.text, toolCalls, ...(raw.reasoning ? { reasoning: raw.reasoning } : {}) },
      stopReason: toolCalls.length ? 'tool_calls' : raw.stopReason === 'tool_calls' ? 'end' : raw.stopReason,
      ...(raw.truncatedToolCalls?.length ? { truncatedToolCalls: raw.truncatedToolCalls } : {}),
      ...(raw.reasoning ? { reasoning: raw.reasoning.text } : {}),
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
