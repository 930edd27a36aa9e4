import { describe, expect, it } from 'vitest';

import { BoundedCapture } from './BoundedCapture.js';
import { CaptureBudget } from './CaptureBudget.js';

describe('tool execution (bash): large output is bounded', () => {
  it('keeps everything while under the budget, whatever the chunking', () => {
    const capture = new BoundedCapture({ maxBytes: 100 });
    for (const piece of ['hello ', 'wor', 'ld']) capture.write(Buffer.from(piece));
    expect(capture.read()).toEqual({ head: 'hello world', tail: '', droppedBytes: 0 });
    expect(capture.totalBytes).toBe(11);
  });

  it('keeps the exact first and last bytes when chunks of every size wrap the tail ring', () => {
    const text = Array.from({ length: 5_000 }, (_, index) => `line ${index}\n`).join('');
    for (const chunkBytes of [1, 7, 49, 50, 51, 333, 10_000]) {
      const capture = new BoundedCapture({ maxBytes: 100 });
      for (let start = 0; start < text.length; start += chunkBytes) capture.write(Buffer.from(text.slice(start, start + chunkBytes)));
      expect(capture.read()).toEqual({ head: text.slice(0, 50), tail: text.slice(-50), droppedBytes: text.length - 100 });
    }
  });

  it('cuts at UTF-8 character boundaries around the dropped middle', () => {
    const capture = new BoundedCapture({ maxBytes: 10 });
    // 'é' is 2 bytes and '€' is 3: the 5-byte head ends inside a character, and so does the tail's start
    capture.write(Buffer.from('abcd€€€€€€éz'));
    const { head, tail, droppedBytes } = capture.read();
    expect(head).toBe('abcd');
    expect(tail).toBe('éz'); // the last 5 bytes start with the last 2 bytes of a '€'
    expect(droppedBytes).toBe(Buffer.byteLength('abcd€€€€€€éz') - 10);
  });
});

describe('the output buffered across all running calls has a total cap', () => {
  it('given captures sharing a budget, then beyond 64 KB per half they keep only what it grants, and give it back on release', () => {
    const budget = new CaptureBudget(1024 * 1024);
    const big = Buffer.alloc(20 * 1024 * 1024, 'y');
    const captures = Array.from({ length: 4 }, () => new BoundedCapture({ maxBytes: 8 * 1024 * 1024, budget }));
    for (const capture of captures) capture.write(big);
    const keptBytes = captures.map((capture) => capture.totalBytes - capture.droppedBytes);
    // the first takes the whole budget; the others keep their free 64 KB head and 64 KB tail
    expect(keptBytes).toEqual([128 * 1024 + 1024 * 1024, 128 * 1024, 128 * 1024, 128 * 1024]);
    expect(budget.takenBytes).toBe(1024 * 1024);
    for (const capture of captures) {
      const { head, tail } = capture.read();
      expect(head.length + tail.length).toBe(capture.totalBytes - capture.droppedBytes);
      capture.release();
    }
    expect(budget.takenBytes).toBe(0);
    // a capture made after the release gets its full size again
    const later = new BoundedCapture({ maxBytes: 1024 * 1024, budget });
    later.write(big);
    expect(later.totalBytes - later.droppedBytes).toBe(1024 * 1024);
  });
});
