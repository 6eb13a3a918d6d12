/**
 * Setup projects are visible (docs/PLAYWRIGHT.md, "Setup projects"): a project whose tests depend on
 * a setup project that passes (two setup tests) and on one that fails (one setup test). Through the
 * real API, worker, sandbox and Chromium: the suite run lists its setup tests (API and view) without
 * counting them, a dependant of the failed setup links to it (API and its run page), `testrun run`
 * prints them, and its JUnit holds as many test cases as Playwright's own junit reporter writes for
 * the same project, run here on the host. The failed setup test's evidence (its failure screenshot,
 * trace and attachments) is kept, served to the suite run's view only, and shown on its entry; a run
 * of one test outside a suite run keeps and shows its setup tests too.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { XMLParser, XMLValidator } from 'fast-xml-parser';
import type { RunReport, SetupArtifact, SetupTest } from '@testrun/contracts';
import { usePlaywrightWorker } from '../e2e/playwright-site';
import { apiClient } from '../e2e/support';
import { applySampleProject, createTenant, insertSuiteRuns, sampleProject } from '../support/harness';
import { present } from '../support/present';
import { runCliHere } from './cli-harness';

jest.setTimeout(300_000);

const FIXTURE = path.resolve(__dirname, '../fixtures/pw-setup');
const parts = usePlaywrightWorker({ WORKER_CONCURRENCY: '1' });

type Case = { name: string; classname: string };
type Suite = { name: string; hostname: string; tests: string; failures: string; testcase: Case[] };

function parseJunit(xml: string): { tests: string; suites: Suite[] } {
  expect(XMLValidator.validate(xml)).toBe(true);
  const parsed = new XMLParser({
    ignoreAttributes: false,
    attributeNamePrefix: '',
    isArray: (name) => name === 'testsuite' || name === 'testcase',
  }).parse(xml) as { testsuites: { tests: string; testsuite: Suite[] } };
  return { tests: parsed.testsuites.tests, suites: parsed.testsuites.testsuite };
}

/** Each test case as `project suite | classname | name` (the files relative to the config's testDir, as Playwright names them). */
function casesOf(suites: Suite[]): string[] {
  return suites.flatMap((s) => s.testcase.map((c) => `${s.hostname} ${s.name} | ${c.classname} | ${c.name}`)).sort();
}

/** Playwright's own junit reporter on the fixture's config, on the host. */
async function playwrightJunit(dir: string): Promise<string> {
  const output = path.join(dir, 'playwright-junit.xml');
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('JEST_')));
  const config = path.join(FIXTURE, 'e2e/playwright.config.ts');
  await promisify(execFile)(
    process.execPath,
    [require.resolve('@playwright/test/cli'), 'test', '--config', config, '--reporter=junit', '--output', dir],
    { env: { ...env, CI: '1', FORCE_COLOR: '0', PLAYWRIGHT_JUNIT_OUTPUT_NAME: output } },
  ).catch((error: unknown) => error); // its broken setup fails the run (exit 1)
  return readFileSync(output, 'utf8');
}

/** A view link (the service's public URL) on this test's API. */
function here(link: string): string {
  const url = new URL(link);
  return `${parts.api.url}${url.pathname}${url.search}`;
}

let dir: string;
let env: Record<string, string>;
let key: string;
let workspaceId: string;
/** The suite run of the first test, whose setup evidence the second reads. */
let suiteRunId = '';

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'testrun-pw-setup-'));
  const tenant = await createTenant(parts.db, { scopes: ['run', 'preview', 'deploy'] });
  key = tenant.key;
  workspaceId = tenant.workspace.id;
  env = { TESTRUN_API_URL: parts.api.url, TESTRUN_API_KEY: tenant.key };
  const deployed = await runCliHere(['deploy', '--file', path.join(FIXTURE, 'testrun.yaml')], env);
  expect(deployed).toMatchObject({ code: 0 });
});

afterAll(() => rmSync(dir, { recursive: true, force: true }));

