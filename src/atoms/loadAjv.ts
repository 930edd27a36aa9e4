import { createRequire } from 'node:module';

import type { Ajv } from 'ajv';

const require = createRequire(import.meta.url);

/** .what = the ajv classes for draft-07, 2019-09 and 2020-12 */
export interface AjvClasses {
  Ajv: typeof Ajv;
  Ajv2019: typeof import('ajv/dist/2019.js').Ajv2019;
  Ajv2020: typeof import('ajv/dist/2020.js').Ajv2020;
}

let loaded: AjvClasses | null = null;

/**
 * .what = ajv's classes, required (it is CommonJS) on the first schema a run compiles
 * .why = ajv is about a hundred modules: loading them at start-up cost every run ~50 ms before its first request,
 *        though most runs validate nothing until a tool call arrives
 */
export const loadAjv = (): AjvClasses =>
  (loaded ??= {
    Ajv: require('ajv').Ajv,
    Ajv2019: require('ajv/dist/2019').Ajv2019,
    Ajv2020: require('ajv/dist/2020').Ajv2020,
  });
