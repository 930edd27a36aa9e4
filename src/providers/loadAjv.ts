import { createRequire } from 'node:module';

import type { Ajv } from 'ajv';

/** .what = the ajv classes for draft-07, 2019-09 and 2020-12 */
export interface AjvClasses {
  Ajv: typeof Ajv;
  Ajv2019: typeof import('ajv/dist/2019.js').Ajv2019;
  Ajv2020: typeof import('ajv/dist/2020.js').Ajv2020;
}

let loaded: AjvClasses | null = null;

/** .what = the classes from each draft's CommonJS module.exports, however it was loaded */
const fromModules = (ajv: unknown, ajv2019: unknown, ajv2020: unknown): AjvClasses => ({
  Ajv: (ajv as AjvClasses).Ajv,
  Ajv2019: (ajv2019 as AjvClasses).Ajv2019,
  Ajv2020: (ajv2020 as AjvClasses).Ajv2020,
});

/**
 * .what = loads ajv ahead of its first (synchronous) use: in the bundled CLI it is one chunk, not ~100 CommonJS files
 * .why = ajv is needed only once a tool call or a schema arrives; required from node_modules it took ~30 ms, imported
 *        from the CLI's bundle ~9 ms. Callers that can wait (the atom, before it reads tool calls) call this first
 */
export const preloadAjv = async (): Promise<void> => {
  if (loaded) return;
  // each is CommonJS: its module.exports (the default import, under node and in esbuild's bundle alike) holds the class
  const [ajv, ajv2019, ajv2020] = await Promise.all([import('ajv'), import('ajv/dist/2019.js'), import('ajv/dist/2020.js')]);
  loaded ??= fromModules(ajv.default, ajv2019.default, ajv2020.default);
};

/**
 * .what = ajv's classes: those preloaded, or else required (it is CommonJS) from node_modules now
 * .why = the schema compilers are synchronous; a caller that did not preload still gets a working ajv, only slower
 */
export const loadAjv = (): AjvClasses => {
  if (loaded) return loaded;
  const require = createRequire(import.meta.url);
  return (loaded = fromModules(require('ajv'), require('ajv/dist/2019'), require('ajv/dist/2020')));
};
