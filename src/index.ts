// the public API of rhachet-roles-bhrain, and nothing else but the line that gives library callers the config check
import { setBhrainConfigValidator } from './agent/config/configureBhrain.js';
import { validateBhrainConfig } from './agent/config/BhrainConfigSchema.js';

// brain contracts (rhachet-compatible shapes)
export type { BrainExchange, BrainExchangeStep, BrainExchangeToolCall } from './core/contract/BrainExchange.js';
export { genBrainExchange, hashBrainExchange } from './core/contract/BrainExchange.js';
export type { BrainEpisode } from './core/contract/BrainEpisode.js';
export { genBrainEpisode, hashBrainEpisode, appendBrainExchange } from './core/contract/BrainEpisode.js';
export type { BrainSeries } from './core/contract/BrainSeries.js';
export { genBrainSeries, hashBrainSeries, getCurrentEpisode } from './core/contract/BrainSeries.js';
export { BRAIN_REF_SCHEMA_VERSION, serializeBrainEpisode, serializeBrainSeries } from './core/contract/serializeBrainRef.js';
export { parseBrainEpisode, parseBrainSeries, parseBrainRef, type ParsedBrainRef } from './core/contract/parseBrainRef.js';
export { asPlaintextExchange, asPlaintextEpisode, asPlaintextSeries, asPlaintextSteps } from './core/contract/asPlaintext.js';
export { assertBrainEpisode, assertBrainSeries } from './core/contract/assertBrainRef.js';
export type { BrainOutput, BrainOutputMetrics, BrainTokens, BrainCash, BrainDuration } from './core/contract/BrainOutput.js';
export type {
  BrainAtom,
  BrainAtomSpec,
  BrainAtomGenerateInput,
  BrainAtomGeneration,
  BrainModelPrice,
  BrainSupplier,
  BrainStopReason,
  BrainThinking,
} from './core/contract/BrainAtom.js';
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
} from './core/contract/BrainMessage.js';
export type { BrainContext, BrainLog, BrainCreds, BrainRetryPolicy } from './core/contract/BrainContext.js';
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
} from './core/contract/errors.js';

// atoms
export { genBrainAtom, BRAIN_ATOM_SLUGS } from './providers/genBrainAtom.js';
export { CLAUDE_MODELS, QWEN_MODELS } from './providers/models.js';
// the fetch the CLI gives the SDKs (node:http, no undici): a library caller opts in with context.fetch
export { nodeHttpFetch } from './providers/transport/nodeHttpFetch.js';

