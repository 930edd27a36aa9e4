import { spawn } from 'node:child_process';
import { once } from 'node:events';

import { describe, expect, it } from 'vitest';

const BUILT = new URL('../../dist/cli/onStopSignals.js', import.meta.url).href;

/** .what = a process that stops on its first signal by saying so and then hanging, as a stop that takes long would */
const startStoppingSlowly = () =>
  spawn(
    process.execPath,
    [
      '--input-type=module',
      '-e',
      `const { onStopSignals } = await import(${JSON.stringify(BUILT)});
       onStopSignals((signal) => console.log('stopping on ' + signal));
       setInterval(() => {}, 1000);
       console.log('ready');`,
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );

/** .what = resolves once the child has written a line containing `text` */
const untilLine = (child: ReturnType<typeof startStoppingSlowly>, text: string) =>
  new Promise<void>((done) => {
    let out = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk;
      if (out.includes(text)) done();
    });
  });

describe('onStopSignals', () => {
  it.each(['SIGINT', 'SIGTERM'] as const)('stops on a first %s, and exits at once with 130 on a second', async (signal) => {
    const child = startStoppingSlowly();
    await untilLine(child, 'ready');
    const stopping = untilLine(child, `stopping on ${signal}`);
    child.kill(signal);
    await stopping;
    expect(child.exitCode).toBeNull();
    child.kill(signal);
    const [code] = await once(child, 'exit');
    expect(code).toBe(130);
  });
});
