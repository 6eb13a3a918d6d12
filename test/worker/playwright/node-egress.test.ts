import { execFileSync } from 'node:child_process';
import { once } from 'node:events';
import { readFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { usePolicedRun } from './policed-run';

/*
 * The team's Node code reaches what its page may reach (docs/NETWORK_POLICY.md, "What test code can
 * reach"): real specs and a globalSetup whose fetch, http and https calls run in the real sandbox,
 * whose only way out is the real egress proxy, with a policy that opens 127.0.0.1 (the shop, by the
 * name shop.test, and an HTTPS server) and refuses 127.0.0.2.
 */

jest.setTimeout(240_000);

let tls: Server;

const TITLES = [
  'globalSetup seeded the app with fetch',
  "a helper's fetch reaches the target by its name",
  "a helper's http.get reaches the target, with a keep-alive agent of its own too",
  "a helper's https.get and fetch reach an HTTPS target through the tunnel",
  "a helper's fetch the policy refuses",
  "a helper's fetch to a port nothing listens on",
] as const;

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

const run = usePolicedRun({
  fixture: 'node-egress',
  spec: 'e2e/node.spec.js',
  titles: TITLES,
  env: async (dir) => {
    tls = await serveTls(dir);
    return {
      TLS_URL: `https://shop.test:${(tls.address() as AddressInfo).port}`,
      NODE_TLS_REJECT_UNAUTHORIZED: '0',
    };
  },
});
const { resultOf } = run;

afterAll(() => tls.close());

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
  expect(run.shop.seen.filter((s) => s.path === '/echo').length).toBeGreaterThanOrEqual(4);
});

test('a fetch the policy refuses is target_blocked, its error naming the refusal, and nothing reaches the address', () => {
  const result = resultOf("a helper's fetch the policy refuses");
  expect(result).toMatchObject({ status: 'error', code: 'target_blocked' });
  expect(result?.summary).toContain(`Blocked by the network policy: 127.0.0.2:${run.refused.port}`);
  const message = result?.errors[0]?.message ?? '';
  expect(message).toContain(`fetch failed: the network policy refused a connection to 127.0.0.2:${run.refused.port}`);
  expect(run.refused.connections()).toBe(0);
});

test('a fetch to an allowed port where nothing listens fails as it does without a proxy (ECONNREFUSED)', () => {
  const result = resultOf("a helper's fetch to a port nothing listens on");
  expect(result?.status).toBe('error');
  const message = result?.errors[0]?.message ?? '';
  expect(message).toMatch(/^TypeError: fetch failed\n\[cause\]: Error: connect ECONNREFUSED 127\.0\.0\.1:\d+/);
});
