import { execFile } from 'node:child_process';
import { accessSync, constants, existsSync, writeFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { makeScratchDir } from '../support/scratch-dir';
import { closingOthers } from '../sandbox/close-fds';
import type { EgressProxy } from './egress-proxy';

/*
 * Why a network namespace rather than Chromium's flags: a page's WebRTC (STUN and TURN over UDP,
 * host names Chromium resolves itself), and any other protocol Chromium speaks without its HTTP
 * proxy, goes around `--proxy-server` whatever `--force-webrtc-ip-handling-policy` says. In a
 * namespace whose only interface is loopback there is no route anywhere, so the one way out left
 * is the relay on its loopback to the egress proxy's Unix socket (netns-relay.ts).
 */

/**
 * bubblewrap's flags: new network and PID namespaces (loopback up), the same files, gone with the
 * worker, and no capabilities: a worker running as root would otherwise hand Chromium the
 * CAP_SYS_ADMIN that lets a process join another network namespace (setns) and so leave its own.
 */
const BWRAP_FLAGS = [
  '--unshare-net',
  '--unshare-pid',
  '--die-with-parent',
  '--cap-drop',
  'ALL',
  '--dev-bind',
  '/',
  '/',
];

/** The relay, as built JavaScript (also when the worker runs from its sources under jest). */
const RELAY_SCRIPT = path.resolve(__dirname, '../../dist/network/netns-relay.js');

/** Chromium cannot be given a network namespace here; the message says why and what to do. */
export class BrowserIsolationError extends Error {
  constructor(reason: string) {
    super(
      `Chromium cannot be run in a network namespace of its own: ${reason}. Install bubblewrap ` +
        '(apt-get install -y bubblewrap) and allow it to create namespaces (docs/NETWORK_POLICY.md, ' +
        '"Browser isolation"), or set BROWSER_NETWORK_ISOLATION=off to run without: pages can then send ' +
        'WebRTC and other non-HTTP traffic past the target network policy.',
    );
    this.name = 'BrowserIsolationError';
  }
}

/** The browser's network namespace, as the worker launches Chromium into it. */
export interface BrowserNetns {
  /** A launcher for Playwright's `executablePath` that starts `chromiumPath` inside the namespace. */
  wrap(chromiumPath: string): string;
  /** The egress proxy's Unix socket the namespace's relay dials (a sandbox's relay dials it too). */
  readonly socketPath: string;
  /** Removes the launchers and the socket's directory (the proxy closes the socket itself). */
  close(): Promise<void>;
}

/** The first `bwrap` on PATH that can be executed. */
function findBwrap(): string | undefined {
  for (const dir of (process.env.PATH ?? '/usr/bin:/bin').split(path.delimiter)) {
    const candidate = path.join(dir || '.', 'bwrap');
    try {
      accessSync(candidate, constants.X_OK);
      return path.resolve(candidate);
    } catch {
      // Not here; the next directory.
    }
  }
  return undefined;
}

/** Fails with what bubblewrap said when it cannot make the namespaces (a container without the privilege). */
async function probe(bwrap: string): Promise<void> {
  try {
    await promisify(execFile)(bwrap, [...BWRAP_FLAGS, '--', '/bin/sh', '-c', ':'], { timeout: 10_000 });
  } catch (error) {
    const stderr = typeof error === 'object' && error !== null && 'stderr' in error ? String(error.stderr) : '';
    const said = stderr.trim().split('\n')[0] || (error instanceof Error ? error.message : String(error));
    throw new BrowserIsolationError(`${bwrap} failed to create the namespaces (${said})`);
  }
}

/** A word for `sh`, whatever characters the path holds. */
function shellQuote(word: string): string {
  return `'${word.replaceAll("'", `'\\''`)}'`;
}

/**
 * Gives the browser a network namespace whose only way out is `proxy`: checks that bubblewrap can
 * make one, opens the proxy's Unix socket in a directory only this user can enter, and writes the
 * launchers there. Throws {@link BrowserIsolationError} when this machine cannot.
 */
export async function isolateBrowserNetwork(proxy: EgressProxy): Promise<BrowserNetns> {
  const bwrap = findBwrap();
  if (bwrap === undefined) throw new BrowserIsolationError('bwrap (bubblewrap) is not installed');
  if (!existsSync(RELAY_SCRIPT)) throw new BrowserIsolationError(`${RELAY_SCRIPT} is missing (build the worker)`);
  await probe(bwrap);
  // Made 0700: only the worker's user reaches the socket, and nobody else writes the launchers. Named
  // like a scratch directory, so the next worker removes it if this one is killed.
  const dir = await makeScratchDir();
  const socketPath = path.join(dir, 'egress.sock');
  // The relay listens inside the namespace (the browser's own: no port there is taken) on the
  // proxy's own port, so one proxy URL is right on both sides: the browser reaches the relay, and
  // what Playwright fetches for a route in the worker's process (`route.fetch`, with the context's
  // proxy) reaches the proxy itself.
  const relayPort = new URL(proxy.url).port;
  try {
    await proxy.listenUnix(socketPath);
  } catch (error) {
    await rm(dir, { recursive: true, force: true });
    throw error;
  }
  const launchers = new Map<string, string>();
  return {
    socketPath,
    wrap(chromiumPath) {
      let launcher = launchers.get(chromiumPath);
      if (launcher === undefined) {
        launcher = path.join(dir, `chromium-${launchers.size}`);
        // Chromium talks to Playwright over fds 3 and 4 (the DevTools pipe): the relay passes them on,
        // and no other descriptor of the worker's reaches Chromium.
        const command = closingOthers(4, [
          bwrap,
          ...BWRAP_FLAGS,
          '--',
          process.execPath,
          RELAY_SCRIPT,
          socketPath,
          relayPort,
          '3,4',
        ]);
        const script = `#!/bin/sh\nexec ${[...command, chromiumPath].map(shellQuote).join(' ')} "$@"\n`;
        writeFileSync(launcher, script, { mode: 0o700 });
        launchers.set(chromiumPath, launcher);
      }
      return launcher;
    },
    close: () => rm(dir, { recursive: true, force: true }),
  };
}
