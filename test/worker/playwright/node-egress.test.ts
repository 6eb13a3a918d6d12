import { execFileSync } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createTargetPolicy, parseTargetRules } from '@testrun/core/target-policy';
import {
  playwrightTestKey,
  runPlaywrightTests,
  type PlaywrightTestResult,
} from '../../../apps/worker/src/executors/playwright';
import { refusals } from '../../../apps/worker/src/executors/playwright/given';
import { EgressProxy, type RunListener } from '../../../apps/worker/src/network/egress-proxy';
import { checkSandboxSupport } from '../../../apps/worker/src/sandbox';
import { countingListener } from '../sandbox/sandbox-harness';
import { freePort } from '../../support/processes';
import { serveSite, type Site } from './pw-harness';

/*
 * The team's Node code reaches what its page may reach (docs/NETWORK_POLICY.md, "What test code can
 * reach"): real specs and a globalSetup whose fetch, http and https calls run in the real sandbox,
 * whose only way out is the real egress proxy, with a policy that opens 127.0.0.1 (the shop, by the
 * name shop.test, and an HTTPS server) and refuses 127.0.0.2.
 */

jest.setTimeout(240_000);

const RELAY_PORT = 3128;
let base: string;
let shop: Site;
let tls: Server;
let proxy: EgressProxy;
let listener: RunListener;
let refused: Awaited<ReturnType<typeof countingListener>>;
let results: Map<string, PlaywrightTestResult>;

const TITLES = [
  'globalSetup seeded the app with fetch',
  "a helper's fetch reaches the target by its name",
  "a helper's http.get reaches the target, with a keep-alive agent of its own too",
  "a helper's https.get and fetch reach an HTTPS target through the tunnel",
  "a helper's fetch the policy refuses",
  "a helper's fetch to a port nothing listens on",
] as const;
const ref = (title: string) => ({ file: 'e2e/node.spec.js', project: 'app', titlePath: [title] });
const resultOf = (title: (typeof TITLES)[number]) => results.get(playwrightTestKey(ref(title)));

/** An HTTPS server on 127.0.0.1 with a certificate made for it (openssl). */
async function serveTls(dir: string): Promise<Server> {
  const key = path.join(dir, 'key.pem');
  const cert = path.join(dir, 'cert.pem');
  execFileSync(
    'openssl',
    ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', key, '-out', cert].concat([
      '-days',
      '1',
      '-subj',
      '/CN=shop.test',
    ]),
    { stdio: 'ignore' },
  );
  const server = createServer({ key: await readFile(key), cert: await readFile(cert) }, (_req, res) =>
    res.writeHead(200, { 'content-type': 'text/plain' }).end('tls'),
  );
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return server;
}

beforeAll(async () => {
  expect(await checkSandboxSupport()).toBeNull();
  base = await mkdtemp(path.join(tmpdir(), 'testrun-pw-node-egress-'));
  shop = await serveSite();
  tls = await serveTls(base);
  refused = await countingListener('127.0.0.2');
  proxy = new EgressProxy({
    policy: createTargetPolicy({ allow: parseTargetRules('127.0.0.1/32') }),
    lookup: (host) => Promise.resolve(host === 'shop.test' ? [{ address: '127.0.0.1', family: 4 }] : []),
  });
  await proxy.start();
  const socketPath = path.join(base, 'egress.sock');
  listener = await proxy.openRunListener('node-egress', { socketPath });
  const all = await runPlaywrightTests(
    {
      bundleDir: path.join(__dirname, '../../fixtures/playwright/node-egress'),
      configFile: 'e2e/playwright.config.js',
      scratchDir: await mkdtemp(path.join(base, 'scratch-')),
      network: { proxySocketPath: socketPath, port: RELAY_PORT },
      proxy: { server: `http://127.0.0.1:${RELAY_PORT}`, bypass: '<-loopback>' },
      baseUrl: `http://shop.test:${new URL(shop.origin).port}`,
      env: {
        TLS_URL: `https://shop.test:${(tls.address() as AddressInfo).port}`,
        NODE_TLS_REJECT_UNAUTHORIZED: '0',
        BLOCKED_URL: `http://127.0.0.2:${refused.port}/secret`,
        CLOSED_URL: `http://127.0.0.1:${await freePort()}/`,
      },
      evidence: 'off',
      takeBlocked: refusals(listener),
      tests: TITLES.map(ref),
    },
    () => undefined,
  );
  results = new Map(all.map((result) => [result.key, result]));
});

afterAll(async () => {
  listener.close();
  await proxy.close();
  shop.server.close();
  tls.close();
  refused.server.close();
  await rm(base, { recursive: true, force: true });
});

test("fetch, http and https of the team's code and its globalSetup reach the allowed target by name, through the proxy", () => {
  for (const title of TITLES.slice(0, 4)) {
    const result = resultOf(title);
    expect({ title, status: result?.status, summary: result?.summary }).toEqual({
      title,
      status: 'passed',
      summary: 'Passed',
    });
  }
  // The globalSetup's request and the helpers' reached the shop itself.
  expect(shop.seen.filter((s) => s.path === '/echo').length).toBeGreaterThanOrEqual(4);
});

test('a fetch the policy refuses is target_blocked, its error naming the refusal, and nothing reaches the address', () => {
  const result = resultOf("a helper's fetch the policy refuses");
  expect(result).toMatchObject({ status: 'error', code: 'target_blocked' });
  expect(result?.summary).toContain(`Blocked by the network policy: 127.0.0.2:${refused.port}`);
  const message = result?.errors[0]?.message ?? '';
  expect(message).toContain(`fetch failed: the network policy refused a connection to 127.0.0.2:${refused.port}`);
  expect(refused.connections()).toBe(0);
});

test('a fetch to an allowed port where nothing listens fails as it does without a proxy (ECONNREFUSED)', () => {
  const result = resultOf("a helper's fetch to a port nothing listens on");
  expect(result?.status).toBe('error');
  const message = result?.errors[0]?.message ?? '';
  expect(message).toMatch(/^TypeError: fetch failed\n\[cause\]: Error: connect ECONNREFUSED 127\.0\.0\.1:\d+/);
});
