// the layers of src/, lowest first, and the imports they may make; `npm test` checks them (npm run lint)
//   core            contract (exchange, episode, series, errors) and continuation (refs, store), secret redaction
//   providers       the suppliers behind atoms: anthropic/, openai-compatible/, middleware/ for model quirks
//   sandbox         running a command confined: bwrap arguments, the kept sandbox, process groups, the domain proxy
//   shell-analysis  reading a bash command before it runs (tree-sitter-bash)
//   agent           bhrain.struct.v1: config, session, tool contract, tools, memory, permission, subagents, repl
//   drivers         the Claude Code CLI as a BrainCli
//   rhachet         the brains rhachet calls
//   cli             the bhrain and rhachet skill commands: settings, exit codes, start-up wiring
const LAYERS = {
  core: [],
  providers: ['core'],
  sandbox: ['core'],
  'shell-analysis': ['core'],
  agent: ['core', 'providers', 'sandbox', 'shell-analysis'],
  drivers: ['core', 'providers', 'sandbox'],
  rhachet: ['core', 'providers', 'agent'],
  cli: ['core', 'providers', 'sandbox', 'shell-analysis', 'agent', 'drivers', 'rhachet'],
};

module.exports = {
  forbidden: [
    { name: 'no-circular', severity: 'error', comment: 'an import circle', from: {}, to: { circular: true } },
    ...Object.entries(LAYERS).map(([layer, allowed]) => ({
      name: `layer-${layer}`,
      severity: 'error',
      comment: `src/${layer}/ may import only ${allowed.length ? allowed.map((name) => `src/${name}/`).join(', ') : 'itself'}`,
      from: { path: `^src/${layer}/` },
      to: { path: '^src/', pathNot: [`^src/${layer}/`, ...allowed.map((name) => `^src/${name}/`)] },
    })),
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
