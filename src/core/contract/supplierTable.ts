import type { BrainSupplier } from './BrainAtom.js';

/** .what = the facts of one LLM supplier that more than one module needs */
export interface SupplierFacts {
  /** the supplier, after the company: the key of context.creds and of rhachet's creds, the GenAI system name */
  supplier: BrainSupplier;
  /** how users name its atoms (`claude/sonnet`) and the key of settings by supplier (`baseUrls`) */
  slugPrefix: string;
  /** env vars that may hold a bearer token, tried before the keys (Claude Code's order, for gateways) */
  tokenEnvVars: readonly string[];
  /** env vars that may hold its API key, in order of preference */
  keyEnvVars: readonly string[];
  /** the env var its endpoint is read from */
  urlEnvVar: string;
  /** its own endpoint, used when none is given */
  defaultUrl: string;
  /** where its models and their prices are */
  pricesIn: string;
}

/**
 * .what = one row per LLM supplier: its slug prefix, its creds key, its key and base-URL variables, where its prices are
 * .why = these facts were written in five places (the atoms, the settings table, the rhachet creds, the redactor and
 *        prose), and one of them was always the one not updated; the atoms, settings, `bhrain config`, the rhachet creds
 *        and the secret redactor all read this table
 * .note = two words meet here, on purpose: `claude` is how users name Anthropic's atoms (after the model family, as
 *         Claude Code and its users do), so slugs and settings say it; `anthropic` is the supplier (after the company,
 *         as its SDK, its env vars, rhachet's creds and the GenAI conventions say). Code says "supplier" for the second
 *         and "slug prefix" for the first
 */
export const SUPPLIER_TABLE = [
  {
    supplier: 'anthropic',
    slugPrefix: 'claude',
    tokenEnvVars: ['ANTHROPIC_AUTH_TOKEN'],
    keyEnvVars: ['ANTHROPIC_API_KEY'],
    urlEnvVar: 'ANTHROPIC_BASE_URL',
    defaultUrl: 'https://api.anthropic.com',
    pricesIn: 'src/providers/models.ts (CLAUDE_MODELS)',
  },
  {
    supplier: 'qwen',
    slugPrefix: 'qwen',
    tokenEnvVars: [],
    keyEnvVars: ['QWEN_API_KEY', 'DASHSCOPE_API_KEY'],
    urlEnvVar: 'QWEN_BASE_URL',
    // DashScope's OpenAI-compatible endpoint (international)
    defaultUrl: 'https://dashscope-intl.aliyuncs.com/compatible-mode/v1',
    pricesIn: 'src/providers/models.ts (QWEN_MODELS)',
  },
  {
    supplier: 'openai',
    slugPrefix: 'openai',
    tokenEnvVars: [],
    keyEnvVars: ['OPENAI_API_KEY'],
    urlEnvVar: 'OPENAI_BASE_URL',
    defaultUrl: 'https://api.openai.com/v1',
    pricesIn: 'src/providers/models.ts (OPENAI_MODELS)',
  },
] as const satisfies readonly SupplierFacts[];

/** .what = a slug prefix: `claude`, `qwen`, `openai` */
export type SupplierSlugPrefix = (typeof SUPPLIER_TABLE)[number]['slugPrefix'];

/** .what = the search suppliers of the websearch tool, by provider name: what it is called, its key and URL variables, its endpoint */
export const SEARCH_SUPPLIER_TABLE = {
  tavily: { label: 'Tavily', keyEnvVar: 'TAVILY_API_KEY', urlEnvVar: 'TAVILY_BASE_URL', defaultUrl: 'https://api.tavily.com' },
  brave: {
    label: 'Brave Search',
    keyEnvVar: 'BRAVE_API_KEY',
    urlEnvVar: 'BRAVE_BASE_URL',
    defaultUrl: 'https://api.search.brave.com',
  },
} as const;

/** .what = a supplier's row */
export const getSupplierFacts = (supplier: BrainSupplier): SupplierFacts =>
  (SUPPLIER_TABLE as readonly SupplierFacts[]).find((row) => row.supplier === supplier)!;

/** .what = the row of the supplier whose atoms a slug prefix names (`claude` → anthropic), or null */
export const findSupplierBySlugPrefix = (prefix: string): SupplierFacts | null =>
  (SUPPLIER_TABLE as readonly SupplierFacts[]).find((row) => row.slugPrefix === prefix) ?? null;

/** .what = a supplier's credential variables in the order they are read: bearer tokens, then keys */
export const credentialEnvVarsOf = (facts: SupplierFacts): readonly string[] => [...facts.tokenEnvVars, ...facts.keyEnvVars];

/** .what = every env var that holds a key bhrain itself uses (LLM and search suppliers): a shell the model drives never needs one */
export const SUPPLIER_KEY_ENV_VARS: readonly string[] = [
  ...SUPPLIER_TABLE.flatMap(credentialEnvVarsOf),
  ...Object.values(SEARCH_SUPPLIER_TABLE).map((row) => row.keyEnvVar),
];

/** .what = "ANTHROPIC_BASE_URL / QWEN_BASE_URL / OPENAI_BASE_URL": the endpoint variables, as help and errors name them */
export const SUPPLIER_URL_ENV_VARS_TEXT = SUPPLIER_TABLE.map((row) => row.urlEnvVar).join(' / ');
