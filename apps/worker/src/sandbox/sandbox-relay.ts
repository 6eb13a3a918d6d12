import { spawn } from 'node:child_process';
import { connect, createServer, type Socket } from 'node:net';
import { constants } from 'node:os';

/*
 * The program's parent inside a sandbox given the egress proxy (run-sandboxed.ts):
 *
 *   node sandbox-relay.js <proxy socket> <port> <command> [args...]
 *
 * The sandbox's network namespace has loopback only; the relay listens on its 127.0.0.1:<port> and
 * carries each connection to the egress proxy's Unix socket, bound into the sandbox. Once it
 * listens, it starts the program with its stdio and exits as the program exits. Like
 * network/netns-relay.ts for Chromium, without Chromium's DevTools pipe.
 */

const [socketPath, portText, command, ...args] = process.argv.slice(2);
const port = Number(portText);
if (socketPath === undefined || command === undefined || !Number.isInteger(port) || port <= 0) {
  process.stderr.write('usage: sandbox-relay <proxy socket> <port> <command> [args...]\n');
  process.exit(64);
}

function relay(client: Socket): void {
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
  const program = spawn(command as string, args, { stdio: 'inherit' });
  program.on('error', (error) => {
    process.stderr.write(`sandbox-relay: cannot start ${command}: ${error.message}\n`);
    process.exit(127);
  });
  program.on('exit', (code, signal) => {
    process.exit(code ?? 128 + (signal ? constants.signals[signal] : 0));
  });
}

const server = createServer(relay);
server.on('error', (error) => {
  process.stderr.write(`sandbox-relay: cannot listen on 127.0.0.1:${port}: ${error.message}\n`);
  process.exit(71);
});
server.listen(port, '127.0.0.1', startProgram);
