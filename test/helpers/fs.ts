import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterAll } from 'vitest';

const made: string[] = [];
// hooks registered when a test file imports this module belong to that file: its temp dirs go when it ends
afterAll(() => {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/**
 * .what = a new empty directory under the temp dir (or `root`), by its real path (/tmp may be a link), removed when the test
 *         file ends
 * .why = one helper instead of a copy per file, and no test leaves its directories behind in /tmp
 */
export const tempDir = (prefix = 'bhrain-test-', root: string = tmpdir()): string => {
  const dir = realpathSync(mkdtempSync(join(root, prefix)));
  made.push(dir);
  return dir;
};

/** .what = whether a path exists (any kind: file, directory, link to something) */
export const exists = (path: string): Promise<boolean> =>
  stat(path).then(
    () => true,
    () => false,
  );
