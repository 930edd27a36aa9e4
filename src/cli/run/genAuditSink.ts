import type { RunAuditing } from '../audit/genRunAudit.js';
import type { RunSink } from './RunSink.js';

/** .what = the end-of-run audit's view of the stream: what the session's and its subagents' tools did; stopped on a failure */
export const genAuditSink = (audit: RunAuditing): RunSink => ({
  name: 'audit',
  onEvent: (event, origin) => (origin === 'session' ? audit.onEvent(event) : audit.onSubagentEvent(event)),
  onFailure: () => audit.stop(),
});
