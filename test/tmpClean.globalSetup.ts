import { readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';

import { sweepDeadSpillHolders } from '../src/agent/session/defaultSpillDir.js';

// what the temp dir held when the suite started
let before = new Set<string>();

/** .what = notes what the temp dir holds before any test runs */
export const setup = (): void => {
  before = new Set(readdirSync(tmpdir()));
};

/**
 * .what = fails the run when the tests left anything of theirs (a `bhrain-` name) in the temp dir, naming it
 * .why = each test removes what it makes (tempDir from test/helpers/fs.ts does it when its file ends); a suite that
 *        leaks fills /tmp a little more every run. Only names the suite gives are judged: other programs on the
 *        machine write the temp dir too
 */
export const teardown = (): void => {
  // what a library session's process left when it was killed (a worker stopped by vitest) is removed as the next
  // library process would remove it
  sweepDeadSpillHolders();
  const left = readdirSync(tmpdir()).filter((name) => name.startsWith('bhrain') && !before.has(name));
  if (!left.length) return;
  // a throw here is only logged by vitest ("error during close") and the run still exits 0: the exit code says it
  process.exitCode = 1;
  console.error(
    `tmp: the tests left ${left.length} entries in ${tmpdir()}: ${left.slice(0, 20).join(', ')}${left.length > 20 ? ', …' : ''}. Make temp dirs with tempDir (test/helpers/fs.ts), or remove them in the test`,
  );
};
