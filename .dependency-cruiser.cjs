// the layers of src/, lowest first; each may import only the layers it lists (npm run lint checks it, in npm test)
//   core            brain contracts (exchange, episode, series, errors, the supplier table), continuation (refs, the
//                   store), secret redaction, text and path helpers
//   process         starting a child process: spawnGroup and its bounded capture, signals, host programs
//   providers       the suppliers behind atoms: anthropic/, openai-compatible/, qwen/, openai/, middleware/ for model
//                   quirks, structured/ (the structured-output turn, JSON Schema), transport/ (the lean node:http fetch)
//   rhachet/contract  what rhachet's shapes are, known below the layers that must refuse or read them
//   sandbox         running a command confined: bwrap arguments, the seccomp filter, the kept sandbox, the domain proxy
//   shell-analysis  reading a bash command before it runs (tree-sitter-bash)
//   agent           bhrain.struct.v1: config, session, tool contract, toolboxes, memory, permission, subagents, repl
//   drivers         the Claude Code CLI as a BrainCli
//   rhachet         the brains in rhachet's shapes
//   roles           the rhachet role's files (readme, briefs, skills) and where they are
//   cli             the bhrain and rhachet skill commands: settings, exit codes, outputs, start-up wiring
//   index           src/index.ts, the public API: it may import any layer but cli, and nothing imports it
const LAYERS = [
  { name: 'core', path: '^src/core/', may: [] },
  { name: 'process', path: '^src/process/', may: ['core'] },
  { name: 'providers', path: '^src/providers/', may: ['core', 'rhachet/contract'] },
  { name: 'rhachet/contract', path: '^src/rhachet/contract/', may: ['core'] },
  { name: 'sandbox', path: '^src/sandbox/', may: ['core', 'process'] },
  { name: 'shell-analysis', path: '^src/shell-analysis/', may: ['core'] },
  { name: 'agent', path: '^src/agent/', may: ['core', 'process', 'providers', 'rhachet/contract', 'sandbox', 'shell-analysis'] },
  { name: 'drivers', path: '^src/drivers/', may: ['core', 'process', 'providers', 'sandbox'] },
  { name: 'rhachet', path: '^src/rhachet/(?!contract/)', may: ['core', 'providers', 'rhachet/contract', 'agent'] },
  { name: 'roles', path: '^src/roles/', may: ['core'] },
  {
    name: 'cli',
    path: '^src/cli/',
    may: ['core', 'process', 'providers', 'rhachet/contract', 'sandbox', 'shell-analysis', 'agent', 'drivers', 'rhachet', 'roles'],
  },
  {
    name: 'index',
    path: '^src/index\\.ts$',
    may: ['core', 'process', 'providers', 'rhachet/contract', 'sandbox', 'shell-analysis', 'agent', 'drivers', 'rhachet', 'roles'],
  },
];
const pathOf = (name) => LAYERS.find((layer) => layer.name === name).path;

module.exports = {
  forbidden: [
    { name: 'no-circular', severity: 'error', comment: 'an import circle', from: {}, to: { circular: true } },
    ...LAYERS.map((layer) => ({
      name: `layer-${layer.name}`,
      severity: 'error',
      comment: `src/${layer.name}/ may import only ${layer.may.length ? layer.may.map((name) => `src/${name}/`).join(', ') : 'itself'}`,
      from: { path: layer.path },
      to: { path: '^src/', pathNot: [layer.path, ...layer.may.map(pathOf)] },
    })),
    {
      name: 'every-file-in-a-layer',
      severity: 'error',
      comment: 'every module of src/ belongs to a layer, so no file is outside the rules',
      from: {},
      to: { path: '^src/', pathNot: LAYERS.map((layer) => layer.path) },
    },
    {
      name: 'vendor-sdk-in-its-provider',
      severity: 'error',
      comment: 'a vendor SDK is imported only by its provider folder',
      from: { path: '^src/', pathNot: '^src/providers/anthropic/' },
      to: { path: 'node_modules/@anthropic-ai/sdk' },
    },
    {
      name: 'openai-sdk-in-its-provider',
      severity: 'error',
      comment: 'a vendor SDK is imported only by its provider folder',
      from: { path: '^src/', pathNot: '^src/providers/openai-compatible/' },
      to: { path: 'node_modules/openai' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    // tests may import across layers: they prove a layer through the ones above it
    exclude: { path: '\\.test(-d)?\\.ts$' },
  },
};
