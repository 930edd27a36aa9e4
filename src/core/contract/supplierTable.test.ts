import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

import { SEARCH_SUPPLIER_TABLE, SUPPLIER_KEY_ENV_VARS, SUPPLIER_TABLE, findSupplierBySlugPrefix } from './supplierTable.js';

const src = fileURLToPath(new URL('../..', import.meta.url));

describe('the supplier table', () => {
  it("each supplier's variable names are written in this one source file: every other module reads them from it", () => {
    const names = [
      ...SUPPLIER_TABLE.flatMap((row) => [...row.tokenEnvVars, ...row.keyEnvVars, row.urlEnvVar]),
      ...Object.values(SEARCH_SUPPLIER_TABLE).flatMap((row) => [row.keyEnvVar, row.urlEnvVar]),
    ];
    const naming = new RegExp(`\\b(${names.join('|')})\\b`);
    const files = (readdirSync(src, { recursive: true }) as string[])
      .filter((path) => !path.endsWith('.test.ts') && /\.(ts|txt|md|sh)$/.test(path))
      .filter((path) => naming.test(readFileSync(join(src, path), 'utf8')));
    expect(files).toEqual([join('core', 'contract', 'supplierTable.ts')]);
  });

  it('a slug prefix names its supplier: claude is anthropic, qwen and openai are themselves, anything else none', () => {
    expect(['claude', 'qwen', 'openai', 'anthropic'].map((prefix) => findSupplierBySlugPrefix(prefix)?.supplier ?? null)).toEqual([
      'anthropic',
      'qwen',
      'openai',
      null,
    ]);
  });

  it('the keys held back from shells are every token and key variable, LLM and search suppliers, and no URL variable', () => {
    expect([...SUPPLIER_KEY_ENV_VARS].sort()).toEqual(
      [
        'ANTHROPIC_AUTH_TOKEN',
        'ANTHROPIC_API_KEY',
        'QWEN_API_KEY',
        'DASHSCOPE_API_KEY',
        'OPENAI_API_KEY',
        'TAVILY_API_KEY',
        'BRAVE_API_KEY',
      ].sort(),
    );
  });
});
