/**
 * .what = one checkpoint: the files as they were before the run's first change (turn 0) or after a turn that changed
 *         some, by the store's hash, with what the turn created, changed and deleted (null for turn 0)
 */
export interface BhrainCheckpoint {
  turn: number;
  hash: string;
  files: { created: string[]; changed: string[]; deleted: string[]; omitted: number } | null;
  takenAt: string;
}

/**
 * .what = what records the files a session may change, so they can be restored (docs/continuation.md#rewind): the state
 *         before the session's first turn that may change files, and after each such turn that did
 * .why = `brain.invoke(input, { checkpointer })`: the session calls it at its turn boundaries and never knows the store;
 *        the CLI's (genGitCheckpointer) is the default for `act`. A checkpointer that fails says so in `failure` and the
 *        session goes on: a run must never cost more than its checkpoints
 */
export interface BhrainCheckpointer {
  /** before the calls of a turn that may change files (write, edit, bash, a tool of unknown effect, a subagent); the
   *  first call records the state before any change, later calls do nothing */
  beforeChange: () => Promise<void>;
  /** after such a turn's calls: a new checkpoint when the files changed. The session does not wait for it before its
   *  next request, only before the next call runs and before it ends: it is taken while the model answers */
  afterTurn: (input: { turn: number }) => Promise<void>;
}
