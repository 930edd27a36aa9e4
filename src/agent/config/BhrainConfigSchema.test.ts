// the config's shape check (zod) is installed by the package entry for every library caller; the CLI, which
// checks each value where it reads it, skips it. Each case runs the built package in a fresh node, where no test setup
// has installed the check
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

import { PACKAGE_ROOT, runProcess } from '../../../test/acceptance/runCli.js';
import { tempDir } from '#test-helpers/fs.js';

/** .what = runs an ES module text in a fresh node, in a temp dir with an empty home */
const runModule = async (source: string) => {
  const home = tempDir('bhrain-config-check-');
  return runProcess({
    command: process.execPath,
    args: ['--input-type=module', '-e', source],
    cwd: home,
    env: { PATH: process.env.PATH, HOME: home, BHRAIN_HOME: join(home, '.bhrain'), BHRAIN_CONFIG_DIR: join(home, 'config') },
  });
};

/** .what = a module that configures a bad config through an import and prints what was thrown */
const configureThrough = (from: string) =>
  `import { configureBhrain } from ${JSON.stringify(join(PACKAGE_ROOT, from))};
   try { configureBhrain({ atom: 'claude/haiku', maxIterations: 20000 }); console.log('configured'); }
   catch (error) { console.log(error.constructor.name + ': ' + error.message); }`;

describe('lean start-up: the config check is zod, installed by the package entry, skipped only by the CLI', () => {
  it("then a library caller's bad config fails at configuration time, naming the field", async () => {
    const run = await runModule(configureThrough('dist/index.js'));
    expect(run.stdout).toMatch(
      /^BadRequestError: invalid bhrain\.struct\.v1 config:\n✖ Too big: expected number to be <=10000\n {2}→ at maxIterations\n$/,
    );
  });

  it('then a config that is neither checked nor marked by the CLI is refused: no path runs one unchecked', async () => {
    const run = await runModule(configureThrough('dist/agent/config/configureBhrain.js'));
    expect(run.stdout).toBe(
      'Error: configureBhrain: no config check is installed; import bhrain from the package entry (rhachet-roles-bhrain), which installs it\n',
    );
  });

  it('then the CLI checks --max-iterations where it reads it: above 10000 is exit 2, naming the flag', async () => {
    const run = await runModule(
      `process.argv = [process.execPath, 'bhrain', 'act', '--atom', 'claude/haiku', '--input', 'hi', '--max-iterations', '10001'];
       await import(${JSON.stringify(join(PACKAGE_ROOT, 'bin', 'bhrain'))});`,
    );
    expect({ code: run.code, stderr: run.stderr }).toEqual({
      code: 2,
      stderr: "bhrain act: --max-iterations must be a whole number from 1 to 10000, got '10001'\n",
    });
  });
});
