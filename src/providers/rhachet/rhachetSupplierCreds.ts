import { getSupplierFacts } from '../../core/contract/supplierTable.js';

/**
 * .what = per rhachet supplier repo, the env vars bhrain reads its key from, and the context key its atoms read them at
 * .why = rhachet binds a supplier's creds as context['brain.supplier.<name>'] = { creds: async getter of keys }, with no
 *        env fallback (rhachet's getSdkCredsFromBrainSupplies); the CLI has only the environment, so it binds a getter
 *        of these variables. Read from ehmpathy's packages; docs/contracts.md#credentials lists what is not known
 */
export const RHACHET_SUPPLIER_CREDS: Readonly<Record<string, { suppliesKeys: readonly string[]; keyEnvVars: readonly string[] }>> = {
  // rhachet-brains-anthropic 0.4.1 reads the key variable from the environment itself (its SDK the URL one), not context
  anthropic: { suppliesKeys: ['brain.supplier.anthropic'], keyEnvVars: getSupplierFacts('anthropic').keyEnvVars },
  openai: { suppliesKeys: ['brain.supplier.openai'], keyEnvVars: getSupplierFacts('openai').keyEnvVars },
  xai: { suppliesKeys: ['brain.supplier.xai'], keyEnvVars: ['XAI_API_KEY'] },
  openrouter: { suppliesKeys: ['brain.supplier.openrouter'], keyEnvVars: ['OPENROUTER_API_KEY'] },
  // rhachet-brains-fireworksai reads context['brain.supplier.fireworks']
  fireworks: { suppliesKeys: ['brain.supplier.fireworks'], keyEnvVars: ['FIREWORKS_API_KEY'] },
  fireworksai: { suppliesKeys: ['brain.supplier.fireworksai', 'brain.supplier.fireworks'], keyEnvVars: ['FIREWORKS_API_KEY'] },
  togetherai: { suppliesKeys: ['brain.supplier.togetherai'], keyEnvVars: ['TOGETHER_API_KEY'] },
  chutes: { suppliesKeys: ['brain.supplier.chutes'], keyEnvVars: ['CHUTES_API_KEY'] },
};

/** .what = a supplier's row; one bhrain does not know gets rhachet's key rule and the common `<REPO>_API_KEY` guess */
export const getRhachetSupplierCreds = (
  repo: string,
): { suppliesKeys: readonly string[]; keyEnvVars: readonly string[]; known: boolean } => {
  const row = Object.hasOwn(RHACHET_SUPPLIER_CREDS, repo) ? RHACHET_SUPPLIER_CREDS[repo] : null;
  if (row) return { ...row, known: true };
  return {
    suppliesKeys: [`brain.supplier.${repo}`],
    keyEnvVars: [`${repo.toUpperCase().replace(/[^A-Z0-9]/g, '_')}_API_KEY`],
    known: false,
  };
};

/**
 * .what = the context a rhachet atom of this repo is called with: for each of its supplies keys, { creds } as a getter of
 *         its key variables that are set; {} when none is set (the supplier then says what it lacks)
 */
export const genRhachetSuppliesContext = (repo: string, env: Record<string, string | undefined>): Record<string, unknown> => {
  const { suppliesKeys, keyEnvVars } = getRhachetSupplierCreds(repo);
  const keys = Object.fromEntries(keyEnvVars.filter((name) => !!env[name]).map((name) => [name, env[name]!]));
  if (!Object.keys(keys).length) return {};
  return Object.fromEntries(suppliesKeys.map((key) => [key, { creds: async () => ({ ...keys }) }]));
};
