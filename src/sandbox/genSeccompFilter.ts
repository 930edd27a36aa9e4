/**
 * .what = the seccomp filter every sandbox runs under, as the classic BPF program bwrap's --seccomp reads (an array of
 *         struct sock_filter {u16 code; u8 jt; u8 jf; u32 k}, little-endian), made from the table of rules below:
 *         - socket(AF_UNIX, …): EPERM. A unix socket is reached by connecting to its path, which is not a write, so the
 *           read-only root does not stop it: the docker, podman and containerd sockets (root on the machine), a D-Bus
 *           bus (`systemd-run --user` runs outside any sandbox), $SSH_AUTH_SOCK. With no socket of that family, no
 *           path and no abstract name is reached. Unless the user allows unix sockets (allowUnixSockets)
 *         - socketpair(AF_UNIX, …) of a connectionless type (SOCK_DGRAM, SOCK_RAW, which the kernel makes DGRAM):
 *           EPERM. A datagram socket, even one of a pair, sends to any path (sendto), so it would reach a host's
 *           datagram socket (the journal's, syslog's /dev/log). A pair of SOCK_STREAM or SOCK_SEQPACKET is connected
 *           for good and reaches nothing: programs talk to their children over those. Unless allowUnixSockets
 *         - socketcall (the i386 ABI's one call for every socket operation): EPERM, since its family is in the
 *           process's memory, where a filter cannot look. Unless allowUnixSockets
 *         - io_uring_setup, io_uring_enter, io_uring_register: ENOSYS. A ring opens sockets (IORING_OP_SOCKET) and
 *           connects them without a system call the filter sees; ENOSYS is what a kernel without io_uring says, so
 *           libuv and liburing fall back to plain calls
 *         - ioctl(…, TIOCSTI) and ioctl(…, TIOCLINUX): EPERM. Both push input into a terminal; bwrap's --new-session
 *           already keeps a command from the caller's terminal, this keeps it from any
 *         - every other call: allowed
 *         The rules hold on every ABI the kernel accepts from a process of this machine: on x86_64 the i386 ABI (int
 *         0x80) has rules of its own numbers, the x32 ABI (numbers with bit 30 set) is refused outright, and a call
 *         from any other architecture is refused (EPERM)
 * .why = bash reaches no host socket by default, whatever the socket's path, owner or name: by kind, not by a list. Our
 *        own program (46 instructions on x86_64, its i386 rules included; 24 on aarch64), from a table, tested branch
 *        by branch and in bwrap; not sandbox-runtime's vendored apply-seccomp binary, which cannot run inside a sandbox
 *        made as ours is (docs/sandbox-and-permissions.md)
 */

/** seccomp_data's offsets: the call's number, the architecture, the low 32 bits of argument n (little-endian hosts) */
const NR_OFFSET = 0;
const ARCH_OFFSET = 4;
const argOffset = (index: number): number => 16 + 8 * index;

// classic BPF opcodes
const LD_W_ABS = 0x20;
const JEQ_K = 0x15;
const JGE_K = 0x35;
const AND_K = 0x54;
const RET_K = 0x06;

// seccomp's returns
const RET_ALLOW = 0x7fff0000;
const RET_ERRNO = 0x00050000;
const EPERM = 1;
const ENOSYS = 38;

// the constants the rules test
const AF_UNIX = 1;
const SOCK_STREAM = 1;
const SOCK_SEQPACKET = 5;
const SOCK_TYPE_MASK = 0xf;
const TIOCSTI = 0x5412;
const TIOCLINUX = 0x541c;
/** the x32 ABI's calls are x86_64's with this bit set in their number */
const X32_SYSCALL_BIT = 0x40000000;

/** .what = one ABI a process may call the kernel through: its AUDIT_ARCH and the numbers of the calls the rules name */
interface SyscallAbi {
  auditArch: number;
  calls: { socket: number; socketpair: number; ioctl: number; socketcall?: number };
  /** x86_64's own: numbers at or above X32_SYSCALL_BIT are the x32 ABI's */
  x32Beside?: true;
}

const X86_64: SyscallAbi = { auditArch: 0xc000003e, calls: { socket: 41, socketpair: 53, ioctl: 16 }, x32Beside: true };
const I386: SyscallAbi = { auditArch: 0x40000003, calls: { socket: 359, socketpair: 360, ioctl: 54, socketcall: 102 } };
const AARCH64: SyscallAbi = { auditArch: 0xc00000b7, calls: { socket: 198, socketpair: 199, ioctl: 29 } };

