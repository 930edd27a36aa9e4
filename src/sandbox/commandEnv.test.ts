import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

import { checkPassedEnvName, COMMAND_ENV_PASSED, looksLikeCredential, pickCommandEnv } from './commandEnv.js';

/** the secrets found in a CI job's environment, each reaching `env > env.txt` before the allowlist */
const CI_SECRETS = {
  AWS_ACCESS_KEY_ID: 'AKIAFAKEFAKEFAKE',
  AWS_SECRET_ACCESS_KEY: 'fake/secret/access/key',
  AWS_SESSION_TOKEN: 'fake-session-token',
  NPM_TOKEN: 'npm_fake',
  ACTIONS_ID_TOKEN_REQUEST_TOKEN: 'fake-oidc-request-token',
  GH_TOKEN: 'ghp_fake',
  DATABASE_PASSWORD: 'hunter2-fake',
};

/** a GitHub-hosted runner's environment, in part: what a build needs beside the secrets */
const RUNNER_ENV = {
  PATH: '/usr/local/bin:/usr/bin:/bin',
  HOME: '/home/runner',
  USER: 'runner',
  LANG: 'C.UTF-8',
  LC_ALL: 'C.UTF-8',
  CI: 'true',
  TMPDIR: '/tmp',
  JAVA_HOME: '/usr/lib/jvm/temurin-17',
  GITHUB_REPOSITORY: 'octo/app',
  GITHUB_SHA: 'f00d',
  GITHUB_REF: 'refs/pull/1/merge',
  RUNNER_OS: 'Linux',
  RUNNER_TEMP: '/home/runner/work/_temp',
  CI_PROJECT_PATH: 'group/app',
  npm_config_registry: 'https://registry.example/',
};

describe('the commands the model runs get an environment by allowlist', () => {
  it("given a CI job's environment, then its build variables and CI context pass, and none of its 7 secrets does", () => {
    const { env, heldBack } = pickCommandEnv({ ...RUNNER_ENV, ...CI_SECRETS });
    expect(env).toEqual(RUNNER_ENV);
    expect(heldBack).toEqual(Object.keys(CI_SECRETS).sort());
  });

  it('then a credential under an allowed prefix stays out: GITHUB_TOKEN, CI_JOB_TOKEN, CI_JOB_JWT, npm_config__authToken, RUNNER_TRACKING_ID passes', () => {
    const { env } = pickCommandEnv({
      GITHUB_TOKEN: 'ghs_x',
      GITHUB_PAT: 'x',
      CI_JOB_TOKEN: 'x',
      CI_JOB_JWT_V2: 'x',
      CI_REGISTRY_PASSWORD: 'x',
      npm_config__authToken: 'x',
      npm_config__auth: 'x',
      BUILDKITE_AGENT_ACCESS_TOKEN: 'x',
      SYSTEM_ACCESSTOKEN: 'x',
      CIRCLE_OIDC_TOKEN_V2: 'x',
      RUNNER_TRACKING_ID: 'github_1',
    });
    expect(env).toEqual({ RUNNER_TRACKING_ID: 'github_1' });
  });

  it("then GitHub's workflow command files stay out: a write there would run in the job's next steps", () => {
    const files = { GITHUB_ENV: '/x/env', GITHUB_OUTPUT: '/x/o', GITHUB_PATH: '/x/p', GITHUB_STATE: '/x/s', GITHUB_STEP_SUMMARY: '/x/m' };
    expect(pickCommandEnv({ ...files, GITHUB_WORKSPACE: '/w' }).env).toEqual({ GITHUB_WORKSPACE: '/w' });
  });

  it('then sockets and agents that act as the user stay out, and so does anything not in the table', () => {
    const { env, heldBack } = pickCommandEnv({
      SSH_AUTH_SOCK: '/run/user/1000/ssh',
      DBUS_SESSION_BUS_ADDRESS: 'unix:path=/run/user/1000/bus',
      DOCKER_HOST: 'unix:///var/run/docker.sock',
      KUBECONFIG: '/home/u/.kube/config',
      XDG_RUNTIME_DIR: '/run/user/1000',
      DISPLAY: ':0',
      NODE_OPTIONS: '--require ./x.js',
      LD_PRELOAD: '/x.so',
      GIT_SSH_COMMAND: 'ssh -i key',
      PATH: '/bin',
    });
    expect(env).toEqual({ PATH: '/bin' });
    expect(heldBack).toHaveLength(9);
  });

  it("then a value with a password in a URL, or a PEM block, stays out whatever its name: the user's own proxy passes without one", () => {
    const { env } = pickCommandEnv({
      HTTPS_PROXY: 'http://user:s3cret@proxy.corp:3128',
      https_proxy: 'http://proxy.corp:3128',
      CI_REPOSITORY_URL: 'https://gitlab-ci-token:glcbt-x@gitlab.com/g/app.git',
      CI_SERVER_URL: 'https://gitlab.com',
      CI_DEPLOY_CERT: '-----BEGIN PRIVATE KEY-----\nx',
    });
    expect(env).toEqual({ https_proxy: 'http://proxy.corp:3128', CI_SERVER_URL: 'https://gitlab.com' });
  });

  it('then the shell-behaviour variables (BASH_ENV, SHELLOPTS, exported functions) stay out unless passed by name', () => {
    const given = { BASH_ENV: '/x.sh', SHELLOPTS: 'xtrace', 'BASH_FUNC_ls%%': '() { rm -rf /; }' };
    expect(pickCommandEnv(given).env).toEqual({});
    expect(pickCommandEnv(given, { pass: ['BASH_ENV', 'BASH_FUNC_ls%%'] }).env).toEqual({
      BASH_ENV: '/x.sh',
      'BASH_FUNC_ls%%': '() { rm -rf /; }',
    });
  });

  it('then what bash sets itself (PWD, OLDPWD, SHLVL, _) is neither passed nor reported as held back', () => {
    expect(pickCommandEnv({ PWD: '/elsewhere', OLDPWD: '/', SHLVL: '3', _: '/usr/bin/node' })).toEqual({ env: {}, heldBack: [] });
  });

  it('then --pass-env lets exactly the names it gives through, credentials too, and nothing by another case or a prefix', () => {
    const { env, heldBack } = pickCommandEnv({ ...CI_SECRETS, npm_token: 'lower' }, { pass: ['NPM_TOKEN', 'AWS_'] });
    expect(env).toEqual({ NPM_TOKEN: 'npm_fake' });
    expect(heldBack).not.toContain('NPM_TOKEN');
    expect(heldBack).toContain('npm_token');
  });

  it('then an unset variable (undefined) is neither passed nor held back', () => {
    expect(pickCommandEnv({ PATH: undefined, NPM_TOKEN: undefined }, { pass: ['NPM_TOKEN'] })).toEqual({ env: {}, heldBack: [] });
  });

  it("then no name of the table's own looks like a credential: every row it lists is one a build can get", () => {
    const exact = COMMAND_ENV_PASSED.flatMap((row) => row.names.filter((name) => !name.endsWith('*')));
    expect(exact.filter((name) => looksLikeCredential(name))).toEqual([]);
    expect(Object.keys(pickCommandEnv(Object.fromEntries(exact.map((name) => [name, 'x']))).env)).toEqual(exact);
  });

  it('then a name to pass must be one exact variable name: a wildcard, NAME=value or an empty one is refused, saying so', () => {
    expect(checkPassedEnvName('NPM_TOKEN')).toBeNull();
    expect(checkPassedEnvName('BASH_FUNC_ls%%')).toBeNull();
    for (const wrong of ['AWS_*', 'NPM_TOKEN=x', '', '1X', 'A B'])
      expect(checkPassedEnvName(wrong)).toBe(
        `${JSON.stringify(wrong)} is not a variable name: give one variable's exact name, e.g. NPM_TOKEN (no wildcard, no =value)`,
      );
  });
});

