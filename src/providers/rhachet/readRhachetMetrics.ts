import type { BrainModelPrice } from '../../core/contract/BrainAtom.js';
import type { BrainCash, BrainTokens } from '../../core/contract/BrainOutput.js';
import type { RhachetSupplierAtom, RhachetSupplierOutput } from '../../rhachet/contract/RhachetSupplierAtom.js';

/**
 * .what = an IsoPrice in US dollars as a number: 'USD 0.000003', '$0.000003', '$0.000_003' (iso-price's separators);
 *         null for anything else (another currency, no price, a shape not known)
 * .why = rhachet's prices are strings; a cost that cannot be read is unknown (null), never a guessed 0
 */
export const readIsoPriceUsd = (price: unknown): number | null => {
  if (typeof price !== 'string') return null;
  const match = /^\s*(?:USD\s*|\$)\s*(-?[0-9][0-9_,]*(?:\.[0-9_]*)?(?:e[-+]?[0-9]+)?)\s*$/i.exec(price);
  if (!match) return null;
  const usd = Number(match[1].replace(/[_,]/g, ''));
  return Number.isFinite(usd) ? usd : null;
};

const round = (usd: number): number => Math.round(usd * 1e9) / 1e9;

/** .what = a call's tokens from rhachet's metrics.size.tokens; a part the supplier left out counts 0 */
export const readRhachetTokens = (metrics: RhachetSupplierOutput['metrics']): BrainTokens => {
  const tokens = metrics?.size?.tokens;
  const count = (value: unknown) => (typeof value === 'number' && Number.isFinite(value) && value > 0 ? value : 0);
  return {
    input: count(tokens?.input),
    output: count(tokens?.output),
    cache: { get: count(tokens?.cache?.get), set: count(tokens?.cache?.set) },
  };
};

/** .what = a call's cost from rhachet's metrics.cost.cash (IsoPrice strings); null when its total is not a USD price */
export const readRhachetCash = (metrics: RhachetSupplierOutput['metrics']): BrainCash | null => {
  const cash = metrics?.cost?.cash;
  const total = readIsoPriceUsd(cash?.total);
  if (total === null) return null;
  const part = (value: unknown) => round(readIsoPriceUsd(value) ?? 0);
  return {
    currency: 'USD',
    total: round(total),
    deets: {
      input: part(cash?.deets?.input),
      output: part(cash?.deets?.output),
      cache: { get: part(cash?.deets?.cache?.get), set: part(cash?.deets?.cache?.set) },
    },
  };
};

/**
 * .what = a rhachet atom's spec.cost.cash (IsoPrice per token) as our price (USD per million tokens); null unless the
 *         input and output prices both read as USD (a missing cache price counts as the input's)
 * .why = a budget in USD is enforced only over an atom whose price is known (configureBhrain refuses it otherwise)
 */
export const readRhachetPrice = (spec: RhachetSupplierAtom['spec']): BrainModelPrice | null => {
  const cash = spec?.cost?.cash;
  const perMillion = (value: unknown) => {
    const usd = readIsoPriceUsd(value);
    return usd === null ? null : round(usd * 1e6);
  };
  const input = perMillion(cash?.input);
  const output = perMillion(cash?.output);
  if (input === null || output === null) return null;
  return { input, output, cacheGet: perMillion(cash?.cache?.get) ?? input, cacheSet: perMillion(cash?.cache?.set) ?? input };
};