/** io_uring's calls share their numbers across every architecture (since Linux 5.1) */
const IO_URING_CALLS = [425, 426, 427];

/** .what = the ABIs the kernel of a machine accepts, its own first; null for a machine the filter has no table for */
const ABIS_BY_ARCH: Partial<Record<NodeJS.Architecture, readonly SyscallAbi[]>> = {
  x64: [X86_64, I386],
  // a 32-bit ARM process (AArch32, when the kernel runs one) is refused every call: it has no table here
  arm64: [AARCH64],
};

/** .what = a test of one argument: its low 32 bits, masked, are one of `values` (or, with `not`, none of them) */
interface ArgTest {
  arg: number;
  mask?: number;
  values: readonly number[];
  not?: true;
}

/** .what = one rule: what it refuses (for the reader), its call (by name in SyscallAbi.calls, or its numbers), the tests
 *  that all hold, the errno it gets */
interface SeccompRule {
  what: string;
  call: keyof SyscallAbi['calls'] | readonly number[];
  tests: readonly ArgTest[];
  errno: number;
  /** the rule applies only while unix sockets are blocked (no allowUnixSockets) */
  unixOnly?: true;
}

/** .what = the rules, in the order the program tests them; each call is named by one rule at most */
const SECCOMP_RULES: readonly SeccompRule[] = [
  { what: 'socket(AF_UNIX, …)', call: 'socket', tests: [{ arg: 0, values: [AF_UNIX] }], errno: EPERM, unixOnly: true },
  {
    what: 'socketpair(AF_UNIX, SOCK_DGRAM or SOCK_RAW, …)',
    call: 'socketpair',
    tests: [
      { arg: 0, values: [AF_UNIX] },
      { arg: 1, mask: SOCK_TYPE_MASK, values: [SOCK_STREAM, SOCK_SEQPACKET], not: true },
    ],
    errno: EPERM,
    unixOnly: true,
  },
  { what: 'socketcall(…)', call: 'socketcall', tests: [], errno: EPERM, unixOnly: true },
  { what: 'io_uring_setup, io_uring_enter, io_uring_register', call: IO_URING_CALLS, tests: [], errno: ENOSYS },
  { what: 'ioctl(…, TIOCSTI or TIOCLINUX)', call: 'ioctl', tests: [{ arg: 1, values: [TIOCSTI, TIOCLINUX] }], errno: EPERM },
];

/** .what = a jump target: an instruction's label, resolved once the program is laid out */
type Target = string | 0;

interface Instruction {
  code: number;
  jt: Target;
  jf: Target;
  k: number;
  label?: string;
}

/** .what = a program under construction: instructions with symbolic jumps, and the fresh labels they jump to */
const genAssembler = () => {
  const program: Instruction[] = [];
  let labels = 0;
  let pendingLabel: string | undefined;
  const emit = (code: number, k: number, jt: Target = 0, jf: Target = 0): void => {
    program.push({ code, jt, jf, k, ...(pendingLabel ? { label: pendingLabel } : {}) });
    pendingLabel = undefined;
  };
  return {
    emit,
    fresh: (): string => `L${labels++}`,
    /** the next instruction emitted carries this label */
    mark: (label: string): void => {
      if (pendingLabel) throw new Error(`seccomp: two labels on one instruction (${pendingLabel}, ${label})`);
      pendingLabel = label;
    },
    /** the program as bytes: each jump an offset from the instruction after it, which must fit in 8 bits */
    assemble: (): Buffer => {
      const at = new Map(program.flatMap((instruction, index) => (instruction.label ? [[instruction.label, index]] : [])));
      const bytes = Buffer.alloc(program.length * 8);
      program.forEach((instruction, index) => {
        const offset = (target: Target): number => {
          if (target === 0) return 0;
          const distance = at.get(target)! - index - 1;
          if (!(distance >= 0 && distance <= 255)) throw new Error(`seccomp: a jump to ${target} does not fit (${distance})`);
          return distance;
        };
        bytes.writeUInt16LE(instruction.code, index * 8);
        bytes.writeUInt8(offset(instruction.jt), index * 8 + 2);
        bytes.writeUInt8(offset(instruction.jf), index * 8 + 3);
        bytes.writeUInt32LE(instruction.k >>> 0, index * 8 + 4);
      });
      return bytes;
    },
  };
};