it('shows the setup tests of a suite run in the API, the view, testrun run and its JUnit', async () => {
  const junit = path.join(dir, 'junit.xml');
  const args = ['run', '--project', 'pw-setup', '--suite', 'all', '--base-url', parts.site.url, '--junit', junit];
  const run = await runCliHere([...args, '--poll-interval', '300ms', '--json'], env);
  // The guarded test ended setup_failed: an error.
  expect(run.code).toBe(2);
  const report = JSON.parse(run.stdout) as RunReport;
  suiteRunId = report.suiteRunId ?? '';

  // The API: the suite run's four tests are counted, its three setup tests listed apart.
  const client = apiClient(parts.api.url, key);
  const suiteRun = await client.getSuiteRun(report.suiteRunId ?? '');
  expect([suiteRun.total_count, suiteRun.passed_count, suiteRun.error_count]).toEqual([4, 3, 1]);
  const setups = suiteRun.setup_tests ?? [];
  expect(setups.map((s) => [s.name, s.status]).sort()).toEqual([
    ['[broken-setup] › seed the catalog', 'failed'],
    ['[setup] › create the admin account', 'passed'],
    ['[setup] › take the database snapshot', 'passed'],
  ]);
  const broken = setups.find((s) => s.status === 'failed');
  expect(broken).toMatchObject({
    location: { file: 'e2e/tests/catalog.setup.ts', line: 3, project: 'broken-setup', titlePath: ['seed the catalog'] },
    failure: { message: expect.stringMatching(/products inserted/) as unknown },
  });
  for (const s of setups) expect(s.executions).toBeGreaterThanOrEqual(1);

  // The dependant of the failed setup links to it.
  const guardedEntry = suiteRun.tests.find((t) => t.name === 'sells from the catalog');
  const guarded = await client.getRun(guardedEntry?.runId ?? '');
  expect(guarded).toMatchObject({ status: 'error', error: { code: 'setup_failed' } });
  expect(guarded.failed_setup).toEqual({
    id: broken?.id,
    name: '[broken-setup] › seed the catalog',
    status: 'failed',
    result_summary: broken?.result_summary,
    location: broken?.location,
  });
  const orders = await client.getRun(suiteRun.tests.find((t) => t.name === 'orders › lists the orders')?.runId ?? '');
  expect(orders.failed_setup).toBeUndefined();

  // The view: the suite page's setup section with the failing step's error; the run page's link to it.
  const suitePage = await (await fetch(here(suiteRun.suiteRunUrl))).text();
  expect(suitePage).toMatch(/<h2 id="setup-tests-heading">\s*Setup tests/);
  for (const s of setups) expect(suitePage).toContain(`id="setup-${s.id}"`);
  expect(suitePage).toContain('insert the products');
  expect(suitePage).toMatch(/products inserted/);
  const guardedReport = report.tests.find((t) => t.runId === guarded.id);
  const runPage = await (await fetch(here(guardedReport?.viewUrl ?? ''))).text();
  const link = /<p class="failed-setup" data-failed-setup="([^"]+)">[^]*?<a href="([^"]+)">/.exec(runPage);
  expect(link?.[1]).toBe(broken?.id);
  const target = new URL((link?.[2] ?? '').replace(/&amp;/g, '&'), parts.api.url);
  expect(target.hash).toBe(`#setup-${broken?.id}`);
  expect((await fetch(target)).status).toBe(200);

  // testrun run: each setup test printed as it ended, the failed one's error at the end.
  expect(run.stderr).toMatch(/ {2}passed {2}\[setup\] › e2e\/tests\/admin\.setup\.ts › create the admin account \(/);
  expect(run.stderr).toMatch(/ {2}FAILED {2}\[broken-setup\] › e2e\/tests\/catalog\.setup\.ts › seed the catalog \(/);
  expect(run.stderr).toMatch(/\nFAILED \[broken-setup\] › e2e\/tests\/catalog\.setup\.ts › seed the catalog: [^\n]+/);
  expect(report.message).toMatch(/; setup tests \(not counted\): 2 passed, 1 failed\.$/);
  expect(report.setupTests?.map((s) => s.id).sort()).toEqual(setups.map((s) => s.id).sort());

  // JUnit: the test cases Playwright's own junit reporter writes for the same project, setup tests included.
  const ours = parseJunit(readFileSync(junit, 'utf8'));
  const theirs = parseJunit(await playwrightJunit(dir));
  expect(ours.tests).toBe('7');
  expect(ours.tests).toBe(theirs.tests);
  expect(casesOf(ours.suites)).toEqual(casesOf(theirs.suites));
  const catalog = ours.suites.find((s) => path.basename(s.name) === 'catalog.setup.ts');
  expect(catalog).toMatchObject({ hostname: 'broken-setup', tests: '1', failures: '1' });
});

/** `<view link>/artifacts/<id>`: where a view serves a file. */
function artifactUrl(viewLink: string, id: string): string {
  const url = new URL(here(viewLink));
  url.pathname = `${url.pathname}/artifacts/${id}`;
  return url.toString();
}

/** The kinds and names of a setup test's files, sorted. */
function filesOf(setup: SetupTest | undefined): string[] {
  return (setup?.artifacts ?? []).map((a) => `${a.kind} ${a.kind === 'attachment' ? a.name : a.content_type}`).sort();
}

const FAILED_SETUP_FILES = [
  'attachment catalog.png',
  'attachment seed log',
  'screenshot image/png',
  'trace application/zip',
];

/** A file of the failed setup test: 200 with its content type, its body. */
async function served(url: string, type: string): Promise<Buffer> {
  const res = await fetch(url);
  expect([res.status, res.headers.get('content-type')]).toEqual([200, type]);
  return Buffer.from(await res.arrayBuffer());
}

const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47]);

