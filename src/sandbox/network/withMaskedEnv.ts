import type { MaskedCredential } from './genMaskedCredentials.js';
import { SANDBOX_CA_BUNDLE_PATH, SANDBOX_CA_PATH } from './genSandboxTrust.js';

/**
 * .what = a command's environment with masking on: each masked variable holds its placeholder, and the variables that
 *         pick a CA bundle point at the sandbox's (curl, git, Python's requests, OpenSSL and Go programs such as gh;
 *         node adds the run CA to its own)
 * .why = applied last, after the environment is picked for the command: a placeholder is what the model may see of a
 *        masked value, whatever else passes
 */
export const withMaskedEnv = (
  env: Record<string, string | undefined>,
  masking: { credentials: readonly Pick<MaskedCredential, 'name' | 'placeholder'>[] },
): Record<string, string | undefined> => ({
  ...env,
  ...Object.fromEntries(masking.credentials.map((credential) => [credential.name, credential.placeholder])),
  SSL_CERT_FILE: SANDBOX_CA_BUNDLE_PATH,
  CURL_CA_BUNDLE: SANDBOX_CA_BUNDLE_PATH,
  GIT_SSL_CAINFO: SANDBOX_CA_BUNDLE_PATH,
  REQUESTS_CA_BUNDLE: SANDBOX_CA_BUNDLE_PATH,
  NODE_EXTRA_CA_CERTS: SANDBOX_CA_PATH,
});
