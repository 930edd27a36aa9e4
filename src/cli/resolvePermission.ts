import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';

import type { BhrainPermissionGuard } from '../agent/permission/BhrainPermissionGuard.js';
import { allowAll, promptForWrites, readOnly } from '../agent/permission/builtinGuards.js';
import { genRulesGuard } from '../agent/permission/genRulesGuard.js';
import { BadRequestError } from '../core/contract/errors.js';
import { findNearestName } from '../core/text/findNearestName.js';
import { RULE_KINDS } from './settings/settingsTable.js';

const BUILTIN: Record<string, BhrainPermissionGuard> = { allowAll, readOnly, promptForWrites };

/**
 * .what = the guard a --permission value names: a builtin, or a JSON rules file `{ allow, prompt, deny }`
 * .why = a value that is neither fails with the choices, never silently falling back to a default
 */
export const resolvePermission = async (value: string | undefined, cwd: string): Promise<BhrainPermissionGuard> => {
  if (value === undefined) return allowAll;
  if (BUILTIN[value]) return BUILTIN[value];
  const path = resolve(cwd, value);
  const text = await readFile(path, 'utf8').catch((error: NodeJS.ErrnoException) => {
    throw new BadRequestError(
      `--permission ${value}: not a builtin guard (${Object.keys(BUILTIN).join(', ')}) and not a readable rules file (${error.code ?? error.message})`,
    );
  });
  let rules: unknown;
  try {
    rules = JSON.parse(text);
  } catch (error) {
    throw new BadRequestError(
      `--permission ${value}: the rules file is not JSON (${(error as Error).message}); expected {"allow": [...], "prompt": [...], "deny": [...]}`,
    );
  }
  const expected = `expected {"allow": [...], "prompt": [...], "deny": [...]} with rule strings like "bash(npm test*)" or "write(src/**)"`;
  if (!rules || typeof rules !== 'object' || Array.isArray(rules)) throw new BadRequestError(`--permission ${value}: ${expected}`);
  // each key that is not a kind of rule is named, with the kind it is nearest; a bad list, by its key
  const wrong = Object.entries(rules).map(([key, list]) => {
    if (!(RULE_KINDS as readonly string[]).includes(key)) {
      const near = findNearestName(key, RULE_KINDS);
      return `unknown key '${key}'${near ? `: did you mean '${near}'?` : ''} (valid keys are ${RULE_KINDS.join(', ')})`;
    }
    return Array.isArray(list) && list.every((rule) => typeof rule === 'string') ? null : `'${key}' must be a list of rule strings`;
  });
  if (wrong.some(Boolean)) throw new BadRequestError(`--permission ${value}: ${wrong.filter(Boolean).join('; ')}; ${expected}`);
  return genRulesGuard(rules as { allow?: string[]; prompt?: string[]; deny?: string[] }, `rules(${value})`);
};