it("keeps a failed setup test's screenshot, trace and attachments: in the API, served to its suite run's view, shown on its entry", async () => {
  const client = apiClient(parts.api.url, key);
  const brokenOf = async () =>
    (await client.getSuiteRun(suiteRunId)).setup_tests?.find((s) => s.name === '[broken-setup] › seed the catalog');
  // Its files are written as it ends, beside its dependants' runs: a few moments at most.
  for (let i = 0; i < 50 && filesOf(await brokenOf()).length < FAILED_SETUP_FILES.length; i++)
    await new Promise((resolve) => setTimeout(resolve, 200));
  const suiteRun = await client.getSuiteRun(suiteRunId);
  const broken = suiteRun.setup_tests?.find((s) => s.name === '[broken-setup] › seed the catalog');
  expect(filesOf(broken)).toEqual(FAILED_SETUP_FILES);
  // The passed ones kept nothing (the default policy keeps evidence of what does not pass).
  for (const s of suiteRun.setup_tests ?? []) if (s !== broken) expect(s.artifacts).toBeUndefined();
  const file = (test: (a: SetupArtifact) => boolean) => present(broken?.artifacts?.find(test), 'a setup file');
  const shot = file((a) => a.kind === 'screenshot');
  const trace = file((a) => a.kind === 'trace');
  const log = file((a) => a.name === 'seed log');
  const image = file((a) => a.name === 'catalog.png');

  // Served as a run's artifacts are, to the suite run's view link.
  expect((await served(artifactUrl(suiteRun.suiteRunUrl, shot.id), 'image/png')).subarray(0, 4)).toEqual(PNG);
  expect((await served(artifactUrl(suiteRun.suiteRunUrl, image.id), 'image/png')).subarray(0, 4)).toEqual(PNG);
  expect((await served(artifactUrl(suiteRun.suiteRunUrl, trace.id), 'application/zip')).subarray(0, 2).toString()).toBe(
    'PK',
  );
  const text = await served(artifactUrl(suiteRun.suiteRunUrl, log.id), 'text/plain; charset=utf-8');
  expect(text.toString()).toBe('seeded 0 of 2 products');

  // Not to another workspace's suite run, nor to the view link of a run of this one.
  const other = await createTenant(parts.db, { scopes: ['run'] });
  const applied = await applySampleProject(parts.db, other.workspace.id, sampleProject(`p-${other.tag}`, { count: 1 }));
  const otherSuite = present(applied.suites[0], 'the sample suite');
  const created = await insertSuiteRuns(parts.db, other.workspace.id, otherSuite.id, { baseUrl: 'http://127.0.0.1:2' });
  const otherRun = await apiClient(parts.api.url, other.key).getSuiteRun(present(created.suiteRunId, 'its suite run'));
  expect((await fetch(artifactUrl(otherRun.suiteRunUrl, shot.id))).status).toBe(404);
  const guardedId = present(
    suiteRun.tests.find((t) => t.name === 'sells from the catalog'),
    'guarded',
  ).runId;
  const cli = await runCliHere(['status', guardedId, '--json'], env);
  const guardedLink = (JSON.parse(cli.stdout) as { viewUrl: string }).viewUrl;
  expect((await fetch(artifactUrl(guardedLink, shot.id))).status).toBe(404);

  // Shown on its entry: the screenshot drawn, the trace in the hosted viewer, the attachments.
  const page = await (await fetch(here(suiteRun.suiteRunUrl))).text();
  const entry = present(
    new RegExp(`<li class="test setup-test" data-setup="${broken?.id}"[^]*?</li>\\s*</ul>\\s*</div>`).exec(page),
    "the setup test's entry",
  )[0];
  expect(entry).toContain(`data-setup-evidence="${broken?.id}"`);
  expect(entry).toMatch(new RegExp(`<img src="[^"]+/artifacts/${shot.id}"`));
  // The screenshot opens in the full-size viewer, a sequence of its own.
  expect(entry).toMatch(new RegExp(`data-viewer="setup:${broken?.id}"\\s+data-viewer-order="0"`));
  expect(entry).toMatch(new RegExp(`trace-viewer/index\\.html\\?trace=[^"]+${trace.id}`));
  expect(entry).toMatch(
    new RegExp(`data-attachment="${log.id}"[^]*seed log[^]*<pre class="attachment-text">seeded 0 of 2 products</pre>`),
  );
  expect(entry).toMatch(new RegExp(`<img src="[^"]+/artifacts/${image.id}" alt="catalog.png"`));
});

