// the public API of rhachet-roles-bhrain, and nothing else

// brain contracts (rhachet-compatible shapes)
export type { BrainExchange } from './contract/BrainExchange.js';
export { genBrainExchange, hashBrainExchange } from './contract/BrainExchange.js';
export type { BrainEpisode } from './contract/BrainEpisode.js';
export { genBrainEpisode, hashBrainEpisode, appendBrainExchange } from './contract/BrainEpisode.js';
export type { BrainSeries } from './contract/BrainSeries.js';
export { genBrainSeries, hashBrainSeries, getCurrentEpisode } from './contract/BrainSeries.js';
export { BRAIN_REF_SCHEMA_VERSION, serializeBrainEpisode, serializeBrainSeries } from './contract/serializeBrainRef.js';
export { parseBrainEpisode, parseBrainSeries, parseBrainRef, type ParsedBrainRef } from './contract/parseBrainRef.js';
export { asPlaintextExchange, asPlaintextEpisode, asPlaintextSeries } from './contract/asPlaintext.js';
export { assertBrainEpisode, assertBrainSeries } from './contract/assertBrainRef.js';
export type { BrainOutput, BrainOutputMetrics, BrainTokens, BrainCash, BrainDuration } from './contract/BrainOutput.js';
export type {
  BrainAtom,
  BrainAtomSpec,
  BrainAtomGenerateInput,
  BrainAtomGeneration,
  BrainModelPrice,
  BrainSupplier,
  BrainStopReason,
  BrainThinking,
} from './contract/BrainAtom.js';
export type {
  BrainMessage,
  BrainSystemMessage,
  BrainUserMessage,
  BrainAssistantMessage,
  BrainToolMessage,
  BrainToolCall,
  BrainToolDefinition,
  BrainReasoning,
  BrainReasoningBlock,
  JsonSchema,
  JsonSchemaObject,
} from './contract/BrainMessage.js';
export type { BrainContext, BrainLog, BrainCreds, BrainRetryPolicy } from './contract/BrainContext.js';
export {
  BhrainError,
  BadRequestError,
  ContextOverflowError,
  SupplierError,
  AuthFailedError,
  SupplierUnavailableError,
  SupplierRejectedError,
  OutputInvalidError,
  LoopError,
  ContinuationNotSupportedError,
  EpisodeCompactedError,
  EmptyAnswerError,
  AbortedError,
  RefSchemaVersionError,
} from './contract/errors.js';

// atoms
export { genBrainAtom, BRAIN_ATOM_SLUGS } from './atoms/genBrainAtom.js';
export { CLAUDE_MODELS, QWEN_MODELS } from './atoms/models.js';

