import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';

import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';

import { silentLog } from '../core/contract/BrainContext.js';
import { BadRequestError } from '../core/contract/errors.js';
import type { BhrainToolBox } from '../agent/tool/BhrainToolBox.js';
import { genBashToolBox } from '../agent/toolboxes/bash/genBashToolBox.js';

// bash in the sandbox reaches no unix socket of the host: a seccomp filter refuses socket(AF_UNIX)
// (and the datagram pairs, socketcall, the i386 and x32 ABIs, io_uring, TIOCSTI); sandbox.allowUnixSockets opens exactly
// the sockets it names, and hides every other one. The sockets listen in this process, under /var/tmp (the sandbox's
// /tmp is its own, so a socket under the host's /tmp would prove nothing)

/** .what = a unix socket listening at a path, counting the connections it accepts */
interface CountedSocket {
  path: string;
  connections: () => number;
  close: () => Promise<void>;
}

const listenCounted = async (path: string): Promise<CountedSocket> => {
  let connections = 0;
  const server: Server = createServer((socket) => {
    connections++;
    socket.on('error', () => {});
    // curl sends a request: an answer it takes; the other clients only connect
    socket.once('data', () => socket.end('HTTP/1.0 200 OK\r\ncontent-length: 0\r\n\r\n'));
  });
  await new Promise<void>((resolve) => server.listen(path, resolve));
  return { path, connections: () => connections, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
};

let base: string;
let workspace: string;
let target: CountedSocket;
beforeAll(async () => {
  base = realpathSync(mkdtempSync('/var/tmp/bhrain-unix-'));
  workspace = join(base, 'ws');
  mkdirSync(workspace);
  mkdirSync(join(base, 'x'));
  writeFileSync(join(base, 'not-a-socket'), '');
  target = await listenCounted(join(base, 'docker.sock'));
});
afterAll(async () => {
  await target?.close();
  rmSync(base, { recursive: true, force: true });
});

const runBash = async (box: BhrainToolBox, command: string) =>
  (
    await box.execute(
      { call: { id: 'call-1', name: 'bash', input: { command, timeout_ms: 20_000 } } },
      { cwd: workspace, log: silentLog, env: { ...process.env } },
    )
  ).output;

/** the clients a command would use, each printing `connected` once it is */
const CLIENTS: Record<string, (path: string) => string> = {
  curl: (path) => `curl -sS -m 5 --unix-socket '${path}' http://x/ >/dev/null 2>&1 && echo connected || echo 'curl failed'`,
  python3: (path) =>
    `python3 -c 'import socket, sys; s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); print("connected")' '${path}' 2>&1 | tail -n 1`,
  node: (path) =>
    `node -e 'require("net").connect(process.argv[1]).on("connect", () => { console.log("connected"); process.exit(0) }).on("error", (e) => console.log("node", e.code))' '${path}'`,
  perl: (path) => `perl -MIO::Socket::UNIX -e 'print IO::Socket::UNIX->new(Peer => $ARGV[0]) ? "connected\\n" : "perl: $!\\n"' '${path}'`,
};

describe('no host unix sockets by default: bash in the sandbox', () => {
  const box = genBashToolBox({ killGraceMs: 500 });
  afterEach(() => expect(target.connections()).toBe(0));

  it('given a listening socket it can see, then curl, python3, node and perl each fail to connect: socket(AF_UNIX) is EPERM', async () => {
    const output = await runBash(
      box,
      Object.values(CLIENTS)
        .map((client) => client(target.path))
        .join('; '),
    );
    expect(output).toBe(
      'exit code: 0\n--- stdout ---\ncurl failed\nPermissionError: [Errno 1] Operation not permitted\nnode EPERM\nperl: Operation not permitted',
    );
  });

  it("given the control, then each client reaches the socket without bhrain's sandbox", async () => {
    const off = genBashToolBox({ sandbox: { mode: 'off' } });
    const output = await runBash(
      off,
      Object.values(CLIENTS)
        .map((client) => client(target.path))
        .join('; '),
    );
    expect(output).toBe('exit code: 0\n--- stdout ---\nconnected\nconnected\nconnected\nconnected');
    expect(target.connections()).toBe(4);
    await target.close();
    target = await listenCounted(target.path);
  });

  it('given a datagram socket pair, then it is refused (it could send to any path); a stream pair works, and so does TCP on its loopback', async () => {
    const output = await runBash(
      box,
      `python3 -c '
import socket, threading
a, b = socket.socketpair(); a.sendall(b"pair"); print(b.recv(4).decode())
try: socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM); print("dgram pair made")
except OSError as e: print("dgram", e.errno)
server = socket.create_server(("127.0.0.1", 0)); port = server.getsockname()[1]
threading.Thread(target=lambda: server.accept()[0].sendall(b"tcp")).start()
print(socket.create_connection(("127.0.0.1", port)).recv(3).decode())'`,
    );
    expect(output).toBe('exit code: 0\n--- stdout ---\npair\ndgram 1\ntcp');
  });

  it.runIf(process.arch === 'x64')(
    "given the i386 ABI (int 0x80: socket, socketcall) and the x32 ABI, then each socket call is EPERM (machine code run by python's ctypes)",
    async () => {
      // each routine makes socket(AF_UNIX, SOCK_STREAM, 0) and returns what the kernel said (-1 is -EPERM)
      const output = await runBash(
        box,
        `python3 -c '
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
libc.mmap.restype = ctypes.c_void_p
libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
page = libc.mmap(None, 4096, 7, 0x02 | 0x20 | 0x40, -1, 0)
def run(code):
    ctypes.memmove(page, bytes(code), len(code))
    value = ctypes.CFUNCTYPE(ctypes.c_long)(page)() & 0xffffffff
    return value - (1 << 32) if value >> 31 else value
ctypes.memmove(page + 256, (ctypes.c_uint32 * 3)(1, 1, 0), 12)
args = list((page + 256).to_bytes(4, "little"))
print("i386 socket", run([0x53, 0xb8, 0x67, 1, 0, 0, 0xbb, 1, 0, 0, 0, 0xb9, 1, 0, 0, 0, 0x31, 0xd2, 0xcd, 0x80, 0x5b, 0xc3]))
print("i386 socketcall", run([0x53, 0xb8, 102, 0, 0, 0, 0xbb, 1, 0, 0, 0, 0xb9] + args + [0xcd, 0x80, 0x5b, 0xc3]))
print("x32 socket", run([0xb8, 0x29, 0, 0, 0x40, 0xbf, 1, 0, 0, 0, 0xbe, 1, 0, 0, 0, 0x31, 0xd2, 0x0f, 0x05, 0xc3]))'`,
      );
      expect(output).toBe('exit code: 0\n--- stdout ---\ni386 socket -1\ni386 socketcall -1\nx32 socket -1');
    },
  );

  it('given io_uring_setup, then ENOSYS (a ring would open sockets unseen); given TIOCSTI on a terminal of its own, then EPERM', async () => {
    const output = await runBash(
      box,
      `python3 -c '
import ctypes, fcntl, os, pty, termios
libc = ctypes.CDLL(None, use_errno=True)
params = ctypes.create_string_buffer(120)
print("io_uring_setup", libc.syscall(425, 8, params), ctypes.get_errno())
main, tty = pty.openpty()
try: fcntl.ioctl(tty, termios.TIOCSTI, b"x"); print("pushed")
except OSError as e: print("TIOCSTI", e.errno)'`,
    );
    expect(output).toBe('exit code: 0\n--- stdout ---\nio_uring_setup -1 38\nTIOCSTI 1');
  });
});

describe('sandbox.allowUnixSockets: exactly the sockets named, and no other', () => {
  let other: CountedSocket;
  let nested: CountedSocket;
  beforeAll(async () => {
    other = await listenCounted(join(base, 'other.sock'));
    nested = await listenCounted(join(base, 'x', 'bus'));
  });
  afterAll(async () => {
    await other?.close();
    await nested?.close();
  });

  it('given one socket named, then every client reaches it, and no client reaches the others: each is an empty read-only file there', async () => {
    const box = genBashToolBox({ sandbox: { allowUnixSockets: [target.path] } });
    const before = target.connections();
    const output = await runBash(
      box,
      [
        ...Object.values(CLIENTS).map((client) => client(target.path)),
        ...[other.path, nested.path].flatMap((path) => [CLIENTS.python3(path), CLIENTS.curl(path), `stat -c '%F %s' '${path}'`]),
      ].join('; '),
    );
    expect(output).toBe(
      [
        'exit code: 0\n--- stdout ---\nconnected\nconnected\nconnected\nconnected',
        'PermissionError: [Errno 13] Permission denied\ncurl failed\nregular empty file 0',
        'PermissionError: [Errno 13] Permission denied\ncurl failed\nregular empty file 0',
      ].join('\n'),
    );
    expect(target.connections() - before).toBe(4);
    expect([other.connections(), nested.connections()]).toEqual([0, 0]);
  });

  it('given a socket that starts listening after the sandbox did, then the next call finds it hidden too', async () => {
    const box = genBashToolBox({ sandbox: { allowUnixSockets: [target.path] } });
    expect(await runBash(box, 'true')).toBe('exit code: 0\n(no output)');
    const late = await listenCounted(join(base, 'late.sock'));
    try {
      expect(await runBash(box, CLIENTS.node(late.path))).toBe('exit code: 0\n--- stdout ---\nnode EACCES');
      expect(late.connections()).toBe(0);
    } finally {
      await late.close();
    }
  });

  it('given a path that is not a socket (a file, nothing, a relative path), or the whole network beside it, then the toolbox is not made, naming it', () => {
    expect(() => genBashToolBox({ sandbox: { allowUnixSockets: [join(base, 'not-a-socket')] } })).toThrow(BadRequestError);
    expect(() => genBashToolBox({ sandbox: { allowUnixSockets: [join(base, 'not-a-socket')] } })).toThrow(
      `sandbox.allowUnixSockets names "${join(base, 'not-a-socket')}", which is not a unix socket (it is a regular file): name a socket that exists, e.g. "/var/run/docker.sock", or remove it`,
    );
    expect(() => genBashToolBox({ sandbox: { allowUnixSockets: [join(base, 'gone.sock')] } })).toThrow(/\(nothing is there\)/);
    expect(() => genBashToolBox({ sandbox: { allowUnixSockets: ['docker.sock'] } })).toThrow(
      /^sandbox\.allowUnixSockets 'docker\.sock' is not an absolute path/,
    );
    expect(() => genBashToolBox({ sandbox: { allowUnixSockets: [target.path], allowNetwork: true } })).toThrow(
      /^sandbox\.allowUnixSockets cannot go with allowNetwork \(--allow-network\): with the host's network, bash would also reach every abstract unix socket of the host/,
    );
  });
});
