import { execFile } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

/**
 * The other way round: the verdicts the service's end-to-end tests expect of the fixtures they run
 * (playwright-time, playwright-serial) are the verdicts `playwright test` itself gives, run on the
 * host on the same files, with the same @playwright/test and Chromium and the fixture's own config
 * (a wrapper only points it at a site, a report file and the machine's Chromium). A service that
 * agrees with these expectations agrees with Playwright.
 */
jest.setTimeout(240_000);

const run = promisify(execFile);
const FIXTURES = path.resolve(__dirname, '../fixtures');
const CLI = require.resolve('@playwright/test/cli');

interface Report {
  suites: ReportSuite[];
}
interface ReportSuite {
  title: string;
  suites?: ReportSuite[];
  specs?: { title: string; tests: { results: { status: string }[] }[] }[];
}

/** Each test's title (describe titles joined with › below the file) and the status of its last try. */
function statuses(report: Report): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (suite: ReportSuite, titles: string[]) => {
    for (const spec of suite.specs ?? [])
      for (const test of spec.tests) out[[...titles, spec.title].join(' › ')] = test.results.at(-1)?.status ?? 'none';
    for (const child of suite.suites ?? []) walk(child, [...titles, child.title]);
  };
  for (const file of report.suites) walk(file, []);
  return out;
}

let site: Server;
let base: string;
let work: string;

beforeAll(async () => {
  // The fixtures' target: a page (with no #missing on it), and the one "database" of pw-one-worker.
  let inside = 0;
  site = createServer((req, res) => {
    if (req.url?.startsWith('/enter')) {
      inside += 1;
      res.end(inside === 1 ? 'alone' : 'met');
    } else if (req.url?.startsWith('/leave')) {
      inside -= 1;
      res.end('left');
    } else res.writeHead(200, { 'content-type': 'text/html' }).end('<h1>Site</h1>');
  });
  site.listen(0, '127.0.0.1');
  await once(site, 'listening');
  base = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
  work = await mkdtemp(path.join(tmpdir(), 'testrun-parity-'));
});

afterAll(async () => {
  site.close();
  await rm(work, { recursive: true, force: true });
});

/** This process's environment without Jest's variables. */
function outsideJest(): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('JEST_')));
}

/** `playwright test` on a fixture's config as it is, on the host: each test's status. */
async function playwrightTest(fixture: string, config: string, args: string[] = []): Promise<Record<string, string>> {
  const dir = path.join(work, fixture);
  const configPath = path.join(FIXTURES, fixture, config);
  const wrapper = path.join(work, `${fixture}.config.js`);
  await writeFile(
    wrapper,
    `const path = require('node:path');
const loaded = require(${JSON.stringify(configPath)});
const team = loaded.default ?? loaded;
const at = (dir) => (dir === undefined ? undefined : path.resolve(${JSON.stringify(path.dirname(configPath))}, dir));
const launchOptions = { executablePath: '/usr/lib/chromium/chromium', args: ['--no-sandbox'] };
module.exports = {
  ...team,
  testDir: at(team.testDir ?? '.'),
  outputDir: ${JSON.stringify(path.join(dir, 'output'))},
  reporter: [['json', { outputFile: ${JSON.stringify(path.join(dir, 'report.json'))} }]],
  use: { ...team.use, baseURL: ${JSON.stringify(base)}, launchOptions },
  projects: team.projects?.map((p) => ({ ...p, testDir: at(p.testDir), use: { ...p.use, launchOptions } })),
};
`,
  );
  // A run with failing tests exits 1: the report says which.
  // The config's own workers (no --workers, which would override it).
  await run(process.execPath, [CLI, 'test', '--config', wrapper, ...args], {
    // Playwright refuses to run inside a Jest worker (it looks for JEST_WORKER_ID).
    env: { ...outsideJest(), CI: '1', FORCE_COLOR: '0' },
  }).catch((error: unknown) => error);
  return statuses(JSON.parse(await readFile(path.join(dir, 'report.json'), 'utf8')) as Report);
}

/**
 * The three `playwright test` runs, started together once the site is up: pw-time's mostly waits on
 * its timeouts, and the others (pw-one-worker alone uses the site's counter) run meanwhile. Each
 * test awaits its own.
 */
let runs: Record<'time' | 'serial' | 'oneWorker', Promise<Record<string, string>>>;
beforeAll(() => {
  runs = {
    time: playwrightTest('pw-time', 'e2e/playwright.config.js', ['--grep-invert', 'takes a while']),
    serial: playwrightTest('pw-serial', 'e2e/playwright.config.ts'),
    oneWorker: playwrightTest('pw-one-worker', 'e2e/playwright.config.ts'),
  };
  // A run that fails is reported by the test that awaits it, not as an unhandled rejection first.
  for (const run of Object.values(runs)) run.catch(() => undefined);
});

test("pw-time: Playwright's time and its locator verdicts, as the service records them", async () => {
  // playwright-time.test.ts: passed, passed, error/timeout, failed/element_not_found twice, and
  // error/timeout on both tries of the hook out of time.
  expect(await runs.time).toEqual({
    'sets a longer timeout of its own': 'passed',
    'is slow': 'passed',
    'runs out of its config timeout': 'timedOut',
    'locators › clicks what is missing': 'failed',
    'locators › expects to see what is missing': 'failed',
    'a hook out of time › times out in its beforeEach': 'timedOut',
  });
});

test('pw-serial and pw-one-worker: a serial group, a default-mode file and a workers: 1 suite pass, as in the service', async () => {
  // playwright-serial.test.ts: every test passed.
  expect(await runs.serial).toEqual({
    'first counts': 'passed',
    'second sees the first': 'passed',
    'one starts the order': 'passed',
    'two reads it': 'passed',
    'three reads both': 'passed',
  });
  expect(await runs.oneWorker).toEqual({
    a1: 'passed',
    a2: 'passed',
    b1: 'passed',
    b2: 'passed',
  });
});
