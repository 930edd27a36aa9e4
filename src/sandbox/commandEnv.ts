/**
 * .what = a group of variables in the command environment's table: exact names and prefixes (written `LC_*`), and why
 * .why = docs/sandbox-and-permissions.md shows the table as it is here, row by row, so the reason goes with the names
 */
export interface CommandEnvRow {
  names: readonly string[];
  why: string;
}

/**
 * .what = what the commands the model runs get from bhrain's environment by default: the variables builds and tools
 *         need, the locations of toolchains, and the CI context; each still held back when it looks like a credential
 *         (COMMAND_ENV_HELD_BACK). Anything not named here is held back too, unless passed by its exact name
 * .why = an environment by allowlist: a CI job's secrets (`AWS_SECRET_ACCESS_KEY`, `NPM_TOKEN`, a `DATABASE_PASSWORD`)
 *        come under names no denylist has, and one `env > env.txt` would put them all in the workspace
 */
export const COMMAND_ENV_PASSED: readonly CommandEnvRow[] = [
  { names: ['PATH'], why: 'where programs are found' },
  {
    names: ['HOME', 'USER', 'LOGNAME', 'SHELL'],
    why: 'who the user is and where their files are: tools find their config and caches under `HOME` (the credential stores in it stay hidden)',
  },
  { names: ['LANG', 'LANGUAGE', 'LC_*', 'TZ'], why: 'the locale and time zone: how programs decode, sort and print text and times' },
  {
    names: ['TERM', 'COLORTERM', 'NO_COLOR', 'FORCE_COLOR', 'CLICOLOR', 'CLICOLOR_FORCE'],
    why: 'how programs format their output',
  },
  { names: ['TMPDIR'], why: 'where programs put temporary files' },
  { names: ['CI'], why: 'tells tools they run unattended: no prompts, no progress bars' },
  {
    names: ['XDG_CONFIG_HOME', 'XDG_CACHE_HOME', 'XDG_DATA_HOME', 'XDG_STATE_HOME', 'XDG_CONFIG_DIRS', 'XDG_DATA_DIRS'],
    why: 'where tools keep their config, caches and data',
  },
  {
    names: [
      'JAVA_HOME',
      'GRADLE_USER_HOME',
      'MAVEN_HOME',
      'M2_HOME',
      'ANDROID_HOME',
      'ANDROID_SDK_ROOT',
      'GOPATH',
      'GOROOT',
      'GOBIN',
      'GOCACHE',
      'GOMODCACHE',
      'CARGO_HOME',
      'RUSTUP_HOME',
      'RUSTUP_TOOLCHAIN',
      'VIRTUAL_ENV',
      'CONDA_PREFIX',
      'PYENV_ROOT',
      'NVM_DIR',
      'NVM_BIN',
      'VOLTA_HOME',
      'PNPM_HOME',
      'BUN_INSTALL',
      'DENO_DIR',
      'DOTNET_ROOT',
      'GEM_HOME',
      'GEM_PATH',
      'RBENV_ROOT',
      'SDKMAN_DIR',
      'ASDF_DIR',
      'ASDF_DATA_DIR',
    ],
    why: 'where toolchains are installed: a build finds its compiler, its packages and its caches',
  },
  {
    names: ['npm_config_*', 'NPM_CONFIG_*'],
    why: "npm's own settings (registry, cache, ignore-scripts); its credentials (`_auth`, `_authToken`, `_password`) look like credentials and stay out",
  },
  {
    names: ['HTTP_PROXY', 'HTTPS_PROXY', 'ALL_PROXY', 'NO_PROXY', 'http_proxy', 'https_proxy', 'all_proxy', 'no_proxy'],
    why: "the user's proxy, for `--allow-network` and `--sandbox off`; with the network by domain, bhrain's own replace them",
  },
  {
    names: ['SSL_CERT_FILE', 'SSL_CERT_DIR', 'NODE_EXTRA_CA_CERTS', 'REQUESTS_CA_BUNDLE', 'CURL_CA_BUNDLE', 'GIT_SSL_CAINFO'],
    why: 'the certificate authorities TLS trusts (a company CA): public certificates, no secret',
  },
  {
    names: ['GITHUB_*', 'RUNNER_*'],
    why: "GitHub Actions' context: the repository, ref, sha, run, the runner's OS and temp dir; its tokens and the workflow's command files stay out",
  },
  {
    names: ['GITLAB_CI', 'GITLAB_*', 'CI_*'],
    why: "GitLab's (and Woodpecker's) context; `CI_JOB_TOKEN`, `CI_JOB_JWT` and the like stay out",
  },
  {
    names: [
      'BUILDKITE',
      'BUILDKITE_*',
      'CIRCLECI',
      'CIRCLE_*',
      'TRAVIS',
      'TRAVIS_*',
      'TF_BUILD',
      'BUILD_*',
      'AGENT_*',
      'SYSTEM_*',
      'JENKINS_URL',
      'JOB_NAME',
      'JOB_URL',
      'EXECUTOR_NUMBER',
      'BITBUCKET_*',
      'DRONE',
      'DRONE_*',
      'TEAMCITY_VERSION',
      'APPVEYOR',
      'APPVEYOR_*',
      'CODEBUILD_*',
    ],
    why: 'the context of Buildkite, CircleCI, Travis, Azure Pipelines, Jenkins, Bitbucket, Drone, TeamCity, AppVeyor and CodeBuild; their tokens stay out',
  },
];

