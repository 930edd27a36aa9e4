// the action's outputs (action.yml): reads bhrain's --output json object and appends each output to $GITHUB_OUTPUT, in
// the `name<<DELIMITER` form with a random delimiter that is checked not to occur in the value, so a multi-line answer,
// or one holding `EOF` lines or `name=value` text, is one output and never forges another.
//   node outputs.mjs --json-file <file> --exit-code <n> --structured <true|false>
//   node outputs.mjs --usage-error <message> --exit-code <n>      (the action's own bad input: no run happened)
// exits 1 (after writing exit-code) when the JSON cannot be read, else 0
import { randomBytes } from 'node:crypto';
import { appendFileSync, readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

const { values: opts } = parseArgs({
  options: {
    'json-file': { type: 'string' },
    'exit-code': { type: 'string' },
    structured: { type: 'string', default: 'false' },
    'usage-error': { type: 'string' },
  },
});

const outputFile = process.env.GITHUB_OUTPUT;
if (!outputFile) {
  console.error('::error title=bhrain::GITHUB_OUTPUT is not set: this script runs as a step of the bhrain action');
  process.exit(1);
}

/** .what = one output, in the delimited form whatever its text */
const setOutput = (name, value) => {
  const text = value === null || value === undefined ? '' : String(value);
  let delimiter;
  do delimiter = `ghadelimiter_${randomBytes(16).toString('hex')}`;
  while (text.includes(delimiter));
  appendFileSync(outputFile, `${name}<<${delimiter}\n${text}\n${delimiter}\n`);
};

setOutput('exit-code', opts['exit-code']);

if (opts['usage-error'] !== undefined) {
  setOutput('termination', 'usage');
  setOutput(
    'json',
    JSON.stringify({
      type: 'result',
      termination: 'usage',
      exitCode: Number(opts['exit-code']),
      error: { code: 'ActionInputError', message: opts['usage-error'] },
    }),
  );
  process.exit(0);
}

let result;
try {
  result = JSON.parse(readFileSync(opts['json-file'], 'utf8'));
} catch (error) {
  console.error(`::error title=bhrain::bhrain's JSON result could not be read (${error.message}); its exit code was ${opts['exit-code']}`);
  process.exit(1);
}

const answer = result.output;
setOutput('result', typeof answer === 'string' || answer === null ? answer : JSON.stringify(answer));
setOutput('termination', result.termination);
setOutput('cost-usd', result.metrics?.cost?.usd);
setOutput('series', result.series?.hash);
setOutput('episode', result.episode?.hash);
setOutput('record-dir', result.record);
setOutput('structured-output', opts.structured === 'true' && answer !== null && answer !== undefined ? JSON.stringify(answer) : '');
setOutput('json', JSON.stringify(result));
const cost = result.metrics?.cost?.usd;
console.log(`bhrain: ${result.termination}, exit ${result.exitCode}${typeof cost === 'number' ? `, $${cost.toFixed(4)}` : ''}`);
if (result.error) console.log(`bhrain: ${result.error.code}: ${result.error.message}`);
