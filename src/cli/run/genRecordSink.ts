import type { RunRecord } from '../runRecord.js';
import type { RunSink } from './RunSink.js';

/** .what = the run record's part in a run that failed: its unfinished record and temp spill dir removed */
export const genRecordSink = (record: RunRecord): RunSink => ({ name: 'run record', onFailure: () => record.dispose() });
