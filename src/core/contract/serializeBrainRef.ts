import type { BrainEpisode } from './BrainEpisode.js';
import type { BrainSeries } from './BrainSeries.js';

/**
 * .what = the version of the persisted shape of episodes and series, and of the rule their hashes follow
 * .why = refs outlive processes: a reader migrates the versions it knows and refuses the ones it does not, instead of
 *        misreading them
 *
 * .changelog
 *   1 = { schemaVersion, kind, hash, exid, exchanges } and { schemaVersion, kind, hash, exid, episodes, summaries };
 *       exchange hash = sha256(input + "\n" + output), episode and series hash = sha256(child hashes joined by "\n").
 *       Ambiguous: text moved across the "\n" between input and output kept every hash; exid and summaries were not hashed
 *   2 = the same shape; every hash is sha256 of a JSON array of all the literal's fields (see sha256hexOfFields):
 *       exchange ["BrainExchange", input, output, exid], episode ["BrainEpisode", exid, [exchange hashes]],
 *       series ["BrainSeries", exid, [episode hashes], [summaries]]. A version 1 ref is read by verifying it under the
 *       version 1 rule, then rehashing it under this one, with a notice through the log
 *   3 = an exchange may hold `steps`: the model's tool-calling responses of its turn, each { said, calls: [{ name,
 *       input, result, isError }] }, results as the model read them; its hash then has a fifth field, [[said, [[name,
 *       input JSON, result, "error" | "ok"]]]]. An exchange without steps is written and hashed as in version 2, so a
 *       version 2 ref is read as is, with the same hashes and no notice
 */
export const BRAIN_REF_SCHEMA_VERSION = 3;

/** .what = plain JSON for an episode, with its schema version, for persistence and transfer; `indent` for a file people read */
export const serializeBrainEpisode = (episode: BrainEpisode, options: { indent?: number } = {}): string =>
  JSON.stringify({ schemaVersion: BRAIN_REF_SCHEMA_VERSION, kind: 'BrainEpisode', ...episode }, null, options.indent);

/** .what = plain JSON for a series, with its schema version, for persistence and transfer; `indent` for a file people read */
export const serializeBrainSeries = (series: BrainSeries, options: { indent?: number } = {}): string =>
  JSON.stringify({ schemaVersion: BRAIN_REF_SCHEMA_VERSION, kind: 'BrainSeries', ...series }, null, options.indent);
