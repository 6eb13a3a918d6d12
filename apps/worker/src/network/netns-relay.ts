import { spawn } from 'node:child_process';
import { connect, createServer, type Socket } from 'node:net';
import { constants } from 'node:os';

/*
 * Chromium's parent inside the browser's network namespace (see browser-netns.ts):
 *
 *   node netns-relay.js <egress proxy socket> <port> <chromium> [chromium flags...]
 *
 * The namespace has loopback only, so the relay's 127.0.0.1:<port> is the one thing there the
 * browser can connect to: each connection is carried to the egress proxy's Unix socket, which is
 * reachable from inside because a path on the file system belongs to no network namespace. Once it
 * listens (so the browser's first request never finds it missing), it starts Chromium with the
 * stdio and the DevTools pipe (fds 3 and 4) Playwright gave it, and exits as Chromium exits.
 */

const [socketPath, portText, chromium, ...flags] = process.argv.slice(2);
const port = Number(portText);
if (socketPath === undefined || chromium === undefined || !Number.isInteger(port) || port <= 0) {
  process.stderr.write('usage: netns-relay <proxy socket> <port> <chromium> [flags...]\n');
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

function startBrowser(): void {
  const browser = spawn(chromium as string, flags, { stdio: ['inherit', 'inherit', 'inherit', 3, 4] });
  for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) process.on(signal, () => browser.kill(signal));
  browser.on('error', (error) => {
    process.stderr.write(`netns-relay: cannot start ${chromium}: ${error.message}\n`);
    process.exit(127);
  });
  browser.on('exit', (code, signal) => {
    process.exit(code ?? 128 + (signal ? constants.signals[signal] : 0));
  });
}

const server = createServer(relay);
server.on('error', (error) => {
  process.stderr.write(`netns-relay: cannot listen on 127.0.0.1:${port}: ${error.message}\n`);
  process.exit(71);
});
server.listen(port, '127.0.0.1', startBrowser);
