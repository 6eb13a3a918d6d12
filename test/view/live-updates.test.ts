import { createServer, type Server } from 'node:http';
import { formatDuration } from '@testrun/contracts';
import { suiteRunViewUrl } from '@testrun/core/view-links';
import type { LiveStatus } from '../../apps/api/src/view/model';
import { createSuiteRun, executeSeededRun, STEPS } from './seed';
import { defined, readJson, startViewEnv, type ViewEnv, openViewer, type Viewer } from './support';

/**
 * A page on loopback whose answer waits until the test releases it, so a run stays `running`
 * exactly as long as the test needs, with no timing guess.
 */
async function startGate() {
  let open: () => void = () => undefined;
  const released = new Promise<void>((resolve) => {
    open = resolve;
  });
  const server: Server = createServer((_req, res) => {
    void released.then(() => {
      res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>Cart</title><h1>Cart</h1>');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('the gate is not listening on TCP');
  return {
    url: `http://127.0.0.1:${address.port}/cart`,
    release: open,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

let env: ViewEnv;
let gate: Awaited<ReturnType<typeof startGate>>;
let viewer: Viewer;

beforeAll(async () => {
  env = await startViewEnv();
  gate = await startGate();
  viewer = await openViewer(env);
});

afterAll(async () => {
  gate.release();
  await gate.close();
  await viewer.context.close();
  await env.close();
});

test('a running suite page updates itself to the final state without a reload', async () => {
  const live = await createSuiteRun(
    env.db,
    env.api.keys,
    [
      { name: 'Cart keeps items', steps: [{ action: 'goto', url: gate.url }] },
      { name: 'Coupon applies', steps: [STEPS.broken()] },
    ],
    { baseUrl: env.site.url },
  );
  const [first, second] = [defined(live.runs[0], 'run 1'), defined(live.runs[1], 'run 2')];
  const url = suiteRunViewUrl(env.api.origin, env.api.keys.view, live.suiteRunId);
  await viewer.page.goto(url);
  expect(await viewer.page.locator('h1 .chip').textContent()).toBe('queued');
  expect(await viewer.page.locator('main').getAttribute('data-live')).toMatch(/\/status\.json$/);
  // A reload would lose this.
  await viewer.page.evaluate(() => {
    Object.assign(window, { sameDocument: true });
  });
  const chipOf = (runId: string) => `li[data-run="${runId}"] summary [data-run-status]`;
  const chipIs = (selector: string, status: string) =>
    viewer.page.waitForFunction(({ sel, want }) => document.querySelector(sel)?.textContent === want, {
      sel: selector,
      want: status,
    });

  // The first run waits on the gate: running until the test lets it finish.
  const firstRun = executeSeededRun(env.worker, first);
  await chipIs(chipOf(first.id), 'running');
  await chipIs('h1 .chip', 'running');
  expect(await viewer.page.locator('[data-count="running"]').textContent()).toBe('1');

  gate.release();
  await firstRun;
  const passed = await env.db.run.findUniqueOrThrow({ where: { id: first.id } });
  expect(passed.status).toBe('passed');
  await chipIs(chipOf(first.id), 'passed');
  expect(await viewer.page.locator(`li[data-run="${first.id}"] [data-run-summary]`).textContent()).toContain(
    passed.resultSummary,
  );
  // The duration as the server formats it: the script has no formatter of its own.
  const status = await readJson<LiveStatus>(await fetch(`${url}/status.json`));
  expect(status.runs.find((r) => r.id === first.id)?.durationText).toBe(formatDuration(passed.durationMs));
  expect(await viewer.page.locator(`li[data-run="${first.id}"] [data-run-duration]`).textContent()).toBe(
    formatDuration(passed.durationMs),
  );

  await executeSeededRun(env.worker, second);
  const failed = await env.db.run.findUniqueOrThrow({ where: { id: second.id } });
  expect([failed.status, failed.outcomeCode]).toEqual(['failed', 'http_error']);
  // Terminal: the final page replaces the live one in place, failures first, and polling stops.
  await chipIs('h1 .chip', 'failed');
  await viewer.page.locator('section.group-failed').waitFor();
  expect(await viewer.page.locator('main').getAttribute('data-live')).toBeNull();
  expect(
    await viewer.page.locator(`section.group-failed li[data-run="${second.id}"] .callout-failed .why`).textContent(),
  ).toBe(failed.outcomeMessage);
  expect(await viewer.page.locator('[data-count="failed"]').textContent()).toBe('1');
  expect(await viewer.page.evaluate(() => 'sameDocument' in window)).toBe(true);
  expect(await viewer.page.locator('#live-note').textContent()).toContain('failed');
});
