import { createInterface } from 'node:readline/promises';

import type { BhrainPromptAnswer, BhrainPrompter } from '../agent/permission/BhrainPermissionGuard.js';
import { redactDeep } from '../core/secrets/redactDeep.js';

/**
 * .what = reads a typed answer: y/yes allows once, a/always allows and remembers (only when something can be
 *         remembered), anything else denies
 * .why = fail closed: an unclear answer, or 'a' where nothing was offered to remember, is a no
 */
export const readPromptAnswer = (input: { typed: string; canRemember: boolean }): BhrainPromptAnswer => {
  const typed = input.typed.trim();
  if (/^y(es)?$/i.test(typed)) return true;
  if (input.canRemember && /^a(lways)?$/i.test(typed)) return 'always';
  return false;
};

/**
 * .what = asks the user at the terminal to approve a call: y allows once, a allows and stops asking for the patterns
 *         shown (for this session), anything else denies
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
  ({ call, reason, remember }) =>
    input.pause(async () => {
      const reader = createInterface({ input: input.stdin, output: input.stderr });
      const canRemember = (remember ?? []).length > 0;
      const choices = canRemember
        ? `\n  y = yes, once; a = yes, and don't ask again this session for ${remember.map((pattern) => input.redact(pattern)).join(', ')}; n = no [y/a/N] `
        : ' [y/N] ';
      try {
        const typed = await reader.question(
          `\nallow ${call.name} ${JSON.stringify(redactDeep(call.input, input.redact))}?\n  (${reason})${choices}`,
        );
        return readPromptAnswer({ typed, canRemember });
      } finally {
        reader.close();
      }
    });
