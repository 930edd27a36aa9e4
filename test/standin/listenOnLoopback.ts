// one way for the test servers (stand-in, raw replay) to listen on 127.0.0.1 and to close without leaving a socket open
import type { Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/**
 * .what = listens on 127.0.0.1 at a random port; close() also destroys open (keep-alive, stalled) sockets
 * .why = a server that waits for its clients' keep-alive sockets would keep a test process alive after its last test
 */
export const listenOnLoopback = async (server: Server): Promise<{ url: string; close: () => Promise<void> }> => {
  const sockets = new Set<Socket>();
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve, reject) => {
        if (!server.listening) return resolve();
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeAllConnections();
        for (const socket of sockets) socket.destroy();
      }),
  };
};
