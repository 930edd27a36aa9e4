import type { OutputFile } from '../resolveOutputFile.js';

/** .what = the final result written to --output-file; a failure is added to the run's failures and shown, never thrown */
export const writeOutput = async (file: OutputFile, text: string, failures: string[], redact: (text: string) => string): Promise<void> => {
  await file.write(text).catch((error: Error) => {
    failures.push(`--output-file ${file.path} could not be written: ${redact(error.message)}`);
  });
};