/**
 * .what = a rule of what stays out of the commands' environment whatever the allowlist says: unless `--pass-env` (or
 *         sandbox.env.pass) names it exactly, a variable the rule matches is held back
 * .why = an allowed prefix (`GITHUB_*`, `CI_*`) also covers `GITHUB_TOKEN` and `CI_JOB_TOKEN`; a list of names is always
 *        one name short, so credentials are recognised by kind: a word in the name, a prefix, or a password in a URL
 */
export interface CommandEnvHeldBackRule {
  /** what it matches, as the docs show it */
  shown: string;
  why: string;
  test: (name: string, value: string) => boolean;
}

/** words that make a name a credential's wherever they stand, in any case (`GH_TOKEN`, `npm_config__authToken`) */
const CREDENTIAL_WORDS = [
  'KEY',
  'SECRET',
  'TOKEN',
  'PASSWORD',
  'PASSWD',
  'PASSPHRASE',
  'CREDENTIAL',
  'AUTH',
  'SESSION',
  'COOKIE',
  'PRIVATE',
  'JWT',
  'OIDC',
  'WEBHOOK',
] as const;

/** short words that make a name a credential's only as a whole part, between underscores or at an end, digits after it
 *  or not (`DB_PASS`, `DB_PASS2`, not `BYPASS`) */
const CREDENTIAL_PARTS = ['PASS', 'PWD', 'PAT', 'CRED', 'CREDS', 'SAS', 'DSN'] as const;

/** prefixes whose every variable is a credential or mints one */
const CREDENTIAL_PREFIXES = ['AWS_', 'ACTIONS_ID_TOKEN_', 'ACTIONS_RUNTIME_'] as const;

/** the variables that lead to something acting as the user: a socket, an agent, a display, a cluster's config */
const ACCESS_VARIABLES = [
  'SSH_AUTH_SOCK',
  'SSH_AGENT_PID',
  'GPG_AGENT_INFO',
  'DBUS_SESSION_BUS_ADDRESS',
  'DBUS_SYSTEM_BUS_ADDRESS',
  'DOCKER_HOST',
  'DOCKER_CONFIG',
  'DOCKER_CERT_PATH',
  'CONTAINER_HOST',
  'KUBECONFIG',
  'GOOGLE_APPLICATION_CREDENTIALS',
  'XDG_RUNTIME_DIR',
  'DISPLAY',
  'WAYLAND_DISPLAY',
  'XAUTHORITY',
  'TMUX',
  'STY',
] as const;

/** the parts that name a socket, wherever it is (`PODMAN_SOCK`, `BUILDKIT_SOCKET`) */
const SOCKET_PARTS = ['SOCK', 'SOCKET'] as const;

/** GitHub Actions' command files: what a step writes there sets the later steps' environment, PATH and outputs */
const WORKFLOW_COMMAND_FILES = ['GITHUB_ENV', 'GITHUB_OUTPUT', 'GITHUB_PATH', 'GITHUB_STATE', 'GITHUB_STEP_SUMMARY'] as const;

const CREDENTIAL_WORD = new RegExp(CREDENTIAL_WORDS.join('|'));
/** a part between underscores or at an end, with digits after it or not (`DB_PASS2`, `GITHUB_PAT_RO`) */
const partsPattern = (parts: readonly string[]) => new RegExp(`(^|_)(${parts.join('|')})\\d*(_|$)`);
const CREDENTIAL_PART = partsPattern(CREDENTIAL_PARTS);
const SOCKET_PART = partsPattern(SOCKET_PARTS);
/** a URL with a password in it (`scheme://user:password@host`), or a PEM block (a private key, a client certificate) */
const SECRET_VALUE = /:\/\/[^\s/@:]*:[^\s/@]+@|-----BEGIN /;

const shownNames = (names: readonly string[]) => names.map((name) => `\`${name}\``).join(', ');

