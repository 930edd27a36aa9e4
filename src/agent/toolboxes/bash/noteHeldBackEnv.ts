import type { BashRun } from '../../../sandbox/BashRun.js';
import { looksLikeCredential } from '../../../sandbox/commandEnv.js';

/** how much of each end of each stream is searched: a program says why it failed at the start or at the end */
const SEARCHED_CHARS = 4_096;

/** the names listed in a note at most; the rest are counted */
const MAX_NAMES_LISTED = 12;

/**
 * .what = what programs print when a credential is missing or refused: HTTP 401/403 as curl, npm, gh, pip and docker
 *         say it, git's prompt that cannot be answered, the AWS CLI's and SDKs', ssh's, a database's
 * .why = one regex, bounded quantifiers, run only on a failed command's ends: its cost is nothing on the paths that matter
 */
const MISSING_CREDENTIAL_SIGN = new RegExp(
  [
    String.raw`\b(?:HTTP(?:/[\d.]+)?|status(?: code)?|response|returned error|error)\W{0,3}40[13]\b`,
    String.raw`\bE40[13]\b`,
    String.raw`\b40[13] (?:Unauthorized|Forbidden|Client Error)`,
    String.raw`\bunauthori[sz]ed\b`,
    String.raw`\bauthentication (?:is )?(?:required|failed|needed)`,
    String.raw`\bcould not read (?:username|password)`,
    String.raw`\bterminal prompts disabled`,
    String.raw`\bunable to locate credentials`,
    String.raw`\bno (?:valid )?credentials`,
    String.raw`\b(?:not|must be) logged in`,
    String.raw`\blogin required`,
    String.raw`\bENEEDAUTH\b`,
    String.raw`\bbad credentials`,
    String.raw`\binvalid (?:token|credentials|api[ _-]?key|username or password|access key|security token)`,
    String.raw`\b(?:missing|no|expired) (?:auth(?:entication)? )?(?:token|api[ _-]?key)\b`,
    String.raw`\bpermission denied \(publickey`,
    String.raw`\baccess denied for user`,
    String.raw`\b(?:ExpiredToken|InvalidClientTokenId|NoCredentialProviders|NoCredentialsError)\b`,
  ].join('|'),
  'i',
);

/** parts of a name that say what kind of secret it is, not whose: they tell nothing about which program needs it */
const GENERIC_PARTS = new Set(
  'TOKEN KEY KEYS API SECRET SECRETS ACCESS AUTH PASSWORD PASS PWD ID SESSION CREDENTIAL CREDENTIALS PRIVATE REQUEST URL USER CLIENT APP PAT JWT OIDC DEFAULT'.split(
    ' ',
  ),
);

/** .what = the ends of a run's streams, at most SEARCHED_CHARS of each, as one text */
const endsOf = (run: BashRun): string =>
  [run.stdout, run.stderr]
    .flatMap((stream) => {
      const whole = stream.droppedBytes > 0 ? null : stream.head;
      if (whole !== null)
        return whole.length <= 2 * SEARCHED_CHARS ? [whole] : [whole.slice(0, SEARCHED_CHARS), whole.slice(-SEARCHED_CHARS)];
      return [stream.head.slice(0, SEARCHED_CHARS), stream.tail.slice(-SEARCHED_CHARS)];
    })
    .join('\n');

/** .what = the sign that a failed run lacked a credential: a message that says so, or a held-back variable it names */
const findSign = (text: string, heldBack: readonly string[]): string | null => {
  const said = MISSING_CREDENTIAL_SIGN.exec(text)?.[0];
  if (said) return said;
  const held = new Set(heldBack);
  return text.match(/[A-Za-z_][A-Za-z0-9_]{2,}/g)?.find((word) => held.has(word)) ?? null;
};

/** .what = whether a name's own parts (NPM in NPM_TOKEN, AWS in AWS_SECRET_ACCESS_KEY) start a word of the text */
const isNamedIn = (name: string, text: string): boolean =>
  name
    .toUpperCase()
    .split('_')
    .filter((part) => part.length >= 2 && !GENERIC_PARTS.has(part))
    .some((part) => new RegExp(`\\b${part.replace(/[^A-Z0-9]/g, '\\$&')}`, 'i').test(text));

/**
 * .what = the held-back names that plausibly matter: those whose parts the command or its output name (NPM_TOKEN for
 *         `npm publish`), else those that look like credentials, else all of them
 */
const pickPlausible = (heldBack: readonly string[], text: string): string[] => {
  const named = heldBack.filter((name) => isNamedIn(name, text));
  if (named.length) return named;
  const credentials = heldBack.filter((name) => looksLikeCredential(name));
  return credentials.length ? credentials : [...heldBack];
};

/** .what = names as a list, at most MAX_NAMES_LISTED, the rest counted */
const listNames = (names: readonly string[]): string =>
  names.length > MAX_NAMES_LISTED
    ? `${names.slice(0, MAX_NAMES_LISTED).join(', ')} and ${names.length - MAX_NAMES_LISTED} more`
    : names.join(', ');

/** .what = a failed run's credential note: the sign seen, the held-back names that plausibly matter, and the note itself */
export interface HeldBackEnvNote {
  sign: string;
  names: string[];
  note: string;
}

/**
 * .what = when a command failed (a non-zero exit) as one without its credentials does, and variables were held back
 *         from its environment, the note the model reads: what failed that way, the names that plausibly matter, and
 *         that the user can pass one with --pass-env; null otherwise
 * .why = with the environment by allowlist, `npm publish` or `git push` that needed a token now fails with a 401: the
 *        model should ask the user instead of retrying, and the user should learn which name to pass
 */
export const noteHeldBackEnv = (input: { run: BashRun; command: string; heldBack: readonly string[] }): HeldBackEnvNote | null => {
  const { run, heldBack } = input;
  if (!heldBack.length || run.exitCode === null || run.exitCode === 0) return null;
  const ends = endsOf(run);
  const found = findSign(ends, heldBack);
  if (!found) return null;
  // control characters of the output stay out of the note and the user's warning line
  const sign = found.replace(/[\x00-\x1f\x7f]+/g, ' ');
  const names = pickPlausible(heldBack, `${input.command}\n${ends}`);
  return {
    sign,
    names,
    note: `note: the command failed as one without its credentials does ("${sign}"), and bhrain held these variables back from its environment: ${listNames(names)}. Retrying will not bring them: if the task needs one, tell the user, who can pass it through by its name (--pass-env NAME).`,
  };
};