/** the words and parts a credential's name is recognised by (commandEnv's rules), and the prefixes the table allows */
const WORDS = [
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
];
const PARTS = ['PASS', 'PWD', 'PAT', 'CRED', 'CREDS', 'SAS', 'DSN', 'SOCK', 'SOCKET'];
const ALLOWED_PREFIXES = COMMAND_ENV_PASSED.flatMap((row) =>
  row.names.filter((name) => name.endsWith('*')).map((name) => name.slice(0, -1)),
);

/** a word in a random mix of cases: `ToKeN` */
const anyCase = (word: string) =>
  fc
    .array(fc.boolean(), { minLength: word.length, maxLength: word.length })
    .map((upper) => [...word].map((char, index) => (upper[index] ? char.toUpperCase() : char.toLowerCase())).join(''));

/** letters, digits and underscores, as a name's other parts */
const filler = fc.stringMatching(/^[A-Za-z0-9_]{0,8}$/);

/** a name with a credential's word anywhere in it, or one of its short parts between underscores, under any allowed prefix (or none) */
const credentialName = fc
  .tuple(
    fc.constantFrom('', ...ALLOWED_PREFIXES),
    filler,
    fc.oneof(
      fc.constantFrom(...WORDS).chain(anyCase),
      fc.constantFrom(...PARTS).chain((part) => anyCase(part).map((cased) => `_${cased}_`)),
    ),
    filler,
  )
  .map(([prefix, before, word, after]) => `${prefix}${before}${word}${after}`);

describe('a generated credential-looking name never reaches the commands unless --pass-env names it exactly', () => {
  it('then, in any case, at any position, under any allowed prefix, it is held back; passed by its exact name, it passes', () => {
    fc.assert(
      fc.property(credentialName, fc.array(fc.stringMatching(/^[A-Za-z_][A-Za-z0-9_]{0,12}$/), { maxLength: 4 }), (name, others) => {
        const env = { [name]: 'fake-secret-value', PATH: '/bin' };
        const pass = others.filter((other) => other !== name);
        const picked = pickCommandEnv(env, { pass });
        expect(picked.env).not.toHaveProperty([name]);
        expect(picked.heldBack).toContain(name);
        // another case of the same name is another variable: it passes nothing
        const otherCase = name === name.toUpperCase() ? name.toLowerCase() : name.toUpperCase();
        if (otherCase !== name) expect(pickCommandEnv(env, { pass: [otherCase] }).env).not.toHaveProperty([name]);
        expect(pickCommandEnv(env, { pass: [...pass, name] }).env).toHaveProperty([name], 'fake-secret-value');
      }),
      { numRuns: 2_000 },
    );
  });
});
