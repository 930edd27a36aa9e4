// the public API of rhachet-roles-bhrain, and nothing else

// brain contracts (rhachet-compatible shapes)
export type { BrainExchange } from './contract/BrainExchange.js';
export { genBrainExchange, hashBrainExchange } from './contract/BrainExchange.js';
export type { BrainEpisode } from './contract/BrainEpisode.js';
export { genBrainEpisode, hashBrainEpisode, appendBrainExchange } from './contract/BrainEpisode.js';
export type { BrainSeries } from './contract/BrainSeries.js';
export { genBrainSeries, hashBrainSeries, getCurrentEpisode } from './contract/BrainSeries.js';
export {
  BRAIN_REF_SCHEMA_VERSION,
  serializeBrainEpisode,
  serializeBrainSeries,
  parseBrainEpisode,
  parseBrainSeries,
} from './contract/serializeBrainRef.js';
export { asPlaintextExchange, asPlaintextEpisode, asPlaintextSeries } from './contract/asPlaintext.js';
export { assertBrainEpisode, assertBrainSeries } from './contract/assertBrainRef.js';
export type {
  BrainOutput,
  BrainOutputMetrics,
  BrainTokens,
  BrainCash,
  BrainDuration,
} from './contract/BrainOutput.js';
export type {
  BrainAtom,
  BrainAtomSpec,
  BrainAtomGenerateInput,
  BrainAtomGeneration,
  BrainModelPrice,
  BrainSupplier,
} from './contract/BrainAtom.js';
export type {
  BrainMessage,
  BrainSystemMessage,
  BrainUserMessage,
  BrainAssistantMessage,
  BrainToolMessage,
  BrainToolCall,
  BrainToolDefinition,
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
} from './contract/errors.js';

// atoms
export { genBrainAtom, BRAIN_ATOM_SLUGS } from './atoms/genBrainAtom.js';
export { CLAUDE_MODELS, QWEN_MODELS } from './atoms/models.js';
