import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { readWorkerConfig } from '../../apps/worker/src/config';
import { startWorkerService, type WorkerService } from '../../apps/worker/src/service/worker-service';
import { deployForTenant, oneSuiteProject, usePlaywrightSite } from './playwright-site';
import { memoryLogger } from './support';

/**
 * A file's tests run as `playwright test` runs them, in one Playwright worker and in order, whichever
 * service worker took each test's run (docs/PLAYWRIGHT.md, "Batches"): two workers (of two slots and
 * of one) take the first runs of a suite run at once; a serial group's later tests and a default-mode file's
 * second test read what the tests before them left in the module, so they pass only in the same
 * Playwright worker as those.
 */
jest.setTimeout(240_000);

const FIXTURE = path.resolve(__dirname, '../fixtures/pw-serial');
const workers: WorkerService[] = [];
const logs = [memoryLogger('worker-a'), memoryLogger('worker-b')];
const parts = usePlaywrightSite({
  // A worker of two slots and a worker of one.
  start: async () => {
    for (const [i, log] of logs.entries())
      workers.push(
        await startWorkerService(readWorkerConfig({ ...process.env, WORKER_CONCURRENCY: i === 0 ? '2' : '1' }), {
          logger: log.logger,
          reconcile: false,
        }),
      );
  },
  stop: () => Promise.all(workers.map((w) => w.stop())),
});

it("runs a file's tests in one Playwright worker, in order, when several workers take its runs at once", async () => {
  const selection = { slug: 'all', playwright: { project: 'chromium' } };
  const project = oneSuiteProject('pw-serial', parts.site.url, 'e2e/playwright.config.ts', selection);
  const { client } = await deployForTenant(parts, path.join(FIXTURE, 'testrun.yaml'), project);
  const suiteRunId = await client.createSuiteRun({ projectSlug: 'pw-serial', suiteSlug: 'all' });
  const suite = await client.waitSuiteRun(suiteRunId);
  const runs = await Promise.all(suite.tests.map((t) => client.getRun(t.runId)));
  expect(Object.fromEntries(runs.map((r) => [r.test_name, [r.status, r.result_summary]]))).toEqual({
    'first counts': ['passed', 'Passed'],
    'second sees the first': ['passed', 'Passed'],
    'one starts the order': ['passed', 'Passed'],
    'two reads it': ['passed', 'Passed'],
    'three reads both': ['passed', 'Passed'],
  });
});

/** A site with one "database": it answers `alone` to a test entering it while no other test is in, `met` otherwise. */
async function startOneAtATime(): Promise<{ url: string; server: Server; entered: string[]; met: string[] }> {
  let inside = 0;
  const entered: string[] = [];
  const met: string[] = [];
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    if (url.pathname === '/enter') {
      const name = url.searchParams.get('test') ?? '?';
      entered.push(name);
      if (inside > 0) met.push(name);
      inside += 1;
      res.end(inside === 1 ? 'alone' : 'met');
    } else {
      inside -= 1;
      res.end('left');
    }
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server, entered, met };
}

it("runs a suite whose config says workers: 1 one test at a time, in Playwright's order, on any number of workers", async () => {
  const oneAtATime = await startOneAtATime();
  try {
    const selection = { slug: 'all', playwright: { project: 'api' } };
    const project = oneSuiteProject('pw-one-worker', oneAtATime.url, 'e2e/playwright.config.ts', selection);
    const projectFile = path.resolve(__dirname, '../fixtures/pw-one-worker/testrun.yaml');
    const { client } = await deployForTenant(parts, projectFile, project);
    const suiteRunId = await client.createSuiteRun({ projectSlug: 'pw-one-worker', suiteSlug: 'all' });
    const suite = await client.waitSuiteRun(suiteRunId);
    const runs = await Promise.all(suite.tests.map((t) => client.getRun(t.runId)));
    expect(runs.map((r) => [r.test_name, r.status]).sort()).toEqual([
      ['a1', 'passed'],
      ['a2', 'passed'],
      ['b1', 'passed'],
      ['b2', 'passed'],
    ]);
    expect(oneAtATime.met).toEqual([]);
    expect(oneAtATime.entered).toEqual(['a1', 'a2', 'b1', 'b2']);
  } finally {
    oneAtATime.server.close();
  }
});
