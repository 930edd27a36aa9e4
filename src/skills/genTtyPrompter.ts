import { createInterface } from 'node:readline/promises';

import type { BhrainPrompter } from '../archs/bhrain.struct.v1/permission/BhrainPermissionGuard.js';

/**
 * .what = asks the user at the terminal to approve a call: y to allow, anything else denies
 * .why = the prompt decision of a guard needs a person; offered only when stdin and stderr are a TTY
 */
export const genTtyPrompter = (input: { stdin: NodeJS.ReadStream; stderr: NodeJS.WriteStream }): BhrainPrompter => async ({ call, reason }) => {
  const reader = createInterface({ input: input.stdin, output: input.stderr });
  try {
    const answer = await reader.question(`\nallow ${call.name} ${JSON.stringify(call.input)}?\n  (${reason}) [y/N] `);
    return /^y(es)?$/i.test(answer.trim());
  } finally {
    reader.close();
  }
};
