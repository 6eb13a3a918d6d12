// The server side of the fuzzer's connections: every case's connection is closed by the fuzzer
// before the next, so one the server still holds after a batch is a leak (an open file per such
// client, and a server whose close never completes).
import type { Server } from 'node:http';
import type { Socket } from 'node:net';

/** How long the server may take to close the connections of a batch the fuzzer has closed. */
const CLOSE_GRACE_MS = 15_000;

/** Watches every socket of `server`, including those Node hands over and stops counting (CONNECT's). */
export function trackConnections(server: Server) {
  const sockets = new Set<Socket>();
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  let leaked = 0;
  return {
    /** How many sockets were newly left open since the last call, after a grace period for closing. */
    async newlyLeaked(): Promise<number> {
      const until = Date.now() + CLOSE_GRACE_MS;
      while (sockets.size > leaked && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 50));
      const fresh = Math.max(0, sockets.size - leaked);
      leaked = sockets.size;
      return fresh;
    },
    /** Closes whatever is left, so a leak fails the run but cannot keep it from finishing. */
    destroyAll(): void {
      for (const socket of sockets) socket.destroy();
    },
  };
}
