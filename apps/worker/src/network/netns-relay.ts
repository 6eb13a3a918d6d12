import { spawn } from 'node:child_process';
import { connect, createServer, type Socket } from 'node:net';
import { constants } from 'node:os';

/*
 * The parent of a program inside a network namespace of its own: Chromium's (browser-netns.ts) and a
 * sandbox's given the egress proxy (sandbox/run-sandboxed.ts):
 *
 *   node netns-relay.js <egress proxy socket> <port> <fds: 3,4 or -> <command> [args...]
 *
 * The namespace has loopback only, so the relay's 127.0.0.1:<port> is the one thing there the
 * program can connect to: each connection is carried to the egress proxy's Unix socket, which is
 * reachable from inside because a path on the file system belongs to no network namespace. Once it
 * listens (so the program's first request never finds it missing), it starts the program with its
 * stdio and the descriptors named (Chromium: the DevTools pipe, fds 3 and 4, Playwright gave it),
 * passes on the signals that stop it, and exits as the program exits.
 */

const [socketPath, portText, fdsText, command, ...args] = process.argv.slice(2);
const port = Number(portText);
/** The descriptors beyond stdio the program is given: `3,4` (Chromium's DevTools pipe) or `-` (none). */
const passedFds = fdsText === '-' ? [] : (fdsText ?? '').split(',').map(Number);
if (
  socketPath === undefined ||
  command === undefined ||
  !Number.isInteger(port) ||
  port <= 0 ||
  !passedFds.every((fd) => Number.isInteger(fd) && fd > 2)
) {
  process.stderr.write('usage: netns-relay <proxy socket> <port> <fds, e.g. 3,4, or -> <command> [args...]\n');
  process.exit(64);
}

function relay(client: Socket): void {
  // Bytes go on as they come: with Nagle's algorithm a response's last small write waits for the
  // browser's delayed acknowledgement of the one before (tens of milliseconds a request).
  client.setNoDelay(true);
  const proxy = connect(socketPath as string);
  const cut = () => {
    client.destroy();
    proxy.destroy();
  };
  for (const socket of [client, proxy]) {
    socket.on('error', cut);
    socket.on('close', cut);
  }
  client.pipe(proxy);
  proxy.pipe(client);
}

function startProgram(): void {
  const program = spawn(command as string, args, { stdio: ['inherit', 'inherit', 'inherit', ...passedFds] });
  for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) process.on(signal, () => program.kill(signal));
  program.on('error', (error) => {
    process.stderr.write(`netns-relay: cannot start ${command}: ${error.message}\n`);
    process.exit(127);
  });
  program.on('exit', (code, signal) => {
    process.exit(code ?? 128 + (signal ? constants.signals[signal] : 0));
  });
}

const server = createServer(relay);
server.on('error', (error) => {
  process.stderr.write(`netns-relay: cannot listen on 127.0.0.1:${port}: ${error.message}\n`);
  process.exit(71);
});
server.listen(port, '127.0.0.1', startProgram);