// bhrain.struct.v1: the agentic loop, its toolboxes, permission guards and memory managers
export { genBhrain, invoke as invokeBhrain, Bhrain } from './agent/genBhrain.js';
export { hashBhrainConfig } from './agent/config/BhrainConfig.js';
export { configureBhrain } from './agent/config/configureBhrain.js';
export { genToolset, type BhrainToolsetAccess } from './agent/toolboxes/genToolset.js';
export { validateBhrainConfig } from './agent/config/BhrainConfigSchema.js';
// the library's one piece of wiring: every config a library caller builds gets the shape check (zod); the CLI, which
// checks its flags and settings where it reads them, never loads this entry and marks its config (CONFIG_CHECKED_BY_CALLER)
setBhrainConfigValidator(validateBhrainConfig);
export type { BhrainConfig, BhrainConfigResolved, BhrainLimits } from './agent/config/BhrainConfig.js';
export type { BhrainContext } from './agent/BhrainContext.js';
// checkpoints: `brain.invoke(input, { checkpointer })` records the files a session changes (docs/library.md#checkpoints)
export type { BhrainCheckpoint, BhrainCheckpointer } from './agent/checkpoint/BhrainCheckpointer.js';
export { genGitCheckpointer, type GitCheckpointer, type GitCheckpointerInput } from './agent/checkpoint/genGitCheckpointer.js';
export { CheckpointStoreError, locateCheckpointStore } from './agent/checkpoint/checkpointStore.js';
export { applyRewind, planRewind, type RewindPlan } from './agent/checkpoint/rewindCheckpoints.js';
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
  BhrainSubagent,
} from './agent/BhrainSessionResult.js';
// docs/design/loop.md#iteration: BhrainLoop: iterate (one loop cycle over a session's state) and terminate; runSession is iterate in a loop
export { BhrainLoop } from './agent/session/BhrainLoop.js';
export type { BhrainLoopIteration } from './agent/session/iterate.js';
export type { NextStep, SessionStop, TurnNote } from './agent/session/resolveTurn.js';
export type { SessionState, SessionLineage } from './agent/session/SessionState.js';
export { BUILTIN_SUBAGENT_TYPES } from './agent/subagents/BhrainSubagentDefinition.js';
export type {
  BhrainSubagentDefinition,
  BhrainSubagentsConfig,
  BhrainBuiltinSubagentType,
} from './agent/subagents/BhrainSubagentDefinition.js';
export type { BhrainSpend, BhrainBudgetReached } from './agent/session/checkBudget.js';
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
  BhrainHookStartedEvent,
  BhrainHookCompletedEvent,
  BhrainHookDecision,
} from './agent/events.js';
export type { BhrainHook, BhrainHooks, BhrainHookInput, BhrainHookOutput, BhrainHookEventName } from './agent/hooks/BhrainHook.js';
export type { BhrainToolBox } from './agent/tool/BhrainToolBox.js';
// docs/design/tools.md#toolboxes: BhrainTool.define is defineTool, BhrainTool.execute runs one call through a box, mergeBoxes merges definitions
export { BhrainTool } from './agent/tool/BhrainTool.js';
export { defineTool, BHRAIN_TOOL_EFFECTS } from './agent/tool/defineTool.js';
export type {
  BhrainToolEffect,
  BhrainToolPath,
  BhrainToolSpec,
  BhrainToolOutput,
  BhrainToolResult,
  BhrainToolContext,
  BhrainToolExecuteContext,
  BhrainToolInputSchema,
  BhrainSpawn,
  BhrainSpawnRequest,
  BhrainSpawned,
} from './agent/tool/defineTool.js';
export { toolBoxOf } from './agent/tool/executeTool.js';
export { pickTools, withEffect } from './agent/tool/pickTools.js';
export { BhrainToolError, BhrainToolFatalError } from './agent/tool/BhrainToolError.js';
export { genFilesToolBox } from './agent/toolboxes/files/genFilesToolBox.js';
export { genBashToolBox } from './agent/toolboxes/bash/genBashToolBox.js';
export { BASH_SANDBOX_MODES } from './sandbox/BashSandbox.js';
export type { BashSandbox, BashSandboxMode } from './sandbox/BashSandbox.js';
export { startDomainProxy } from './sandbox/network/startDomainProxy.js';
export type { DomainProxy, HostLookup, NetworkAudit, NetworkHost } from './sandbox/network/startDomainProxy.js';
export { genMaskedCredentials } from './sandbox/network/genMaskedCredentials.js';
export type { EnvMask, MaskedCredential } from './sandbox/network/genMaskedCredentials.js';
export { DEFAULT_DENY_READ } from './sandbox/resolveHiddenPaths.js';
export type { ReadDenial } from './sandbox/resolveHiddenPaths.js';
export { genWebsearchToolBox } from './agent/toolboxes/websearch/genWebsearchToolBox.js';
export { genMcpToolBox, McpServerStartError, effectOfMcpTool } from './agent/toolboxes/mcp/genMcpToolBox.js';
export type { McpServerConfig, McpToolBox } from './agent/toolboxes/mcp/genMcpToolBox.js';
export { attachMcpToolBox } from './agent/toolboxes/mcp/attachMcpToolBox.js';
export type {
  BhrainPermissionGuard,
  BhrainPermissionCheck,
  BhrainPermissionDecision,
  BhrainPrompter,
} from './agent/permission/BhrainPermissionGuard.js';
export { allowAll, readOnly, promptForWrites } from './agent/permission/builtinGuards.js';
// docs/design/loop.md#permission: BhrainPermission.check (a guard's verdict, failing closed) and promptUser (the context's prompter)
export { BhrainPermission } from './agent/permission/BhrainPermission.js';
export { genRulesGuard } from './agent/permission/genRulesGuard.js';
export type { BhrainPermissionRules } from './agent/permission/genRulesGuard.js';
export type { BhrainMemoryManager, BhrainMemoryContext, BhrainCompactionResult } from './agent/memory/BhrainMemoryManager.js';
export { genSummarizeOnLimit } from './agent/memory/genSummarizeOnLimit.js';
export { genTruncate } from './agent/memory/genTruncate.js';
// docs/design/loop.md#memory: BhrainMemory: compact, summarize, truncate, externalize (the operations the builtin managers are made of)
export { BhrainMemory } from './agent/memory/BhrainMemory.js';
export type { BhrainMemoryExternalRef } from './agent/memory/BhrainMemory.js';
export { estimateTokens, estimateMessagesTokens } from './core/contract/tokens.js';
export {
  loadProjectInstructions,
  PROJECT_INSTRUCTION_FILE_NAMES,
  DEFAULT_PROJECT_INSTRUCTIONS_MAX_BYTES,
} from './agent/instructions/loadProjectInstructions.js';
export type { ProjectInstructions, ProjectInstructionFile } from './agent/instructions/loadProjectInstructions.js';
// Agent Skills (SKILL.md) and subagent types from agent files (.bhrain/agents, .claude/agents), found as the CLI finds them
export { loadAgentSkills } from './agent/agent-skills/loadAgentSkills.js';
export type { BhrainAgentSkill } from './agent/agent-skills/BhrainAgentSkill.js';
/** @deprecated the name from before Agent Skills were named so in code: use BhrainAgentSkill */
export type { BhrainAgentSkill as BhrainSkill } from './agent/agent-skills/BhrainAgentSkill.js';
export type { AgentSkills, FoundSkill } from './agent/agent-skills/readAgentSkills.js';
export { loadAgentFiles } from './agent/subagents/loadAgentFiles.js';
export type { AgentFiles, FoundAgentType } from './agent/subagents/readAgentFiles.js';
export type { FoundAgentFile } from './agent/instructions/findAgentFiles.js';
export { readGitStatus } from './agent/git/readGitStatus.js';
export type { BhrainGitStatus } from './agent/git/readGitStatus.js';

// continuation across processes, repls, and the rhachet registry
export {
  genBrainRefStore,
  genLocalRefBackend,
  openBrainRefStore,
  getBhrainHome,
  RefStoreReadError,
  RefStoreWriteError,
} from './core/continuation/genBrainRefStore.js';
export type { BrainRefBackend, BrainRefKind, BrainRefStore } from './core/continuation/genBrainRefStore.js';
// the shared store: @aws-sdk/client-s3 is loaded on its first call, never by importing this package
export { genS3RefBackend, parseS3StoreUrl, S3_STORE_RETRY } from './core/continuation/genS3RefBackend.js';
export type { S3StoreRetry, S3StoreSpec } from './core/continuation/genS3RefBackend.js';
export type { BrainCompactionMarks } from './core/continuation/compactedEpisodes.js';
export { genBrainRepl } from './agent/repl/genBrainRepl.js';
export type { BrainRepl, BrainReplOn, BrainReplOutput, BrainReplSchema } from './agent/repl/genBrainRepl.js';
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
} from './drivers/claude-code/genBrainCli.js';
export type { BrainCli } from './drivers/claude-code/genBrainCli.js';
export type { CliExit } from './drivers/claude-code/CliProcess.js';