it('a run of one test outside a suite run keeps and shows its setup tests, and links to the failed one', async () => {
  const test = await parts.db.test.findFirstOrThrow({
    where: { name: 'sells from the catalog', workspaceId },
    select: { id: true },
  });
  const run = await runCliHere(['run', '--test', test.id, '--base-url', parts.site.url, '--json'], env);
  expect(run.code).toBe(2);
  const report = JSON.parse(run.stdout) as RunReport;
  // testrun run lists the run's own setup tests, as it lists a suite run's.
  expect(report.setupTests?.map((s) => [s.name, s.status])).toEqual([['[broken-setup] › seed the catalog', 'failed']]);
  const lone = await apiClient(parts.api.url, key).getRun(present(report.runIds[0], 'the run'));
  expect(lone).toMatchObject({ suite_run_id: null, status: 'error', error: { code: 'setup_failed' } });
  expect(lone.setup_tests?.map((s) => [s.name, s.status])).toEqual([['[broken-setup] › seed the catalog', 'failed']]);
  const setup = lone.setup_tests?.[0];
  expect(lone.failed_setup?.id).toBe(setup?.id);
  expect(filesOf(setup)).toEqual(FAILED_SETUP_FILES);

  // Its page shows the setup test, with its evidence served under the run's own link, and links to it.
  const viewUrl = present(report.tests[0]?.viewUrl, "the run's view link");
  const page = await (await fetch(here(viewUrl))).text();
  expect(page).toMatch(/<h2 id="setup-tests-heading">\s*Setup tests/);
  expect(page).toContain(`id="setup-${setup?.id}"`);
  expect(page).toMatch(
    new RegExp(`<p class="failed-setup" data-failed-setup="${setup?.id}">[^]*?<a href="#setup-${setup?.id}">`),
  );
  const shot = present(
    setup?.artifacts?.find((a) => a.kind === 'screenshot'),
    'its screenshot',
  );
  expect(page).toContain(`/artifacts/${shot.id}"`);
  expect((await served(artifactUrl(viewUrl, shot.id), 'image/png')).subarray(0, 4)).toEqual(PNG);
});
