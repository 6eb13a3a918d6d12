/**
 * Nothing the service changes about a Playwright run is silent: a deployment's warnings (a
 * `webServer` it ignores, another @playwright/test than the service's) are printed by `testrun
 * deploy` and `testrun run --file`, listed by `testrun deployments`, and annotated by the GitHub
 * Action; and the `CI` the service sets in the sandbox (1 by default, as discovery sees it) is the
 * request's when a variable names it, in the config and in the tests. Through the real API, worker
 * and sandbox.
 */
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { DeploymentList } from '@testrun/contracts';
import { runActionStep } from '../action/action-harness';
import { usePlaywrightWorker, writeTeamRepository } from '../e2e/playwright-site';
import { createTenant } from '../support/harness';
import { runCliHere } from './cli-harness';

jest.setTimeout(300_000);

const parts = usePlaywrightWorker({ WORKER_CONCURRENCY: '1' });
const WEB_SERVER = 'the config starts a webServer: the service ignores it and runs the tests against the baseUrl';

/** The team's project: a config with a webServer that notes the CI it loaded with, a spec that checks both. */
function teamProject(baseUrl: string): string {
  const files: Record<string, string> = {
    'testrun.yaml': `slug: pw-env
name: Environment
baseUrl: ${baseUrl}
playwright:
  config: e2e/playwright.config.ts
suites:
  - slug: all
    playwright: {}
`,
    'e2e/playwright.config.ts': `import { defineConfig } from '@playwright/test';
// What this config saw of CI as it loaded: the tests' processes inherit it.
process.env.CONFIG_SAW_CI = process.env.CI ?? '(unset)';
export default defineConfig({
  testDir: './tests',
  webServer: { command: 'npm start', url: 'http://127.0.0.1:3000', reuseExistingServer: true },
});
`,
    'e2e/tests/env.spec.ts': `import { expect, test } from '@playwright/test';
test('sees CI as the request sets it', () => {
  const expected = process.env.EXPECTED_CI ?? '1';
  expect(process.env.CONFIG_SAW_CI).toBe(expected);
  expect(process.env.CI ?? '(unset)').toBe(expected);
});
`,
    // The team's pinned Playwright (the packer reads its version): one the service does not keep,
    // so the tests run on the nearest newer version it has (infra/playwright-versions), 1.39.
    'node_modules/@playwright/test/package.json': '{ "name": "@playwright/test", "version": "1.38.0" }',
  };
  const dir = writeTeamRepository('testrun-pw-env-', files);
  return dir;
}

let dir: string;
let env: Record<string, string>;
let key: string;

beforeAll(async () => {
  dir = teamProject(parts.site.url);
  const tenant = await createTenant(parts.db, { scopes: ['run', 'preview', 'deploy'] });
  key = tenant.key;
  env = { TESTRUN_API_URL: parts.api.url, TESTRUN_API_KEY: key };
});

afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The project's versions as the API lists them. */
async function listed(): Promise<DeploymentList['deployments']> {
  const json = await runCliHere(['deployments', '--project', 'pw-env', '--json'], env);
  return (JSON.parse(json.stdout) as DeploymentList).deployments;
}

it('prints every warning of a deployment, and lists them with its version', async () => {
  const deployed = await runCliHere(['deploy', '--file', path.join(dir, 'testrun.yaml')], env);
  expect(deployed.code).toBe(0);
  const [version] = await listed();
  expect(version?.warnings).toEqual([
    WEB_SERVER,
    expect.stringMatching(
      /@playwright\/test 1\.38\.0; the service has no 1\.38 \(it has 1\.39–1\.\d+\) and runs it on 1\.39\.0,/,
    ),
  ]);
  for (const warning of version?.warnings ?? []) expect(deployed.stderr).toContain(`warning: ${warning}\n`);

  const table = await runCliHere(['deployments', '--project', 'pw-env'], env);
  expect(table.code).toBe(0);
  expect(table.stdout).toMatch(/^VERSION .* WARNINGS\n1\s+yes\s+dep_\w+ .* 2\n/);
  expect(table.stdout).toContain(
    `\nVersion 1:\n${(version?.warnings ?? []).map((warning) => `  warning: ${warning}`).join('\n')}\n`,
  );
});

it('runs with CI=1 by default, as discovery listed the tests', async () => {
  const run = await runCliHere(['run', '--project', 'pw-env', '--suite', 'all', '--poll-interval', '300ms'], env);
  // The whole output on a failure: the failed test's summary says what CI it saw.
  expect(run).toMatchObject({ code: 0 });
});

it("gives the config and the tests the request's CI, empty or 0, and `run --file` prints the warnings", async () => {
  const empty = await runCliHere(
    ['run', '--file', path.join(dir, 'testrun.yaml'), '--suite', 'all', '--var', 'CI=', '--var', 'EXPECTED_CI='],
    env,
  );
  expect(empty).toMatchObject({ code: 0 });
  expect(empty.stderr).toContain(`warning: ${WEB_SERVER}\n`);
  const zero = await runCliHere(
    ['run', '--project', 'pw-env', '--suite', 'all', '--var', 'CI=0', '--var', 'EXPECTED_CI=0'],
    env,
  );
  expect(zero).toMatchObject({ code: 0 });
});

it('the GitHub Action annotates each warning on the project file', async () => {
  const file = path.join(dir, 'testrun.yaml');
  const step = await runActionStep({
    'api-url': parts.api.url,
    'api-key': key,
    file,
    suite: 'all',
    'poll-interval': '300ms',
  });
  expect(step.outputs).toMatchObject({ status: 'passed' });
  const version = step.outputs.version ?? '';
  expect(step.log).toContain(`::warning title=Testrun version ${version} of pw-env,file=${file}::${WEB_SERVER}\n`);
  expect(step.log).toMatch(/^::warning title=Testrun version \d+ of pw-env,file=.*::.*@playwright\/test 1\.38\.0/m);
});

it('refuses the deploy of a bundle made with another @playwright/test when the project says versionMismatch: refuse', async () => {
  const file = path.join(dir, 'testrun.yaml');
  const strict = path.join(dir, 'strict.yaml');
  writeFileSync(
    strict,
    readFileSync(file, 'utf8').replace(
      '  config: e2e/playwright.config.ts\n',
      '  config: e2e/playwright.config.ts\n  versionMismatch: refuse\n',
    ),
  );
  // The project may not exist yet (this test run alone): its listing then holds no versions.
  const versions = async () => ((await listed()) as DeploymentList['deployments'] | undefined)?.length ?? 0;
  const before = await versions();
  const refused = await runCliHere(['deploy', '--file', strict], env);
  expect(refused.code).not.toBe(0);
  // Named at its line in the file, with both versions and the two ways on.
  expect(refused.stderr).toMatch(
    /strict\.yaml:\d+:\d+: versionMismatch the bundle was made with @playwright\/test 1\.38\.0, and the service runs 1\.39\.0: pin @playwright\/test .* or set versionMismatch: warn/,
  );
  // Nothing was deployed.
  expect(await versions()).toBe(before);
});
