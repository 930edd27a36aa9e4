import { createRequire } from 'node:module';

import type { Ajv, Options as AjvOptions, ValidateFunction } from 'ajv';

/** .what = the ajv classes for draft-07, 2019-09 and 2020-12 */
interface AjvClasses {
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
const loadAjv = (): AjvClasses => {
  if (loaded) return loaded;
  const require = createRequire(import.meta.url);
  return (loaded = fromModules(require('ajv'), require('ajv/dist/2019'), require('ajv/dist/2020')));
};

/** .what = the JSON Schema drafts bhrain reads: each one's URI (as $schema names it), its short tag, and its ajv class */
export const JSON_SCHEMA_DRAFTS = [
  {
    uris: ['https://json-schema.org/draft/2020-12/schema', 'http://json-schema.org/draft/2020-12/schema'],
    tag: '2020-12',
    Class: 'Ajv2020',
  },
  {
    uris: ['https://json-schema.org/draft/2019-09/schema', 'http://json-schema.org/draft/2019-09/schema'],
    tag: '2019-09',
    Class: 'Ajv2019',
  },
  { uris: ['http://json-schema.org/draft-07/schema', 'https://json-schema.org/draft-07/schema'], tag: 'draft-07', Class: 'Ajv' },
] as const;
export type JsonSchemaDraft = (typeof JSON_SCHEMA_DRAFTS)[number];

/**
 * .what = what a schema is for, and so how ajv reads it
 *   - toolInput: a tool's input schema, from our tools, library callers and MCP servers, written for suppliers that ignore
 *     keywords they do not know, so unknown keywords are ignored here too (strict off); verbose keeps the offending
 *     value, so a message can say what was received. A schema is not checked against its draft's meta-schema (compiling
 *     that validator cost ~20 ms of each run's first tool call): ajv's own keyword checks still reject a malformed
 *     keyword (`minimum: "one"`, `type: "strng"`, `required: "a"`, an unresolved $ref). One ajv per draft serves every
 *     tool (addUsedSchema off: no schema is kept by its $id)
 *   - output: the caller's answer schema (--json-schema): strictSchema, so an unknown keyword (a typo like "requird") is an
 *     error, not a constraint silently dropped; strictTypes and strictTuples off, since they only log hints about legal
 *     schemas. A fresh ajv per schema, so a caller's $id never meets another's
 * .note = formats are annotations in both (as JSON Schema 2020-12 says by default; checking them needs ajv-formats)
 */
const USES = {
  toolInput: {
    options: {
      allErrors: true,
      strict: false,
      addUsedSchema: false,
      validateFormats: false,
      verbose: true,
      logger: false,
      validateSchema: false,
    },
    shared: true,
  },
  output: {
    options: {
      allErrors: true,
      strictSchema: true,
      strictTypes: false,
      strictTuples: false,
      strictRequired: false,
      validateFormats: false,
      logger: false,
    },
    shared: false,
  },
} satisfies Record<string, { options: AjvOptions; shared: boolean }>;
export type JsonSchemaUse = keyof typeof USES;

/**
 * .what = the draft a schema's $schema declares: a tool's always has one, an output schema's is null when bhrain does
 *         not read the draft it names
 * .why = an output schema's $schema must name a draft exactly (2020-12 when absent), so a typo fails as a bad request;
 *        a tool's is read by the draft it mentions, and anything else as draft-07 (what suppliers document), as a
 *        supplier would take the tool
 */
export const readSchemaDraft: {
  (declared: unknown, use: 'toolInput'): JsonSchemaDraft;
  (declared: unknown, use: 'output'): JsonSchemaDraft | null;
} = ((declared: unknown, use: JsonSchemaUse): JsonSchemaDraft | null => {
  if (use === 'toolInput') return JSON_SCHEMA_DRAFTS.find((draft) => String(declared).includes(draft.tag)) ?? JSON_SCHEMA_DRAFTS[2];
  if (declared === undefined) return JSON_SCHEMA_DRAFTS[0];
  const uri = String(declared).replace(/#$/, '');
  return JSON_SCHEMA_DRAFTS.find((draft) => draft.uris.some((name) => name === uri)) ?? null;
}) as never;

/** .what = the shared ajv of each (use, draft), made on first use */
const shared = new Map<string, Ajv>();

/**
 * .what = the ajv a use reads a draft with: the shared one (made on first use), or a fresh one for a use that shares none
 * .why = the one place ajv is set up: which class reads which draft, and the options each use reads a schema with
 */
const ajvFor = (use: JsonSchemaUse, draft: JsonSchemaDraft): Ajv => {
  const { options, shared: isShared } = USES[use];
  const make = () => new (loadAjv()[draft.Class])(options);
  if (!isShared) return make();
  const key = `${use} ${draft.tag}`;
  let ajv = shared.get(key);
  if (!ajv) shared.set(key, (ajv = make()));
  return ajv;
};

/** .what = a schema compiled by ajv for its use and draft; ajv's own error when it cannot be compiled */
export const compileJsonSchema = (input: { schema: object; draft: JsonSchemaDraft; use: JsonSchemaUse }): ValidateFunction =>
  ajvFor(input.use, input.draft).compile(input.schema);

/**
 * .what = loads ajv and makes the shared tool-input ajv of each draft given, ahead of the first check
 * .why = a new ajv costs ~7 ms: made while a request is out, it is ready when the model's first call is checked
 */
export const preloadToolInputAjv = async (drafts: readonly JsonSchemaDraft[]): Promise<void> => {
  await preloadAjv();
  for (const draft of new Set(drafts)) ajvFor('toolInput', draft);
};
