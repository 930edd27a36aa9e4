/** names of env vars whose values are secrets */
const SECRET_NAME = /(API_?KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|PRIVATE_KEY|AUTH)/i;
/** shorter values are too likely to occur by chance to be worth replacing */
const MIN_SECRET_CHARS = 8;

/** .what = the supplier keys bhrain itself uses: a shell the model drives never needs them */
export const BHRAIN_SUPPLIER_KEY_VARS: readonly string[] = [
  'ANTHROPIC_API_KEY',
  'ANTHROPIC_AUTH_TOKEN',
  'QWEN_API_KEY',
  'DASHSCOPE_API_KEY',
  'OPENAI_API_KEY',
  'TAVILY_API_KEY',
  'BRAVE_API_KEY',
];

/** .what = an environment without bhrain's supplier keys, for the shells the model runs */
export const withoutSupplierKeys = (env: Record<string, string | undefined>): Record<string, string | undefined> =>
  Object.fromEntries(Object.entries(env).filter(([name]) => !BHRAIN_SUPPLIER_KEY_VARS.includes(name)));

/**
 * .what = replaces the values of secret-looking env vars (…_API_KEY, …TOKEN, …SECRET, …PASSWORD) with `[redacted:NAME]`
 * .why = a secret that reaches a tool's output would travel to the LLM supplier, the logs, the run records and the
 *        refs store; redacting where text enters the conversation and where it is written keeps it out of all of them
 */
export const genSecretRedactor = (env: Record<string, string | undefined>): ((text: string) => string) => {
  const secrets = Object.entries(env)
    .filter((entry): entry is [string, string] => SECRET_NAME.test(entry[0]) && typeof entry[1] === 'string' && entry[1].length >= MIN_SECRET_CHARS)
    // longest first, so a secret that contains another is replaced whole
    .sort((a, b) => b[1].length - a[1].length);
  if (!secrets.length) return (text) => text;
  return (text) => secrets.reduce((redacted, [name, value]) => (redacted.includes(value) ? redacted.split(value).join(`[redacted:${name}]`) : redacted), text);
};