/** .what = the rules that hold a variable back whatever the allowlist says, in the order the docs show them */
export const COMMAND_ENV_HELD_BACK: readonly CommandEnvHeldBackRule[] = [
  {
    shown: `a name containing ${shownNames(CREDENTIAL_WORDS)}, in any case, anywhere`,
    why: 'the words credentials are named with',
    test: (name) => CREDENTIAL_WORD.test(name.toUpperCase()),
  },
  {
    shown: `a name with ${shownNames(CREDENTIAL_PARTS)} as a whole part, digits after it or not (\`DB_PASS\`, \`MYSQL_PWD\`, \`GITHUB_PAT2\`, \`SENTRY_DSN\`)`,
    why: 'short names of credentials; as parts only, so `PATH` and `BYPASS` are not among them',
    test: (name) => CREDENTIAL_PART.test(name.toUpperCase()),
  },
  {
    shown: `${shownNames(CREDENTIAL_PREFIXES.map((prefix) => `${prefix}*`))}`,
    why: "cloud credentials, and GitHub Actions' runtime and OIDC request token, which mint credentials",
    test: (name) => CREDENTIAL_PREFIXES.some((prefix) => name.toUpperCase().startsWith(prefix)),
  },
  {
    shown: `${shownNames(ACCESS_VARIABLES)}, and a name with ${shownNames(SOCKET_PARTS)} as a part`,
    why: 'a way to act as the user without a secret: an ssh or gpg agent signs, docker is root on the host, a D-Bus session runs programs outside any sandbox, a display takes keystrokes, a cluster config holds its credentials',
    test: (name) => (ACCESS_VARIABLES as readonly string[]).includes(name.toUpperCase()) || SOCKET_PART.test(name.toUpperCase()),
  },
  {
    shown: shownNames(WORKFLOW_COMMAND_FILES),
    why: "GitHub Actions' command files: a write there sets the next steps' environment, PATH and outputs, so it runs outside the sandbox",
    test: (name) => (WORKFLOW_COMMAND_FILES as readonly string[]).includes(name),
  },
  {
    shown: 'a value holding a URL with a password (`https://user:password@host`) or a PEM block (`-----BEGIN …`), whatever its name',
    why: 'a proxy, a package index or a database URL carries its credential inline; a PEM block is a key or a certificate',
    test: (_name, value) => SECRET_VALUE.test(value),
  },
];

/** .what = whether a variable looks like a credential (or a way to act as the user): a rule of COMMAND_ENV_HELD_BACK matches it */
export const looksLikeCredential = (name: string, value = ''): boolean => COMMAND_ENV_HELD_BACK.some((rule) => rule.test(name, value));

/** the variables bash sets itself as it starts: never passed (bash's own value is the true one), never reported as held back */
const SET_BY_BASH = new Set(['PWD', 'OLDPWD', 'SHLVL', '_']);

const PASSED_NAMES = new Set(COMMAND_ENV_PASSED.flatMap((row) => row.names.filter((name) => !name.endsWith('*'))));
const PASSED_PREFIXES = COMMAND_ENV_PASSED.flatMap((row) =>
  row.names.filter((name) => name.endsWith('*')).map((name) => name.slice(0, -1)),
);

/** .what = whether the table passes a variable by default (before the credential rules) */
const isPassedByDefault = (name: string): boolean => PASSED_NAMES.has(name) || PASSED_PREFIXES.some((prefix) => name.startsWith(prefix));

/**
 * .what = why a name cannot be passed through (`--pass-env`, sandbox.env.pass), or null: it must be one variable's
 *         exact name, as the environment spells it
 * .why = a pattern would let through names nobody read; `NAME=value` is not a name
 */
export const checkPassedEnvName = (name: string): string | null =>
  /^[A-Za-z_][A-Za-z0-9_]*$/.test(name) || /^BASH_FUNC_[^=\0]+%%$/.test(name)
    ? null
    : `${JSON.stringify(name)} is not a variable name: give one variable's exact name, e.g. NPM_TOKEN (no wildcard, no =value)`;

/**
 * .what = the environment of a command the model runs: the variables COMMAND_ENV_PASSED names, less those that look
 *         like credentials (COMMAND_ENV_HELD_BACK), plus each one `pass` names exactly; and the names held back, sorted
 * .why = the commands get what builds need and nothing that authenticates, in every sandbox mode (it is not the
 *        sandbox's job); the names held back let a command that fails for want of a credential say which may be missing
 * .note = pure: bhrain's own variables (the proxy's with the network by domain, BHRAIN_BASH_CALL) are added after it
 */
export const pickCommandEnv = (
  env: Record<string, string | undefined>,
  options: { pass?: readonly string[] } = {},
): { env: Record<string, string>; heldBack: string[] } => {
  const pass = new Set(options.pass ?? []);
  const picked: Record<string, string> = {};
  const heldBack: string[] = [];
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined) continue;
    if (pass.has(name) || (isPassedByDefault(name) && !looksLikeCredential(name, value))) picked[name] = value;
    else if (!SET_BY_BASH.has(name)) heldBack.push(name);
  }
  return { env: picked, heldBack: heldBack.sort() };
};
