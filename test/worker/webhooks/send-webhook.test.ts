import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createTargetPolicy, parseTargetRules, type LookupAll } from '@testrun/core/target-policy';
import { sendWebhook } from '../../../apps/worker/src/webhooks/send-webhook';
import { testTargetAllow } from '../../support/processes';

/**
 * One delivery attempt against a real receiver on loopback, under the target network policy: the
 * host is resolved once by the given resolver and the connection goes to the address it checked.
 */
const policy = createTargetPolicy({ allow: parseTargetRules(testTargetAllow(), 'TARGET_ALLOW') });
let server: Server;
let port = 0;
let answer = 200;
const hosts: string[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    hosts.push(req.headers.host ?? '');
    req.resume();
    req.on('end', () => res.writeHead(answer).end());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

/** A resolver of one name, as a test's DNS. */
const resolvesTo =
  (address: string): LookupAll =>
  (hostname) =>
    Promise.resolve(hostname === 'hooks.test' ? [{ address, family: 4 }] : []);

const attempt = (url: string, lookup: LookupAll) =>
  sendWebhook({ url, headers: { 'webhook-id': 'msg_1' }, body: '{}', policy, lookup, timeoutMs: 5_000 });

describe('sendWebhook', () => {
  it('connects to the address the name resolved to, and a 2xx is a delivery', async () => {
    answer = 204;
    const result = await attempt(`http://hooks.test:${port}/in`, resolvesTo('127.0.0.1'));
    expect(result).toMatchObject({ ok: true, status: 204, error: null });
    expect(hosts.at(-1)).toBe(`hooks.test:${port}`);
  });

  it('any other answer is a failed attempt naming its status', async () => {
    answer = 500;
    expect(await attempt(`http://127.0.0.1:${port}/in`, resolvesTo('127.0.0.1'))).toMatchObject({
      ok: false,
      status: 500,
      error: 'answered HTTP 500',
    });
  });

  it('refuses a name that resolves to an address the policy denies, without connecting', async () => {
    const before = hosts.length;
    const result = await attempt(`http://hooks.test:${port}/in`, resolvesTo('169.254.169.254'));
    expect(result.ok).toBe(false);
    expect(result.status).toBeNull();
    expect(result.error).toMatch(/^blocked by the target network policy: .*metadata/);
    expect(hosts.length).toBe(before);
  });

  it('a name that does not resolve, and a refused connection, are failed attempts', async () => {
    expect((await attempt(`http://nowhere.test:${port}/`, resolvesTo('127.0.0.1'))).error).toBe(
      'nowhere.test could not be resolved',
    );
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const closedPort = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    expect((await attempt(`http://127.0.0.1:${closedPort}/`, resolvesTo('127.0.0.1'))).error).toBe(
      'connection failed (ECONNREFUSED)',
    );
  });

  it('cuts an answer that drips a byte at a time at the timeout of the whole exchange, in its head or its body', async () => {
    const drips: NodeJS.Timeout[] = [];
    const drip = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        const head = req.url === '/head';
        if (!head) res.writeHead(200, { 'content-length': '1000' }).flushHeaders();
        const bytes = head ? `HTTP/1.1 200 OK\r\nx-pad: ${'a'.repeat(1000)}\r\n\r\n` : 'x'.repeat(1000);
        let sent = 0;
        // A byte every 20 ms: each byte comes well within the timeout, the whole answer never does.
        const timer = setInterval(() => {
          if (head) req.socket.write(bytes.charAt(sent++));
          else res.write(bytes.charAt(sent++));
        }, 20);
        drips.push(timer);
        req.socket.on('close', () => clearInterval(timer));
      });
    });
    await new Promise<void>((resolve) => drip.listen(0, '127.0.0.1', resolve));
    const dripPort = (drip.address() as AddressInfo).port;
    try {
      for (const part of ['head', 'body']) {
        const result = await sendWebhook({
          url: `http://127.0.0.1:${dripPort}/${part}`,
          headers: {},
          body: '{}',
          policy,
          lookup: resolvesTo('127.0.0.1'),
          timeoutMs: 300,
        });
        expect(result).toMatchObject({ ok: false, status: null, error: 'no answer within 300 ms', timedOut: true });
      }
    } finally {
      for (const timer of drips) clearInterval(timer);
      drip.closeAllConnections();
      await new Promise<void>((resolve) => drip.close(() => resolve()));
    }
  });
});
