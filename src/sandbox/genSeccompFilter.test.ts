import { describe, expect, it } from 'vitest';

import { genSeccompFilter, SECCOMP_ARCHES } from './genSeccompFilter.js';

// the program is judged as the kernel runs it: a classic-BPF interpreter of the opcodes the kernel's seccomp takes, over
// a seccomp_data (nr, arch, args) laid out as the kernel lays it out. bashSandboxUnixSockets.test.ts runs it in bwrap

const ALLOW = 'allow';
const errnoOf = (value: number): string =>
  value === 0x7fff0000 ? ALLOW : (value & 0xffff0000) === 0x00050000 ? `errno ${value & 0xffff}` : `ret ${value}`;

/** .what = runs a program over one call: the verdict (allow, errno N), and how many instructions it ran */
const runFilter = (program: Buffer, call: { arch: number; nr: number; args?: number[] }): { verdict: string; steps: number } => {
  const data = Buffer.alloc(64);
  data.writeInt32LE(call.nr, 0);
  data.writeUInt32LE(call.arch >>> 0, 4);
  (call.args ?? []).forEach((arg, index) => data.writeBigUInt64LE(BigInt(arg), 16 + 8 * index));
  let accumulator = 0;
  for (let pc = 0, steps = 1; pc * 8 < program.length; pc++, steps++) {
    const code = program.readUInt16LE(pc * 8);
    const jt = program.readUInt8(pc * 8 + 2);
    const jf = program.readUInt8(pc * 8 + 3);
    const k = program.readUInt32LE(pc * 8 + 4);
    if (code === 0x20) accumulator = data.readUInt32LE(k);
    else if (code === 0x54) accumulator = (accumulator & k) >>> 0;
    else if (code === 0x15) pc += accumulator === k ? jt : jf;
    else if (code === 0x35) pc += accumulator >= k ? jt : jf;
    else if (code === 0x06) return { verdict: errnoOf(k), steps };
    else throw new Error(`opcode ${code.toString(16)} at ${pc} is not one the filter uses`);
  }
  throw new Error('the program ran off its end (the kernel refuses such a program)');
};

const X86_64 = 0xc000003e;
const I386 = 0x40000003;
const AARCH64 = 0xc00000b7;
const ARM = 0x40000028;
const verdictOf = (program: Buffer, arch: number, nr: number, args: number[] = []) => runFilter(program, { arch, nr, args }).verdict;

