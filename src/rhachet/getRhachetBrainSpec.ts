import type { BrainAtomSpec } from '../core/contract/BrainAtom.js';
import { asIsoPrice } from './asRhachetOutput.js';
import type { RhachetBrainSpec } from './RhachetBrain.js';

/** .what = what the price table does not say about a model: speed, latency, knowledge cutoff, domain */
interface BrainModelFacts {
  tokensPerSecond: number;
  latencyMs: number;
  cutoff: string;
  domain: 'ALL' | 'SOFTWARE';
}

// Alibaba publishes no knowledge cutoff, speed or latency for its DashScope models: an early cutoff (before the Qwen2.5
// releases of late 2024), so no caller relies on knowledge the model may lack, and a slow speed and a long latency
const QWEN_UNPUBLISHED = { tokensPerSecond: 30, latencyMs: 3_000, cutoff: '2024-06-01' } as const;

/**
 * .what = per model id, the facts a rhachet BrainSpec needs beyond our price table, each with its source
 * .note = Anthropic publishes only a comparative latency (haiku fastest, sonnet fast, opus moderate) and no figures
 */
const FACTS: Record<string, BrainModelFacts> = {
  // no figures published: Sonnet 4.6's measured ones below, which Haiku (Anthropic: "fastest") beats; cutoff: reliable
  // knowledge cutoff Feb 2025, src: https://platform.claude.com/docs/en/about-claude/models/overview
  'claude-haiku-4-5': { tokensPerSecond: 86, latencyMs: 1_240, cutoff: '2025-02-01', domain: 'ALL' },
  // 86.1 tok/s and 1239 ms time to first token on average, src: https://www.bridgebench.ai/speedbench/claude-sonnet-4-6;
  // cutoff May 2025, src: https://www.anthropic.com/transparency/model-report
  'claude-sonnet-4-6': { tokensPerSecond: 86, latencyMs: 1_240, cutoff: '2025-05-01', domain: 'ALL' },
  // no figures published: below Opus 4.1's measured 45 tok/s and 2.67 s to first token (artificialanalysis.ai);
  // cutoff: reliable knowledge cutoff May 2025, src: https://platform.claude.com/docs/en/about-claude/models/overview
  'claude-opus-4-6': { tokensPerSecond: 40, latencyMs: 2_700, cutoff: '2025-05-01', domain: 'ALL' },
  'qwen3-coder-plus': { ...QWEN_UNPUBLISHED, domain: 'SOFTWARE' },
  'qwen3-coder-flash': { ...QWEN_UNPUBLISHED, domain: 'SOFTWARE' },
  'qwen-plus': { ...QWEN_UNPUBLISHED, domain: 'ALL' },
  'qwen-max': { ...QWEN_UNPUBLISHED, domain: 'ALL' },
  'qwen-turbo': { ...QWEN_UNPUBLISHED, domain: 'ALL' },
};

/** a model outside the table (a newer id, a self-hosted server): the slowest of the assumptions above */
const UNKNOWN_MODEL_FACTS: BrainModelFacts = { ...QWEN_UNPUBLISHED, domain: 'ALL' };

/**
 * .what = an atom's spec in rhachet's BrainSpec shape: cash per token as IsoPrice, time, window, cutoff, domain, skills
 * .why = rhachet compares brains by their spec; the price and window come from our model table, the rest from FACTS
 * .note = a model without a known price is 'USD 0' per token (rhachet's prices cannot be unknown; the atom's description
 *         says so); grades are {} (no benchmark is claimed here); skills name what our atoms do (tool use, no images)
 */
export const getRhachetBrainSpec = (spec: BrainAtomSpec): RhachetBrainSpec => {
  const facts = FACTS[spec.model] ?? UNKNOWN_MODEL_FACTS;
  const perToken = (usdPerMillion: number | undefined) => asIsoPrice((usdPerMillion ?? 0) / 1e6);
  return {
    cost: {
      time: { speed: { tokens: facts.tokensPerSecond, per: { seconds: 1 } }, latency: { milliseconds: facts.latencyMs } },
      cash: {
        per: 'token',
        input: perToken(spec.price?.input),
        output: perToken(spec.price?.output),
        cache: { get: perToken(spec.price?.cacheGet), set: perToken(spec.price?.cacheSet) },
      },
    },
    gain: {
      size: { context: { tokens: spec.contextWindowTokens } },
      grades: {},
      cutoff: facts.cutoff,
      domain: facts.domain,
      skills: { tooluse: true },
    },
  };
};