/** .what = the program's shared returns, by errno, and allow */
const RETURN_LABELS = { allow: 'allow', [EPERM]: 'eperm', [ENOSYS]: 'enosys' } as Record<number | 'allow', string>;

/**
 * .what = one ABI's part of the program: the call's number loaded, x32 refused beside x86_64, then each rule whose call
 *         the ABI has: its number compared, its tests made, its errno returned; anything else allowed
 */
const emitAbi = (asm: ReturnType<typeof genAssembler>, abi: SyscallAbi, rules: readonly SeccompRule[]): void => {
  asm.emit(LD_W_ABS, NR_OFFSET);
  if (abi.x32Beside) asm.emit(JGE_K, X32_SYSCALL_BIT, RETURN_LABELS[EPERM], 0);
  for (const rule of rules) {
    const numbers = typeof rule.call === 'string' ? [abi.calls[rule.call]].filter((nr) => nr !== undefined) : rule.call;
    if (!numbers.length) continue;
    const body = rule.tests.length ? asm.fresh() : RETURN_LABELS[rule.errno];
    const next = asm.fresh();
    numbers.forEach((nr, index) => asm.emit(JEQ_K, nr, body, index === numbers.length - 1 ? next : 0));
    if (rule.tests.length) {
      asm.mark(body);
      rule.tests.forEach((test, testIndex) => {
        const last = testIndex === rule.tests.length - 1;
        // where the program goes once this test holds: the next test, or the rule's errno
        const holds = last ? RETURN_LABELS[rule.errno] : asm.fresh();
        asm.emit(LD_W_ABS, argOffset(test.arg));
        if (test.mask !== undefined) asm.emit(AND_K, test.mask);
        test.values.forEach((value, valueIndex) => {
          const lastValue = valueIndex === test.values.length - 1;
          if (test.not) asm.emit(JEQ_K, value, RETURN_LABELS.allow, lastValue ? holds : 0);
          else asm.emit(JEQ_K, value, holds, lastValue ? RETURN_LABELS.allow : 0);
        });
        if (!last) asm.mark(holds);
      });
    }
    asm.mark(next);
  }
  asm.emit(RET_K, RET_ALLOW);
};

/** .what = the machines a filter is made for, as process.arch names them */
export const SECCOMP_ARCHES = Object.keys(ABIS_BY_ARCH) as NodeJS.Architecture[];

/**
 * .what = the seccomp program for a machine (process.arch), or null when there is no table for it; `allowUnixSockets`
 *         leaves out the rules on unix sockets (the sandbox then hides each host socket but those allowed, by a mount)
 * .note = a little-endian program: x86_64 and aarch64 are
 */
export const genSeccompFilter = (input: { arch: NodeJS.Architecture; allowUnixSockets: boolean }): Buffer | null => {
  const abis = ABIS_BY_ARCH[input.arch];
  if (!abis) return null;
  const rules = SECCOMP_RULES.filter((rule) => !(rule.unixOnly && input.allowUnixSockets));
  const asm = genAssembler();
  const abiLabels = abis.map(() => asm.fresh());
  asm.emit(LD_W_ABS, ARCH_OFFSET);
  abis.forEach((abi, index) => asm.emit(JEQ_K, abi.auditArch, abiLabels[index], index === abis.length - 1 ? RETURN_LABELS[EPERM] : 0));
  abis.forEach((abi, index) => {
    asm.mark(abiLabels[index]);
    emitAbi(asm, abi, rules);
  });
  asm.mark(RETURN_LABELS.allow);
  asm.emit(RET_K, RET_ALLOW);
  asm.mark(RETURN_LABELS[EPERM]);
  asm.emit(RET_K, RET_ERRNO | EPERM);
  asm.mark(RETURN_LABELS[ENOSYS]);
  asm.emit(RET_K, RET_ERRNO | ENOSYS);
  return asm.assemble();
};

// made once per process and kind: the program depends on nothing else
const made = new Map<string, Buffer | null>();

/** .what = genSeccompFilter for this process's machine, made once per kind */
export const seccompFilterOfThisMachine = (allowUnixSockets: boolean): Buffer | null => {
  const key = `${process.arch}:${allowUnixSockets}`;
  if (!made.has(key)) made.set(key, genSeccompFilter({ arch: process.arch, allowUnixSockets }));
  return made.get(key)!;
};
