// the published JSON Schema of --output json (schemas/output.schema.json), compiled once for the tests that hold a
// run's JSON to it
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';

import { Ajv2020 } from 'ajv/dist/2020.js';
import { expect } from 'vitest';

import { PACKAGE_ROOT } from './runCli.js';

const validateOutput = new Ajv2020({ allErrors: true, strict: true }).compile(
  JSON.parse(await readFile(join(PACKAGE_ROOT, 'schemas', 'output.schema.json'), 'utf8')),
);

/** .what = a failed expectation listing what in the value the schema refuses, or nothing */
export const expectValidOutput = (value: unknown): void => {
  expect(validateOutput(value) ? [] : validateOutput.errors).toEqual([]);
};

/** .what = stdout as exactly one JSON object valid against the published schema, or a failed expectation saying why */
export const oneValidObject = (stdout: string) => {
  const lines = stdout.split('\n').filter(Boolean);
  expect(lines).toHaveLength(1);
  const value = JSON.parse(lines[0]);
  expectValidOutput(value);
  return value;
};
