import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';

import type { BhrainPermissionGuard } from '../agent/permission/BhrainPermissionGuard.js';
import { allowAll, promptForWrites, readOnly } from '../agent/permission/builtinGuards.js';
import { genRulesGuard } from '../agent/permission/genRulesGuard.js';
import { BadRequestError } from '../core/contract/errors.js';
import { didYouMean } from '../core/text/findNearestName.js';
import { RULE_KINDS } from './settings/settingsTable.js';

const BUILTIN: Record<string, BhrainPermissionGuard> = { allowAll, readOnly, promptForWrites };

/**
 * .what = the guard a --permission value names: a builtin, inline JSON rules `{"allow": [...], "deny": [...]}`, or a JSON
 *         rules file `{ allow, prompt, deny }`
 * .why = a value that is none of them fails with the choices and the nearest builtin, never silently falling back to a
 *        default
 */
export const resolvePermission = async (value: string | undefined, cwd: string): Promise<BhrainPermissionGuard> => {
  if (value === undefined) return allowAll;
  if (BUILTIN[value]) return BUILTIN[value];
  const inline = value.trim().startsWith('{');
  const text = inline
    ? value
    : await readFile(resolve(cwd, value), 'utf8').catch((error: NodeJS.ErrnoException) => {
        throw new BadRequestError(
          `--permission ${value}: not a builtin guard and not a readable rules file (${error.code ?? error.message}): ${didYouMean(value, Object.keys(BUILTIN))}the builtins are ${Object.keys(BUILTIN).join(', ')}; or give rules inline, '{"allow": ["bash(npm test*)"], "deny": ["bash(rm *)"]}', or in a file`,
        );
      });
  const named = inline ? 'inline rules' : value;
  let rules: unknown;
  try {
    rules = JSON.parse(text);
  } catch (error) {
    throw new BadRequestError(
      `--permission ${named}: ${inline ? 'not' : 'the rules file is not'} JSON (${(error as Error).message}); expected {"allow": [...], "prompt": [...], "deny": [...]}`,
    );
  }
  const expected = `expected {"allow": [...], "prompt": [...], "deny": [...]} with rule strings like "bash(npm test*)" or "write(src/**)"`;
  if (!rules || typeof rules !== 'object' || Array.isArray(rules)) throw new BadRequestError(`--permission ${named}: ${expected}`);
  // each key that is not a kind of rule is named, with the kind it is nearest; a bad list, by its key
  const wrong = Object.entries(rules).map(([key, list]) => {
    if (!(RULE_KINDS as readonly string[]).includes(key))
      return `unknown key '${key}': ${didYouMean(key, RULE_KINDS)}(valid keys are ${RULE_KINDS.join(', ')})`;
    return Array.isArray(list) && list.every((rule) => typeof rule === 'string') ? null : `'${key}' must be a list of rule strings`;
  });
  if (wrong.some(Boolean)) throw new BadRequestError(`--permission ${named}: ${wrong.filter(Boolean).join('; ')}; ${expected}`);
  return genRulesGuard(rules as { allow?: string[]; prompt?: string[]; deny?: string[] }, `rules(${named})`);
};
