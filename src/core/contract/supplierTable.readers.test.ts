import { rm } from 'node:fs/promises';

import { afterEach, describe, expect, it } from 'vitest';

import { genConfigCommand } from '../../cli/genConfigCommand.js';
import { genBrainAtom } from '../../providers/genBrainAtom.js';
import { asBhrainContext } from '../../rhachet/readRhachetCall.js';
import { credentialEnvVarsOf, SUPPLIER_TABLE } from './supplierTable.js';
import { tempDir } from '#test-helpers/fs.js';

/** a URL at which each supplier needs a key, on nothing that listens: the key check fails before any request */
const KEYED_URL_OF: Record<string, string> = {
  claude: 'http://127.0.0.1:9',
  qwen: 'http://dashscope.invalid/v1',
  openai: 'http://api.openai.com.invalid/v1',
};

const dirs: string[] = [];
afterEach(async () => {
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

describe("the supplier table's readers follow it, supplier by supplier", () => {
  it.each(SUPPLIER_TABLE.map((row) => [row.slugPrefix, row] as const))(
    'the %s atom calls the base URL its URL variable gives, and without a key names every key variable',
    async (prefix, row) => {
      const atom = genBrainAtom({ slug: prefix });
      const failure = atom.generate({ messages: [{ role: 'user', content: 'hi' }] }, { env: { [row.urlEnvVar]: KEYED_URL_OF[prefix] } });
      await expect(failure).rejects.toThrow(`at ${KEYED_URL_OF[prefix]}`);
      for (const name of credentialEnvVarsOf(row)) await expect(failure).rejects.toThrow(name);
      await expect(failure).rejects.toThrow(`context.creds.${row.supplier}.apiKey`);
    },
  );

  it.each(SUPPLIER_TABLE.map((row) => [row.slugPrefix, row] as const))(
    "a rhachet creds getter's %s variables become context.creds, a bearer token before a key",
    async (_, row) => {
      const keys = Object.fromEntries(credentialEnvVarsOf(row).map((name) => [name, `value-of-${name}`]));
      const context = await asBhrainContext({
        'brain.supplier.bhrain': { creds: async () => ({ ...keys, [row.urlEnvVar]: 'http://127.0.0.1:9' }) },
      });
      expect(context.creds?.[row.supplier]).toEqual({ apiKey: `value-of-${credentialEnvVarsOf(row)[0]}`, url: 'http://127.0.0.1:9' });
    },
  );

  it.each(SUPPLIER_TABLE.map((row) => [row.slugPrefix, row] as const))(
    '`bhrain config --atom %s` names the variable that holds the key, or every one to set',
    async (prefix, row) => {
      const cwd = tempDir('bhrain-supplier-readers-');
      dirs.push(cwd);
      const keyOf = async (env: Record<string, string>) => {
        let stdout = '';
        const command = genConfigCommand({
          cwd,
          env: { BHRAIN_CONFIG_DIR: cwd, ...env },
          stdout: { write: (text: string) => (stdout += text) },
          stderr: { write: () => true },
          setExitCode: () => undefined,
        });
        await command.parseAsync(['--atom', prefix, '-o', 'json'], { from: 'user' });
        return JSON.parse(stdout).key;
      };
      const vars = credentialEnvVarsOf(row);
      const last = vars[vars.length - 1];
      expect(await keyOf({ [last]: 'a-key' })).toEqual({ supplier: prefix, source: `env:${last}`, envVars: vars });
      expect(await keyOf({})).toEqual({ supplier: prefix, source: null, envVars: vars });
    },
  );
});
