import { createInterface } from 'node:readline/promises';

import type { BhrainPrompter } from '../archs/bhrain.struct.v1/permission/BhrainPermissionGuard.js';
import { redactDeep } from '../security/redactDeep.js';

/**
 * .what = asks the user at the terminal to approve a call: y to allow, anything else denies
 * .why = the prompt decision of a guard needs a person; offered only when stdin and stderr are a TTY; secrets in the
 *        call's input are shown redacted, as everywhere else; the progress spinner pauses while the question waits
 */
export const genTtyPrompter =
  (input: {
    stdin: NodeJS.ReadStream;
    stderr: NodeJS.WriteStream;
    redact: (text: string) => string;
    pause: <T>(during: () => Promise<T>) => Promise<T>;
  }): BhrainPrompter =>
  ({ call, reason }) =>
    input.pause(async () => {
      const reader = createInterface({ input: input.stdin, output: input.stderr });
      try {
        const answer = await reader.question(`\nallow ${call.name} ${JSON.stringify(redactDeep(call.input, input.redact))}?\n  (${reason}) [y/N] `);
        return /^y(es)?$/i.test(answer.trim());
      } finally {
        reader.close();
      }
    });