describe('the seccomp filter: its program, branch by branch', () => {
  const x64 = genSeccompFilter({ arch: 'x64', allowUnixSockets: false })!;
  const arm64 = genSeccompFilter({ arch: 'arm64', allowUnixSockets: false })!;

  it('given x64 and arm64, then a program is made for each, short enough to read, and none for another machine', () => {
    expect(SECCOMP_ARCHES).toEqual(['x64', 'arm64']);
    expect(x64.length / 8).toBe(46);
    expect(arm64.length / 8).toBe(24);
    expect(genSeccompFilter({ arch: 'riscv64', allowUnixSockets: false })).toBeNull();
    expect(genSeccompFilter({ arch: 'ia32', allowUnixSockets: false })).toBeNull();
  });

  it('given socket(), then AF_UNIX (with any type and flags) is EPERM and every other family is allowed', () => {
    for (const [program, arch, nr] of [
      [x64, X86_64, 41],
      [arm64, AARCH64, 198],
      [x64, I386, 359],
    ] as const) {
      expect(verdictOf(program, arch, nr, [1, 1, 0])).toBe('errno 1');
      expect(verdictOf(program, arch, nr, [1, 0x80802, 0])).toBe('errno 1');
      expect(verdictOf(program, arch, nr, [2, 1, 0])).toBe(ALLOW);
      expect(verdictOf(program, arch, nr, [10, 2, 0])).toBe(ALLOW);
      // only the low 32 bits are the kernel's int: a family with high bits set is still AF_UNIX to it
      expect(verdictOf(program, arch, nr, [0x1_0000_0001, 1, 0])).toBe('errno 1');
    }
  });

  it('given socketpair(AF_UNIX), then a stream or seqpacket pair is allowed, a datagram (or raw) pair EPERM; another family is allowed', () => {
    for (const [program, arch, nr] of [
      [x64, X86_64, 53],
      [arm64, AARCH64, 199],
      [x64, I386, 360],
    ] as const) {
      expect(verdictOf(program, arch, nr, [1, 1])).toBe(ALLOW);
      expect(verdictOf(program, arch, nr, [1, 1 | 0x80000 | 0x800])).toBe(ALLOW);
      expect(verdictOf(program, arch, nr, [1, 5])).toBe(ALLOW);
      expect(verdictOf(program, arch, nr, [1, 2])).toBe('errno 1');
      expect(verdictOf(program, arch, nr, [1, 2 | 0x80000])).toBe('errno 1');
      expect(verdictOf(program, arch, nr, [1, 3])).toBe('errno 1');
      expect(verdictOf(program, arch, nr, [2, 2])).toBe(ALLOW);
    }
  });

  it('given the i386 ABI on x86_64, then socketcall is EPERM whatever it asks (its family is in memory)', () => {
    expect(verdictOf(x64, I386, 102, [1, 0x1000])).toBe('errno 1');
    expect(verdictOf(x64, I386, 102, [3, 0x1000])).toBe('errno 1');
    // i386's other calls run: 102 is socketcall there, and x86_64's 102 is getuid
    expect(verdictOf(x64, X86_64, 102)).toBe(ALLOW);
    expect(verdictOf(x64, I386, 4)).toBe(ALLOW);
  });

  it('given the x32 ABI (bit 30 of the number) or an architecture the machine has no table for, then every call is EPERM', () => {
    expect(verdictOf(x64, X86_64, 0x40000000 + 41, [1])).toBe('errno 1');
    expect(verdictOf(x64, X86_64, 0x40000000 + 0)).toBe('errno 1');
    expect(verdictOf(x64, AARCH64, 198, [2])).toBe('errno 1');
    expect(verdictOf(arm64, X86_64, 41, [2])).toBe('errno 1');
    expect(verdictOf(arm64, ARM, 281, [2])).toBe('errno 1');
  });

  it('given io_uring_setup, io_uring_enter or io_uring_register, then ENOSYS on every ABI', () => {
    for (const nr of [425, 426, 427]) {
      expect(verdictOf(x64, X86_64, nr)).toBe('errno 38');
      expect(verdictOf(x64, I386, nr)).toBe('errno 38');
      expect(verdictOf(arm64, AARCH64, nr)).toBe('errno 38');
    }
    expect(verdictOf(x64, X86_64, 424)).toBe(ALLOW);
    expect(verdictOf(x64, X86_64, 428)).toBe(ALLOW);
  });

  it('given ioctl, then TIOCSTI and TIOCLINUX are EPERM and every other request (TCGETS, FIONREAD) is allowed', () => {
    for (const [program, arch, nr] of [
      [x64, X86_64, 16],
      [arm64, AARCH64, 29],
      [x64, I386, 54],
    ] as const) {
      expect(verdictOf(program, arch, nr, [0, 0x5412])).toBe('errno 1');
      expect(verdictOf(program, arch, nr, [0, 0x541c])).toBe('errno 1');
      expect(verdictOf(program, arch, nr, [0, 0x5401])).toBe(ALLOW);
      expect(verdictOf(program, arch, nr, [0, 0x541b])).toBe(ALLOW);
    }
  });

  it('given the calls a command makes most (read, write, openat, execve, connect, clone), then each is allowed, in few steps', () => {
    for (const nr of [0, 1, 257, 59, 42, 56]) {
      const { verdict, steps } = runFilter(x64, { arch: X86_64, nr });
      expect(verdict).toBe(ALLOW);
      expect(steps).toBeLessThanOrEqual(13);
    }
  });

  it('given allowUnixSockets, then unix sockets of every kind are allowed, and the other rules hold as they were', () => {
    const open = genSeccompFilter({ arch: 'x64', allowUnixSockets: true })!;
    expect(open.length / 8).toBe(25);
    expect(verdictOf(open, X86_64, 41, [1, 1])).toBe(ALLOW);
    expect(verdictOf(open, X86_64, 53, [1, 2])).toBe(ALLOW);
    expect(verdictOf(open, I386, 102, [1])).toBe(ALLOW);
    expect(verdictOf(open, X86_64, 425)).toBe('errno 38');
    expect(verdictOf(open, X86_64, 16, [0, 0x5412])).toBe('errno 1');
    expect(verdictOf(open, X86_64, 0x40000000 + 41, [1])).toBe('errno 1');
    expect(verdictOf(open, AARCH64, 198, [1])).toBe('errno 1');
  });
});
