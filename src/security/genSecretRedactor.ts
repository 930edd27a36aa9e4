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

/** .what = the env's secret values with their names, longest first, so a secret that contains another is replaced whole */
const secretsOf = (env: Record<string, string | undefined>): Array<[string, string]> =>
  Object.entries(env)
    .filter((entry): entry is [string, string] => SECRET_NAME.test(entry[0]) && typeof entry[1] === 'string' && entry[1].length >= MIN_SECRET_CHARS)
    .sort((a, b) => b[1].length - a[1].length);

/** a piece of a secret at least this long, left at a cut, is redacted; a shorter one tells nothing */
const MIN_SECRET_PIECE_CHARS = 4;

/**
 * .what = redacts the piece of a secret left at a cut: a head that ends with a secret's start, a tail that begins with its end
 * .why = a capture that drops the middle of a stream (bash keeps head and tail) can cut a secret in two, and neither
 *        half matches the whole value the redactor looks for
 */
export const genCutSecretRedactor = (env: Record<string, string | undefined>) => {
  const secrets = secretsOf(env);
  return {
    head: (text: string): string => {
      for (const [name, value] of secrets)
        for (let length = Math.min(value.length - 1, text.length); length >= MIN_SECRET_PIECE_CHARS; length--)
          if (text.endsWith(value.slice(0, length))) return `${text.slice(0, text.length - length)}[redacted:${name}]`;
      return text;
    },
    tail: (text: string): string => {
      for (const [name, value] of secrets)
        for (let length = Math.min(value.length - 1, text.length); length >= MIN_SECRET_PIECE_CHARS; length--)
          if (text.startsWith(value.slice(value.length - length))) return `[redacted:${name}]${text.slice(length)}`;
      return text;
    },
  };
};

/**
 * .what = replaces the values of secret-looking env vars (…_API_KEY, …TOKEN, …SECRET, …PASSWORD) with `[redacted:NAME]`
 * .why = a secret that reaches a tool's output would travel to the LLM supplier, the logs, the run records and the
 *        refs store; redacting where text enters the conversation and where it is written keeps it out of all of them
 */
export const genSecretRedactor = (env: Record<string, string | undefined>): ((text: string) => string) => {
  const secrets = secretsOf(env);
  if (!secrets.length) return (text) => text;
  return (text) => secrets.reduce((redacted, [name, value]) => (redacted.includes(value) ? redacted.split(value).join(`[redacted:${name}]`) : redacted), text);
};
