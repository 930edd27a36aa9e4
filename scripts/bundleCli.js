// bundles the CLI entries (dist/cli/{main,act,ask}.js, as tsc built them) into dist/bundle/: one file each to start,
// and one chunk per lazy import (the loop, each supplier's SDK, MCP), so a run loads what it uses in a few files instead
// of ~600 modules. The library keeps its unbundled ESM in dist/
import { readFile, rm } from 'node:fs/promises';
import { dirname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

import { build } from 'esbuild';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const dist = join(root, 'dist');
const outdir = join(dist, 'bundle');

// packages that find their own files beside them at run time (a wasm grammar, a native addon): loaded from node_modules
const EXTERNAL = ['web-tree-sitter', 'tree-sitter-bash', '@lydell/node-pty'];

// our modules read files beside them (tool descriptions, package.json, the grammar's path) relative to their own URL: in
// the bundle, import.meta.url is rewritten to the URL the module has in dist/, so those reads find the same files
const keepModuleUrls = {
  name: 'keep-module-urls',
  setup: (bundler) => {
    bundler.onLoad({ filter: /\/dist\/.*\.js$/ }, async ({ path }) => {
      const source = await readFile(path, 'utf8');
      const from = relative(outdir, path).split('\\').join('/');
      return { contents: source.replaceAll('import.meta.url', `new URL(${JSON.stringify(from)}, import.meta.url).href`), loader: 'js' };
    });
  },
};

/**
 * a copy of its own, in the chunks that import it, of what `picks` chooses (an import: its path and its importer): every
 * file the copy imports is copied too, since another suffix makes another module. Code both a copy's users and other
 * chunks import stays apart, so neither chunk makes the other load a shared one
 */
const genCopyPlugin = (name, picks) => ({
  name,
  setup: (bundler) => {
    bundler.onResolve({ filter: /.*/ }, async (args) => {
      // the plain resolution asked for below
      if (args.pluginData?.[`${name}Resolving`]) return undefined;
      const inCopy = args.pluginData?.[name] === true;
      if (!inCopy && !picks(args)) return undefined;
      const found = await bundler.resolve(args.path, {
        kind: args.kind,
        resolveDir: args.resolveDir,
        importer: args.importer,
        pluginData: { [`${name}Resolving`]: true },
      });
      if (found.errors.length) return { errors: found.errors };
      // node's builtins stay imports
      if (found.external) return { path: found.path, external: true };
      return { path: found.path, suffix: `?${name}`, pluginData: { [name]: true } };
    });
    bundler.onLoad({ filter: /.*/ }, async (args) => {
      if (args.pluginData?.[name] !== true) return undefined;
      return { contents: await readFile(args.path, 'utf8'), loader: 'js', resolveDir: dirname(args.path), pluginData: { [name]: true } };
    });
  },
});

// our tools import zod/mini and zod/v4/core on their first call (their input schemas, src/agent/toolboxes/toolInputs.ts):
// that zod is bundled as a copy of its own, apart from the zod other modules import (the MCP SDK's `import { z } from
// 'zod'` keeps every locale and namespace of zod's core alive, ~500 KB). One shared copy would make a run's first tool
// call load all of it (~14 ms); the lean copy is the ~70 KB our tools use, and the other loads only with MCP or a ref
// being read
const LEAN_ZOD = /^zod\/(mini|v4\/core|v4\/mini)$/;
const leanZod = genCopyPlugin('leanZod', (args) => LEAN_ZOD.test(args.path) && args.importer.startsWith(dist + sep));

// telemetry (BHRAIN_TELEMETRY=1, src/cli/telemetry/) gets the OTel packages as a copy of its own: the Anthropic SDK
// imports @opentelemetry/api too, and one shared copy would be a chunk of its own that every claude run loads
const telemetryDir = join(dist, 'cli', 'telemetry') + sep;
const telemetryOtel = genCopyPlugin(
  'telemetryOtel',
  (args) => args.path.startsWith('@opentelemetry/') && args.importer.startsWith(telemetryDir),
);

await rm(outdir, { recursive: true, force: true });
await build({
  // bhrain, and the act and ask entries rhachet runs (src/roles/brain/skills/*.sh)
  entryPoints: { main: join(dist, 'cli', 'main.js'), act: join(dist, 'cli', 'act.js'), ask: join(dist, 'cli', 'ask.js') },
  outdir,
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  external: EXTERNAL,
  plugins: [leanZod, telemetryOtel, keepModuleUrls],
  // Headers, Response, Request and FormData: node loads undici (~40 ms) on the first touch of any of them, which the
  // SDKs make on every request; the bundle uses these in their place (src/providers/transport/leanFetchClasses.ts says how)
  inject: [join(dist, 'providers', 'transport', 'leanFetchClasses.js')],
  // the CJS dependencies bundled into ESM still call require() for node's builtins
  banner: {
    js: "import { createRequire as __bhrainCreateRequire } from 'node:module'; const require = __bhrainCreateRequire(import.meta.url);",
  },
  minifyWhitespace: true,
  minifySyntax: true,
  legalComments: 'none',
  logLevel: 'warning',
});
