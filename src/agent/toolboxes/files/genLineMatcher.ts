import { Worker } from 'node:worker_threads';

/** .what = one line a regex matched: its 1-based number and its text without the line end */
export interface LineMatch {
  line: number;
  text: string;
}

/**
 * .what = the lines of a text that a regex matches, at most maxMatches + 1; a CR before a line end is dropped first
 * .why = the one place a model's regex runs in the built-in grep; it runs in the worker, which gets it as source text,
 *        so it must use nothing from outside its own body
 */
const matchLines = function (text: string, regex: RegExp, maxMatches: number): LineMatch[] {
  const matches: LineMatch[] = [];
  let line = 1;
  for (let start = 0; start < text.length && matches.length <= maxMatches; line++) {
    const newline = text.indexOf('\n', start);
    const end = newline === -1 ? text.length : newline;
    const content = text.charCodeAt(end - 1) === 13 && end > start ? text.slice(start, end - 1) : text.slice(start, end);
    if (regex.test(content)) matches.push({ line, text: content });
    if (newline === -1) break;
    start = newline + 1;
  }
  return matches;
};

// a CommonJS script (eval workers have require), so the worker needs no file of its own in src/ or dist/; it decodes
// the bytes itself (invalid UTF-8 becomes U+FFFD, as Buffer#toString does; a leading BOM is dropped, as ripgrep does),
// so the main thread only reads files
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const matchLines = ${matchLines.toString()};
const regex = new RegExp(workerData.source, workerData.flags);
const decoder = new TextDecoder('utf-8');
parentPort.on('message', (request) => {
  const text = decoder.decode(request.bytes);
  parentPort.postMessage({ id: request.id, matches: matchLines(text, regex, workerData.maxMatches) });
});
`;

/** .what = a regex running in a worker thread: asked file by file, answered in order, stoppable mid-match */
export interface LineMatcher {
  /** the lines of one file's bytes (UTF-8) that match; answered in the order asked; the bytes are handed over, not copied */
  match: (path: string, bytes: Uint8Array) => Promise<LineMatch[]>;
  /** the file the worker is matching now (the oldest one not yet answered), or undefined when it is idle */
  busyWith: () => string | undefined;
  /** settles with the error when the worker dies on its own (a crash, out of memory) */
  failed: Promise<Error>;
  /** ends the worker at once, even in the middle of a match; what was not answered never is */
  close: () => Promise<void>;
}

/**
 * .what = starts a worker that tests a regex against the lines of the files it is sent
 * .why = a regex such as (a+)+$ can backtrack for hours on one line, and a running regex cannot be interrupted on the
 *        thread that runs it: in a worker the event loop stays free (SIGTERM, the abort signal, the deadline all
 *        work), and worker.terminate() stops the match wherever it is
 */
export const genLineMatcher = (input: { regex: RegExp; maxMatches: number }): LineMatcher => {
  const worker = new Worker(WORKER_SOURCE, {
    eval: true,
    workerData: { source: input.regex.source, flags: input.regex.flags, maxMatches: input.maxMatches },
  });
  const pending = new Map<number, { path: string; resolve: (matches: LineMatch[]) => void }>();
  let nextId = 0;
  let closing = false;
  let reportFailure: (error: Error) => void = () => {};
  const failed = new Promise<Error>((resolve) => (reportFailure = resolve));
  worker.on('message', (reply: { id: number; matches: LineMatch[] }) => {
    pending.get(reply.id)?.resolve(reply.matches);
    pending.delete(reply.id);
  });
  worker.on('error', (error) => reportFailure(error));
  worker.on('exit', (code) => {
    if (!closing) reportFailure(new Error(`the regex worker exited unexpectedly (code ${code})`));
  });
  return {
    match: (path, bytes) =>
      new Promise((resolve) => {
        const id = nextId++;
        pending.set(id, { path, resolve });
        // bytes that own their whole buffer move to the worker without a copy; a view into a shared one is copied
        const owned = bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength && bytes.buffer instanceof ArrayBuffer;
        worker.postMessage({ id, bytes }, owned ? [bytes.buffer as ArrayBuffer] : []);
      }),
    busyWith: () => pending.values().next().value?.path,
    failed,
    close: async () => {
      closing = true;
      await worker.terminate();
    },
  };
};
