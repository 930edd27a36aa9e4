import { resolve } from 'node:path';

import { getBhrainConfigDir } from '../../agent/config/getBhrainConfigDir.js';
import { BadRequestError } from '../../core/contract/errors.js';
import { readSettingsFile } from './readSettingsFile.js';
import { SETTINGS_FILE_NAME } from './resolveSkillSettings.js';
import { checkSettingText, SETTINGS } from './settingsTable.js';

/**
 * .what = the store setting of a command that reads refs without running a skill (export, show): --store, else
 *         BHRAIN_STORE, else the user settings file's `store`; undefined = the local store
 * .why = the same store a run would use, read as the run reads it (a project file may not set it, so the user file is
 *        the only file that can), without resolving every other setting of a run
 */
export const resolveStoreSetting = async (input: {
  flag: string | undefined;
  env: Record<string, string | undefined>;
}): Promise<string | undefined> => {
  const check = (given: string, from: string): string => {
    const checked = checkSettingText(SETTINGS.store.value, given);
    if (!checked.ok) throw new BadRequestError(SETTINGS.store.textError!(from, given));
    return given;
  };
  if (input.flag !== undefined) return check(input.flag, '--store');
  if (input.env.BHRAIN_STORE) return check(input.env.BHRAIN_STORE, 'BHRAIN_STORE');
  const user = await readSettingsFile({ path: resolve(getBhrainConfigDir(input.env), SETTINGS_FILE_NAME), layer: 'user' });
  return user?.store;
};
