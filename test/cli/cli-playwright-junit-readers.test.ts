/**
 * `testrun run --junit` as CI systems read it, beside Playwright's own junit reporter on the same
 * fixture (test/fixtures/pw-attach: a test that attaches files and passes, one that fails, one whose
 * attachments the service refuses). The suite runs through the real API, worker, sandbox and
 * Chromium; Playwright's reporter runs on the host with the same @playwright/test and the machine's
 * Chromium. Both files are read by a JUnit parser (junit2json) and the rules of GitLab's and
 * dorny/test-reporter's parsers (./junit-readers.ts; docs/CLI.md, "How CI systems read the JUnit").
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { TestrunClient } from '@testrun/client';
import { deployFixture, oneSuiteProject, usePlaywrightWorker } from '../e2e/playwright-site';
import { present } from '../support/present';
import { createTenant } from '../support/harness';
import { runCliHere } from './cli-harness';
import { attachmentLines, errorLines, readJunit, surefireProblems, type ReadCase } from './junit-readers';

jest.setTimeout(300_000);

const FIXTURE = path.resolve(__dirname, '../fixtures/pw-attach');
const CONFIG = path.join(FIXTURE, 'e2e/playwright.config.ts');
const parts = usePlaywrightWorker({
  WORKER_CONCURRENCY: '1',
  WORKER_RECORDING_MAX_MB: '1',
  WORKER_ATTACHMENTS_MAX: '10',
});

/** Playwright's own junit reporter on the fixture's config (a wrapper only points it at the machine's Chromium). */
async function playwrightJunit(dir: string): Promise<string> {
  const output = path.join(dir, 'playwright-junit.xml');
  const wrapper = path.join(dir, 'pw-attach.config.js');
  writeFileSync(
    wrapper,
    `const loaded = require(${JSON.stringify(CONFIG)});
const team = loaded.default ?? loaded;
const launchOptions = { executablePath: '/usr/lib/chromium/chromium', args: ['--no-sandbox'] };
module.exports = {
  ...team,
  testDir: ${JSON.stringify(path.join(FIXTURE, 'e2e/tests'))},
  outputDir: ${JSON.stringify(path.join(dir, 'output'))},
  reporter: [['junit', { outputFile: ${JSON.stringify(output)} }]],
  projects: team.projects.map((p) => ({ ...p, use: { ...p.use, launchOptions } })),
};
`,
  );
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('JEST_')));
  await promisify(execFile)(process.execPath, [require.resolve('@playwright/test/cli'), 'test', '--config', wrapper], {
    env: { ...env, CI: '1', FORCE_COLOR: '0' },
  }).catch((error: unknown) => error); // a test fails: exit 1
  return readFileSync(output, 'utf8');
}

let dir: string;
let key: string;
let xml: { ours: string; theirs: string };
let ours: { tests: number; cases: ReadCase[] };
let theirs: { tests: number; cases: ReadCase[] };
let suiteRunId: string;

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'testrun-junit-readers-'));
  const tenant = await createTenant(parts.db, { scopes: ['run', 'deploy'] });
  key = tenant.key;
  const selection = { slug: 'all', playwright: { project: 'chromium' } };
  const project = oneSuiteProject('pw-attach', parts.site.url, 'e2e/playwright.config.ts', selection);
  await deployFixture(parts.api.url, key, path.join(FIXTURE, 'testrun.yaml'), project);
  const junit = path.join(dir, 'junit.xml');
  const env = { TESTRUN_API_URL: parts.api.url, TESTRUN_API_KEY: key };
  const args = ['run', '--project', 'pw-attach', '--suite', 'all', '--junit', junit, '--poll-interval', '300ms'];
  const run = await runCliHere([...args, '--json'], env);
  expect(run.code).toBe(1);
  suiteRunId = present((JSON.parse(run.stdout) as { suiteRunId: string | null }).suiteRunId, 'the suite run');
  xml = { ours: readFileSync(junit, 'utf8'), theirs: await playwrightJunit(dir) };
  ours = await readJunit(xml.ours);
  theirs = await readJunit(xml.theirs);
});

