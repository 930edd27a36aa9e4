import type { BashStreamText } from './BashStreamText.js';
import type { CaptureBudget } from './CaptureBudget.js';

/** what a capture may always keep per half (head, tail) without asking the shared budget */
const FLOOR_BYTES = 64 * 1024;
/** the head's first size: most commands print a line or two, and a bash call is on every iteration's path */
const FIRST_HEAD_BYTES = 4 * 1024;

/** .what = how much a capture keeps: maxBytes in all, as the head and the tail (default) or the tail alone */
export interface BoundedCaptureInput {
  maxBytes: number;
  /** shared by every running capture of one bash toolbox */
  budget?: CaptureBudget;
  /** 'tail': only the last maxBytes, as a diagnostic needs (what a server said before it failed) */
  keep?: 'head-and-tail' | 'tail';
}

/**
 * .what = keeps the first and the last bytes of a stream within a fixed budget, and counts what was dropped between
 * .why = a command may print gigabytes; memory stays bounded while the model still sees how the output began and ended
 * .note = with a shared budget, memory beyond FLOOR_BYTES per half is granted by it: once it is spent, a capture keeps less
 */
export class BoundedCapture {
  private headLimitBytes: number;
  private readonly tailLimitBytes: number;
  private readonly budget: CaptureBudget | null;
  // the bytes this capture holds of the shared budget, given back by release()
  private chargedBytes = 0;
  // the head grows by doubling up to its limit, so a short output costs little memory
  private head: Buffer = Buffer.alloc(0);
  private headBytes = 0;
  // the tail is a ring buffer, allocated only once the head is full
  private tail: Buffer | null = null;
  private tailStart = 0;
  private tailBytes = 0;
  private seenBytes = 0;

  public constructor(input: BoundedCaptureInput) {
    const maxBytes = Math.max(2, Math.floor(input.maxBytes));
    this.headLimitBytes = input.keep === 'tail' ? 0 : Math.floor(maxBytes / 2);
    this.tailLimitBytes = maxBytes - this.headLimitBytes;
    this.budget = input.budget ?? null;
  }

  /** .what = gives the shared budget back what this capture took; call it once its output has been read */
  public release(): void {
    this.budget?.give(this.chargedBytes);
    this.chargedBytes = 0;
  }

  /** .what = every byte written so far, kept or not */
  public get totalBytes(): number {
    return this.seenBytes;
  }

  /** .what = the bytes dropped from the middle, between the kept head and tail */
  public get droppedBytes(): number {
    return this.seenBytes - this.headBytes - this.tailBytes;
  }

  /** .what = takes one chunk: fills the head first, then rolls the rest through the tail */
  public write(chunk: Uint8Array): void {
    this.seenBytes += chunk.length;
    let rest = chunk;
    if (this.headBytes < this.headLimitBytes) {
      this.growHead(this.headBytes + Math.min(rest.length, this.headLimitBytes - this.headBytes));
      // growing may have lowered the limit (the shared budget was spent)
      const taken = Math.min(rest.length, this.headLimitBytes - this.headBytes);
      this.head.set(rest.subarray(0, taken), this.headBytes);
      this.headBytes += taken;
      rest = rest.subarray(taken);
    }
    if (rest.length > 0) this.writeTail(rest);
  }

  /** .what = read(), with the count of every byte written */
  public text(): BashStreamText {
    return { ...this.read(), totalBytes: this.seenBytes };
  }

  /** .what = the kept bytes as UTF-8 text, with invalid bytes as replacement characters */
  public read(): { head: string; tail: string; droppedBytes: number } {
    const head = this.head.subarray(0, this.headBytes);
    const tail = this.readTail();
    if (this.droppedBytes === 0) return { head: Buffer.concat([head, tail]).toString('utf8'), tail: '', droppedBytes: 0 };
    // cut at character boundaries, so a character split by the dropped middle does not show up as garbage
    return {
      head: head.subarray(0, utf8BoundaryBefore(head, head.length)).toString('utf8'),
      tail: tail.subarray(utf8BoundaryAfter(tail)).toString('utf8'),
      droppedBytes: this.droppedBytes,
    };
  }

  private growHead(neededBytes: number): void {
    if (neededBytes <= this.head.length) return;
    let sizeBytes = Math.max(this.head.length * 2, FIRST_HEAD_BYTES);
    while (sizeBytes < neededBytes) sizeBytes *= 2;
    sizeBytes = this.granted(this.head.length, Math.min(sizeBytes, this.headLimitBytes));
    // a budget that is spent stops the head where it is: the rest of the stream goes to the tail
    if (sizeBytes < neededBytes) this.headLimitBytes = sizeBytes;
    if (sizeBytes === this.head.length) return;
    const grown = Buffer.alloc(sizeBytes);
    grown.set(this.head.subarray(0, this.headBytes));
    this.head = grown;
  }

  // the size a buffer may grow to from fromBytes: free up to FLOOR_BYTES, beyond it what the shared budget grants
  private granted(fromBytes: number, toBytes: number): number {
    if (!this.budget) return toBytes;
    const wantedBytes = Math.max(0, toBytes - FLOOR_BYTES) - Math.max(0, fromBytes - FLOOR_BYTES);
    const grantedBytes = this.budget.take(wantedBytes);
    this.chargedBytes += grantedBytes;
    return toBytes - (wantedBytes - grantedBytes);
  }

  private writeTail(bytes: Uint8Array): void {
    this.tail ??= Buffer.alloc(this.granted(0, this.tailLimitBytes));
    const ring = this.tail;
    if (ring.length === 0) return;
    // only the last tailLimitBytes of a big chunk can survive
    const kept = bytes.length > ring.length ? bytes.subarray(bytes.length - ring.length) : bytes;
    let writeAt = (this.tailStart + this.tailBytes) % ring.length;
    const firstPart = Math.min(kept.length, ring.length - writeAt);
    ring.set(kept.subarray(0, firstPart), writeAt);
    ring.set(kept.subarray(firstPart), 0);
    writeAt = (writeAt + kept.length) % ring.length;
    const filled = this.tailBytes + kept.length;
    if (filled >= ring.length) {
      this.tailBytes = ring.length;
      this.tailStart = writeAt;
    } else this.tailBytes = filled;
  }

  private readTail(): Buffer {
    if (!this.tail || this.tailBytes === 0) return Buffer.alloc(0);
    const end = this.tailStart + this.tailBytes;
    if (end <= this.tail.length) return this.tail.subarray(this.tailStart, end);
    return Buffer.concat([this.tail.subarray(this.tailStart), this.tail.subarray(0, end - this.tail.length)]);
  }
}

// a UTF-8 continuation byte is 0b10xxxxxx
const isContinuation = (byte: number | undefined): boolean => byte !== undefined && (byte & 0xc0) === 0x80;

// the end index that does not split the last character (at most 3 bytes are given up)
const utf8BoundaryBefore = (bytes: Uint8Array, end: number): number => {
  let start = end;
  while (start > 0 && end - start < 4 && isContinuation(bytes[start - 1])) start--;
  if (start === 0) return end;
  const lead = bytes[start - 1]!;
  const lengthBytes = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc0 ? 2 : 1;
  return end - (start - 1) >= lengthBytes ? end : start - 1;
};

// the start index past the continuation bytes of a character cut at the front
const utf8BoundaryAfter = (bytes: Uint8Array): number => {
  let start = 0;
  while (start < 3 && isContinuation(bytes[start])) start++;
  return start;
};
