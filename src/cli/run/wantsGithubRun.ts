import { BadRequestError } from '../../core/contract/errors.js';
import type { RunIo } from './genRunIo.js';

/**
 * .what = whether a run follows GitHub Actions' conventions: a CLI run (not hosted, not through rhachet, which drops
 *         stderr on success) with GITHUB_ACTIONS=true, unless --no-ci-integration or BHRAIN_CI_INTEGRATION=0
 */
export const wantsGithubRun = (io: RunIo): boolean => {
  if (io.host || io.viaRhachet) return false;
  const setting = process.env.BHRAIN_CI_INTEGRATION;
  if (setting !== undefined && !['0', '1', 'true', 'false', ''].includes(setting))
    throw new BadRequestError(`BHRAIN_CI_INTEGRATION=${setting}: give 0 or false (off), or 1 or true (on)`);
  if (io.options.ciIntegration === false || setting === '0' || setting === 'false') return false;
  return process.env.GITHUB_ACTIONS === 'true';
};