afterAll(() => rmSync(dir, { recursive: true, force: true }));

function byName(cases: ReadCase[], name: string): ReadCase {
  return present(
    cases.find((c) => c.name === name),
    name,
  );
}

it("lists a passed test's attachments in its <system-out>, as Playwright's junit reporter does", async () => {
  const client = new TestrunClient({ apiUrl: parts.api.url, apiKey: key });
  const entry = (await client.getSuiteRun(suiteRunId)).tests.find((t) => t.name === 'attaches and passes');
  expect(entry).toMatchObject({ status: 'passed', attachmentCount: 6 });
  const { run, viewUrl } = await client.getRunWithLink(present(entry, 'the entry').runId);
  const kept = present(run.attachments, 'the attachments');
  const view = present(viewUrl, 'the view link');
  // One `[[ATTACHMENT|…]]` line per file, in the order GET run lists them, after the run's view.
  expect(attachmentLines(byName(ours.cases, 'attaches and passes').systemOut)).toEqual([
    `[[ATTACHMENT|${view}]]`,
    ...kept.map((a) => `[[ATTACHMENT|${view}/artifacts/${a.id}]]`),
  ]);
  // Playwright's reporter writes a line for each file attached by path (a body has no file there):
  // the same line, its link the file under its output folder.
  const written = attachmentLines(byName(theirs.cases, 'attaches and passes').systemOut);
  expect(written).toEqual([
    expect.stringMatching(/^\[\[ATTACHMENT\|output\/.+\/attachments\/report-[0-9a-f]+\.html\]\]$/),
  ]);
  expect(kept.map((a) => a.name)).toContain('report');
});

it("reads as Playwright's own JUnit does, through GitLab's and dorny/test-reporter's rules", () => {
  expect(ours.tests).toBe(theirs.tests);
  const shape = (c: ReadCase) => ({
    suite: c.suite,
    name: c.name,
    classname: c.classname,
    gitlab: c.gitlab.status,
    dorny: c.dorny.status,
    group: c.dorny.group,
    timed: Number.isFinite(c.time),
  });
  expect(ours.cases.map(shape)).toEqual(theirs.cases.map(shape));
  expect(ours.cases.map((c) => c.gitlab.status)).toEqual(['success', 'failed', 'success']);
  // The failure: the same error, expected and received, in the element's text both read.
  const failed = byName(ours.cases, 'attaches and fails');
  const expected = byName(theirs.cases, 'attaches and fails');
  expect(errorLines(failed.dorny.details)).toEqual(errorLines(expected.dorny.details));
  expect(errorLines(failed.gitlab.failure)).toEqual([
    'Error: expect(received).toBe(expected) // Object.is equality',
    'Expected: 2',
    'Received: 1',
  ]);
  expect(failed.dorny.message).toEqual(expect.any(String));
  // GitLab's link of a failed test: the run's view (Playwright's: its first file, error-context.md).
  expect(failed.gitlab.attachment).toMatch(/\/view\/runs\//);
  expect(expected.gitlab.attachment).toMatch(/error-context\.md$/);
  // GitLab's `file`: ours the spec file from the project file's directory; Playwright's writes none.
  expect(failed.file).toBe('e2e/tests/attach.spec.ts');
  expect(expected.file).toBeUndefined();
});

it("meets Surefire's report schema but for the attributes Playwright's reporter adds too, and file", () => {
  // Both write a suite's timestamp and hostname, which the schema does not declare; ours writes the
  // test's file (GitLab reads it). Playwright's writes <system-out> before <failure>, out of its order.
  const added = ['testsuite@hostname undeclared', 'testsuite@timestamp undeclared'];
  expect(surefireProblems(xml.ours)).toEqual(['testcase@file undeclared', ...added]);
  expect(surefireProblems(xml.theirs)).toEqual(['testcase>failure out of order', ...added]);
});
