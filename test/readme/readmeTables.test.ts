// the flag table, exit code table and JSON section (docs/cli-reference.md) are checked against the code;
// they moved from the readme to their pages, the settings table to docs/settings.md, the bench block to docs/benchmarks.md
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';

import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';

import { replaceReadmeBench } from '../../bench/formatReport.js';
import { EXIT_CODE_OF_ERROR, EXIT_CODES, exitCodeOfError } from '../../src/cli/exitCodes.js';
import { RunRecordWriteError } from '../../src/cli/runRecord.js';
import { RefStoreWriteError } from '../../src/core/continuation/genBrainRefStore.js';
import * as bhrain from '../../src/index.js';
import { genSkillCommand } from '../../src/cli/genSkillCommand.js';
import { formatReadmeSettingsTable, SETTINGS, type SettingRow } from '../../src/cli/settings/settingsTable.js';
import { COMMAND_ENV_HELD_BACK, COMMAND_ENV_PASSED } from '../../src/sandbox/commandEnv.js';

const root = join(import.meta.dirname, '..', '..');
const page = (name: string) => readFile(join(root, 'docs', name), 'utf8');
const cliReference = await page('cli-reference.md');
const settingsPage = await page('settings.md');
const benchmarks = await page('benchmarks.md');
const sandboxPage = await page('sandbox-and-permissions.md');

/** .what = the rows of the first markdown table after a heading of a page, as arrays of cell texts */
const tableAfter = (text: string, heading: string): string[][] => {
  const start = text.indexOf(`\n${heading}\n`);
  expect(start, `the page has a "${heading}" section`).toBeGreaterThan(-1);
  const lines = text.slice(start).split('\n');
  const first = lines.findIndex((line) => line.startsWith('|'));
  const rows: string[][] = [];
  for (const line of lines.slice(first + 2)) {
    if (!line.startsWith('|')) break;
    rows.push(
      line
        .slice(1, -1)
        .split(/(?<!\\)\|/)
        .map((cell) => cell.trim()),
    );
  }
  return rows;
};

describe('the docs are true to the code', () => {
  it('the bench tables of docs/benchmarks.md are the last full bench run (bench/results/latest.json), as npm run bench writes them', async () => {
    const report = JSON.parse(await readFile(join(root, 'bench', 'results', 'latest.json'), 'utf8'));
    expect(report.smoke).toBe(false);
    expect(benchmarks).toBe(replaceReadmeBench(benchmarks, report));
  });

  it('the flags table lists exactly the flags act and ask accept', () => {
    const documented = new Set(
      tableAfter(cliReference, '## Flags').flatMap(([cell]) => [...cell.matchAll(/--[a-z][a-z-]*/g)].map((match) => match[0])),
    );
    const noop = async () => 0;
    const accepted = new Set(
      [genSkillCommand('act', noop), genSkillCommand('ask', noop)].flatMap((command) =>
        command.options.filter((option) => !option.hidden).map((option) => option.long!),
      ),
    );
    accepted.add('--help');
    accepted.add('--version');
    expect([...documented].sort()).toEqual([...accepted].sort());
  });

  it('the exit code table lists exactly the exit codes', () => {
    const documented = tableAfter(cliReference, '## Exit codes').map(([code]) => Number(code));
    expect(documented.sort((a, b) => a - b)).toEqual(Object.values(EXIT_CODES).sort((a, b) => a - b));
  });

  it('one exit-code map: each error class the exit code table names ends the CLI with that code, and every class of the map is named in its row', () => {
    const classes: Record<string, abstract new (...args: never[]) => Error> = {
      ...(Object.fromEntries(
        Object.entries(bhrain).filter(([, value]) => typeof value === 'function' && value.prototype instanceof Error),
      ) as Record<string, abstract new (...args: never[]) => Error>),
      RunRecordWriteError,
      RefStoreWriteError,
    };
    const rows = tableAfter(cliReference, '## Exit codes').map(([code, , named]) => ({
      code: Number(code),
      names: [...named.matchAll(/`(\w+Error)`/g)].map((match) => match[1]),
    }));
    const documented = rows.flatMap(({ code, names }) => names.map((name) => ({ name, code })));
    // an instance without its constructor: what instanceof reads is the prototype chain
    const mapped = documented.map(({ name }) => ({
      name,
      code: classes[name] ? exitCodeOfError(Object.create(classes[name].prototype)) : 'not a class',
    }));
    expect(mapped).toEqual(documented);
    for (const [errorClass, code] of EXIT_CODE_OF_ERROR) expect(rows.find((row) => row.code === code)?.names).toContain(errorClass.name);
    expect(exitCodeOfError(new TypeError('a bug'))).toBe(EXIT_CODES.crash);
  });

  it("one settings table: docs/settings.md's settings table is the one made from src/cli/settings/settingsTable.ts", () => {
    const start = settingsPage.indexOf('| key | flag | value | default |');
    expect(start, 'docs/settings.md has the settings table').toBeGreaterThan(-1);
    // the table's cells link to the readme's old #sandbox anchor; on this page the sandbox is a page of its own
    const table = formatReadmeSettingsTable().replaceAll('](#sandbox)', '](sandbox-and-permissions.md#sandbox)');
    expect(settingsPage.slice(start, settingsPage.indexOf('\n\n', start))).toBe(table);
  });

  it('one settings table: the env layer of docs/settings.md names every env var of the table', () => {
    const envRow = tableAfter(settingsPage, '## Settings').find(([, layer]) => layer === 'env')!;
    const named = [...envRow[2].matchAll(/`([A-Z_]+)`/g)].map((match) => match[1]).sort();
    expect(named).toEqual(
      Object.values(SETTINGS)
        .flatMap((setting: SettingRow) => [...(setting.env ?? [])])
        .sort(),
    );
  });

  it("the two tables of the commands' environment (docs/sandbox-and-permissions.md) are the ones src/sandbox/commandEnv.ts holds, row for row", () => {
    const cell = (text: string) => text.replaceAll('|', '\\|');
    const passed = [
      '| the commands get | why |',
      '|---|---|',
      ...COMMAND_ENV_PASSED.map((row) => `| ${row.names.map((name) => `\`${name}\``).join(', ')} | ${cell(row.why)} |`),
    ].join('\n');
    const heldBack = [
      '| held back whatever the table above says, unless `--pass-env` names it | why |',
      '|---|---|',
      ...COMMAND_ENV_HELD_BACK.map((rule) => `| ${cell(rule.shown)} | ${cell(rule.why)} |`),
    ].join('\n');
    const section = sandboxPage.slice(sandboxPage.indexOf("\n### The commands' environment\n"));
    expect(section.slice(section.indexOf('| the commands get |'), section.indexOf('\n\n', section.indexOf('| the commands get |')))).toBe(
      passed,
    );
    expect(section.slice(section.indexOf('| held back whatever'), section.indexOf('\n\n', section.indexOf('| held back whatever')))).toBe(
      heldBack,
    );
  });

  it('the JSON example of docs/cli-reference.md is valid against the published schema, and names every field of it', async () => {
    const schema = JSON.parse(await readFile(join(root, 'schemas', 'output.schema.json'), 'utf8'));
    const section = cliReference.slice(cliReference.indexOf('`--output json` prints'));
    const example = JSON.parse(section.slice(section.indexOf('```json\n') + 8, section.indexOf('\n```', section.indexOf('```json\n'))));
    const validate = new Ajv2020({ strict: true }).compile(schema);
    expect(validate(example) ? [] : validate.errors).toEqual([]);
    expect(Object.keys(example).sort()).toEqual(Object.keys(schema.properties).sort());
  });
});