// bhrain.struct.v1: the agentic loop, its toolboxes, permission guards and memory managers
export { genBhrain, invoke as invokeBhrain } from './archs/bhrain.struct.v1/genBhrain.js';
export type { Bhrain } from './archs/bhrain.struct.v1/genBhrain.js';
export { configureBhrain, hashBhrainConfig } from './archs/bhrain.struct.v1/BhrainConfig.js';
// installs configureBhrain's shape check (zod) for every library caller; the CLI, which checks its flags and settings
// where it reads them, does not load it
export { validateBhrainConfig } from './archs/bhrain.struct.v1/BhrainConfigSchema.js';
export type { BhrainConfig, BhrainConfigResolved, BhrainLimits } from './archs/bhrain.struct.v1/BhrainConfig.js';
export type { BhrainContext } from './archs/bhrain.struct.v1/BhrainContext.js';
export type {
  BhrainSessionResult,
  BhrainTermination,
  BhrainToolCallCounts,
  BhrainToolCallDenial,
  BhrainDenialSource,
  BhrainSession,
  BhrainSessionStatus,
  BhrainSessionTokenUsage,
  BhrainSubagentRecord,
} from './archs/bhrain.struct.v1/BhrainSessionResult.js';
export { BUILTIN_SUBAGENT_TYPES } from './archs/bhrain.struct.v1/subagents/BhrainSubagentDefinition.js';
export type {
  BhrainSubagentDefinition,
  BhrainSubagentsConfig,
  BhrainBuiltinSubagentType,
} from './archs/bhrain.struct.v1/subagents/BhrainSubagentDefinition.js';
export type { BhrainSpend, BhrainBudgetReached } from './archs/bhrain.struct.v1/loop/checkBudget.js';
export type {
  BhrainEvent,
  BhrainEventListener,
  BhrainSessionStartedEvent,
  BhrainIterationCompletedEvent,
  BhrainToolCallStartedEvent,
  BhrainToolExecutionCompletedEvent,
  BhrainCompactedEvent,
  BhrainRequestRetriedEvent,
  BhrainSessionCompletedEvent,
  BhrainSubagentStartedEvent,
  BhrainSubagentCompletedEvent,
  BhrainSubagentMetrics,
} from './archs/bhrain.struct.v1/events.js';
export type { BhrainToolBox, BhrainToolResult, BhrainToolContext } from './archs/bhrain.struct.v1/tools/BhrainToolBox.js';
export { genFilesToolBox } from './archs/bhrain.struct.v1/tools/files/genFilesToolBox.js';
export { genBashToolBox } from './archs/bhrain.struct.v1/tools/bash/genBashToolBox.js';
export { BASH_SANDBOX_MODES } from './archs/bhrain.struct.v1/tools/bash/BashSandbox.js';
export type { BashSandbox, BashSandboxMode } from './archs/bhrain.struct.v1/tools/bash/BashSandbox.js';
export { startDomainProxy } from './archs/bhrain.struct.v1/tools/bash/network/startDomainProxy.js';
export type { DomainProxy, HostLookup, NetworkAudit, NetworkHost } from './archs/bhrain.struct.v1/tools/bash/network/startDomainProxy.js';
export { DEFAULT_DENY_READ } from './archs/bhrain.struct.v1/tools/resolveHiddenPaths.js';
export type { ReadDenial } from './archs/bhrain.struct.v1/tools/resolveHiddenPaths.js';
export { genWebsearchToolBox } from './archs/bhrain.struct.v1/tools/websearch/genWebsearchToolBox.js';
export { genMcpToolBox, McpServerStartError } from './archs/bhrain.struct.v1/tools/mcp/genMcpToolBox.js';
export type { McpServerConfig, McpToolBox } from './archs/bhrain.struct.v1/tools/mcp/genMcpToolBox.js';
export { attachMcpToolBox } from './archs/bhrain.struct.v1/tools/mcp/attachMcpToolBox.js';
export type {
  BhrainPermissionGuard,
  BhrainPermissionDecision,
  BhrainPrompter,
} from './archs/bhrain.struct.v1/permission/BhrainPermissionGuard.js';
export { allowAll, readOnly, promptForWrites } from './archs/bhrain.struct.v1/permission/builtinGuards.js';
export { genRulesGuard } from './archs/bhrain.struct.v1/permission/genRulesGuard.js';
export type { BhrainPermissionRules } from './archs/bhrain.struct.v1/permission/genRulesGuard.js';
export type {
  BhrainMemoryManager,
  BhrainMemoryContext,
  BhrainCompactionResult,
} from './archs/bhrain.struct.v1/memory/BhrainMemoryManager.js';
export { genSummarizeOnLimit } from './archs/bhrain.struct.v1/memory/genSummarizeOnLimit.js';
export { genTruncate } from './archs/bhrain.struct.v1/memory/genTruncate.js';
export {
  loadProjectInstructions,
  PROJECT_INSTRUCTION_FILE_NAMES,
  DEFAULT_PROJECT_INSTRUCTIONS_MAX_BYTES,
} from './archs/bhrain.struct.v1/instructions/loadProjectInstructions.js';
export type { ProjectInstructions, ProjectInstructionFile } from './archs/bhrain.struct.v1/instructions/loadProjectInstructions.js';
export { readGitStatus } from './archs/bhrain.struct.v1/instructions/readGitStatus.js';
export type { BhrainGitStatus } from './archs/bhrain.struct.v1/instructions/readGitStatus.js';

// continuation across processes, repls, and the rhachet registry
export { genBrainRefStore, getBhrainHome } from './continuation/genBrainRefStore.js';
export type { BrainRefStore } from './continuation/genBrainRefStore.js';
export { genBrainRepl } from './repls/genBrainRepl.js';
export type { BrainRepl, BrainReplOn, BrainReplOutput, BrainReplSchema } from './repls/genBrainRepl.js';
export { getRoleRegistry } from './roles/getRoleRegistry.js';
export type { RoleRegistryDeclaration, RoleDeclaration } from './roles/getRoleRegistry.js';

// rhachet: our brains in rhachet's shapes (found by the getBrainAtomsBy* / getBrainReplsBy* export names), and refs in
// rhachet's hash rule both ways
export { getBrainAtomsByBhrain, getBrainReplsByBhrain } from './rhachet/getBrainsByBhrain.js';
export { genRhachetBrainAtom } from './rhachet/genRhachetBrainAtom.js';
export { genRhachetBrainRepl } from './rhachet/genRhachetBrainRepl.js';
export { asRhachetEpisode, asRhachetSeries } from './rhachet/asRhachetOutput.js';
export { asBhrainEpisode, asBhrainSeries } from './rhachet/readRhachetCall.js';
export type {
  RhachetBrainAtom,
  RhachetBrainRepl,
  RhachetBrainAtomAsk,
  RhachetBrainReplCall,
  RhachetBrainContext,
  RhachetSuppliesCreds,
  RhachetBrainOutput,
  RhachetBrainOutputMetrics,
  RhachetBrainSizes,
  RhachetBrainExchange,
  RhachetBrainEpisode,
  RhachetBrainSeries,
  RhachetBrainPlugs,
  RhachetPlugToolDefinition,
  RhachetPlugToolInvocation,
  RhachetPlugToolExecution,
  RhachetBrief,
  RhachetSchema,
  RhachetBrainSpec,
  IsoPrice,
  IsoDuration,
} from './rhachet/RhachetBrain.js';

// BrainCli: drive the real Claude Code CLI
export {
  genBrainCli,
  BrainCliError,
  BrainCliTimeoutError,
  BRAIN_CLI_CALL_TIMEOUT_MS,
  CLAUDE_READ_TOOLS,
  CLAUDE_WRITE_TOOLS,
} from './clis/claude/genBrainCli.js';
export type { BrainCli } from './clis/claude/genBrainCli.js';
export type { CliExit } from './clis/claude/CliProcess.js';
