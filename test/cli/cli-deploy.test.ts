/**
 * `testrun deploy`, `deployments`, `activate` and `run --file`: the published program in this
 * process (runCliHere) against the API behind its real HTTP server, deploying real YAML files. An
 * invalid file is printed at its line and column, whether YAML finds the fault or the service does
 * (by JSON pointer). No worker: `run --file` is followed with --no-wait, and the suite run it
 * enqueued is read back to check it executes the preview.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { DeploymentList } from '@testrun/contracts';
import { serveTestApi } from '../api/api-harness';
import { createTenant } from '../support/harness';
import { runCliHere } from './cli-harness';

let served: Awaited<ReturnType<typeof serveTestApi>>;
beforeAll(async () => {
  served = await serveTestApi();
});
afterAll(async () => {
  await served.close();
});

const dir = mkdtempSync(path.join(tmpdir(), 'testrun-deploy-'));

/** Writes `text` to a file of the temporary directory and gives its path. */
function yamlFile(name: string, text: string): string {
  const file = path.join(dir, name);
  writeFileSync(file, text);
  return file;
}

/** A project file in YAML: suite `smoke` with the tests `home` and `about` (and `extra` when asked). */
function shopYaml(slug: string, options: { aboutPath?: string; extra?: boolean } = {}): string {
  return `# The shop's tests
slug: ${slug}
name: Shop
baseUrl: http://127.0.0.1:2
suites:
  - slug: smoke
    name: Smoke
    tests:
      - key: home
        name: Home page
        steps:
          - action: goto
            url: /
      - key: about
        name: About page
        steps:
          - action: goto
            url: ${options.aboutPath ?? '/about'}
${
  options.extra
    ? `      - key: extra
        name: Extra
        steps:
          - action: goto
            url: /extra
`
    : ''
}`;
}

const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

async function tenant() {
  const t = await createTenant(served.api.db, { scopes: ['run', 'preview', 'deploy'] });
  return { ...t, env: { TESTRUN_API_URL: `http://127.0.0.1:${served.port}`, TESTRUN_API_KEY: t.key } };
}

async function versions(env: Record<string, string>, slug: string) {
  const listed = await runCliHere(['deployments', '--project', slug, '--json'], env);
  expect(listed).toMatchObject({ code: 0, stderr: '' });
  return (JSON.parse(listed.stdout) as DeploymentList).deployments.map((d) => [d.version, d.active]);
}

it('deploys a file: prints the version and its changes; --dry-run stores nothing; --preview is not active', async () => {
  const t = await tenant();
  const file = yamlFile('shop.yaml', shopYaml('shop'));
  const first = await runCliHere(['deploy', '--file', file], t.env);
  expect(first).toMatchObject({ code: 0, stderr: '' });
  expect(first.stdout).toMatch(/^Deployed shop version 1 \(dep_\w+, active\): 2 added, 0 removed, 0 changed\.\n/);
  expect(first.stdout).toContain('  + smoke/home\n  + smoke/about\n');

  const changed = yamlFile('shop-2.yaml', shopYaml('shop', { aboutPath: '/about-us', extra: true }));
  const dry = await runCliHere(['deploy', '--file', changed, '--dry-run'], t.env);
  expect(dry).toMatchObject({ code: 0, stderr: '' });
  expect(dry.stdout).toBe(
    'Dry run of shop: 1 added, 0 removed, 1 changed; nothing stored.\n  + smoke/extra\n  ~ smoke/about\n',
  );
  expect(await versions(t.env, 'shop')).toEqual([[1, true]]);

  const preview = await runCliHere(['deploy', '--file', changed, '--preview'], t.env);
  expect(preview).toMatchObject({ code: 0, stderr: '' });
  expect(preview.stdout).toMatch(/^Deployed shop version 2 \(dep_\w+, a preview, not active\): 1 added/);
  expect(await versions(t.env, 'shop')).toEqual([
    [2, false],
    [1, true],
  ]);

  const table = await runCliHere(['deployments', '--project', 'shop'], t.env);
  expect(table.code).toBe(0);
  expect(table.stdout.split('\n')[0]).toMatch(/^VERSION\s+ACTIVE\s+DEPLOYMENT ID\s+CREATED\s+BY\s+CHANGES\s+WARNINGS$/);
  expect(table.stdout).toMatch(/\n2\s+no\s+dep_\w+ .* 1 added, 0 removed, 1 changed\s+0\n1\s+yes\s+dep_/);

  const activated = await runCliHere(['activate', '--project', 'shop', '--version', '2'], t.env);
  expect(activated).toMatchObject({ code: 0, stderr: '' });
  expect(activated.stdout).toMatch(/^Activated shop version 2 \(dep_\w+\)\.\n$/);
  expect(await versions(t.env, 'shop')).toEqual([
    [2, true],
    [1, false],
  ]);
  const missing = await runCliHere(['activate', '--project', 'shop', '--version', '7'], t.env);
  expect(missing).toMatchObject({ code: 2, stdout: '', stderr: 'testrun: project shop has no version 7\n' });
  for (const r of [first, dry, preview, table, activated, missing]) expect(r.stdout + r.stderr).not.toContain(t.key);
});

it('prints a YAML syntax error as file:line:column and deploys nothing', async () => {
  const t = await tenant();
  const text = shopYaml('broken').replace('name: About page', 'name: About: page');
  const file = yamlFile('broken.yaml', text);
  const res = await runCliHere(['deploy', '--file', file], t.env);
  expect(res.code).toBe(2);
  expect(res.stdout).toBe('');
  const [first] = res.stderr.split('\n');
  // Line 15, where the value `About: page` starts (column 15).
  expect(first).toBe(`${file}:15:15: Nested mappings are not allowed in compact mappings`);
  expect(res.stderr).toContain(`testrun: ${file} is not a valid project file; nothing was deployed\n`);
  expect(await served.api.db.project.count({ where: { workspaceId: t.workspace.id } })).toBe(0);
});

it("prints the service's errors at the line of the node their JSON pointer names", async () => {
  const t = await tenant();
  // Suite 1, test 2, step 1: an action that does not exist (line 16), and a test with no name.
  const text = shopYaml('shop')
    .replace(
      '          - action: goto\n            url: /about',
      '          - action: teleport\n            url: /about',
    )
    .replace('        name: Home page\n', '');
  const file = yamlFile('invalid.yaml', text);
  const lines = text.split('\n');
  const lineOf = (needle: string) => lines.findIndex((l) => l.includes(needle)) + 1;
  const res = await runCliHere(['deploy', '--file', file], t.env);
  expect(res.code).toBe(2);
  expect(res.stdout).toBe('');
  const located = res.stderr.split('\n').filter((l) => l.startsWith(`${file}:`));
  expect(located).toEqual([
    // The missing name: the test that lacks it, at its first key.
    `${file}:${lineOf('- key: home')}:9: name is required`,
    // The bad step: at its action's value.
    expect.stringMatching(
      new RegExp(`^${escape(file)}:${lineOf('action: teleport')}:21: action must be one of "goto", `),
    ),
  ]);
  expect(res.stderr).toContain('(invalid_project); nothing was deployed\n');
  expect(await served.api.db.project.count({ where: { workspaceId: t.workspace.id } })).toBe(0);
});

it('run --file --suite deploys a preview of the file and runs it, leaving the active version alone', async () => {
  const t = await tenant();
  expect((await runCliHere(['deploy', '--file', yamlFile('live.yaml', shopYaml('pr'))], t.env)).code).toBe(0);
  const file = yamlFile('pr.yaml', shopYaml('pr', { extra: true }));
  const res = await runCliHere(
    ['run', '--file', file, '--suite', 'smoke', '--base-url', 'http://127.0.0.1:3', '--no-wait', '--json'],
    t.env,
  );
  expect(res.code).toBe(0);
  expect(res.stderr).toMatch(/^Deployed a preview of pr: version 2 \(dep_\w+\)\n/);
  const previewId = /\((dep_\w+)\)/.exec(res.stderr)?.[1];
  const report = JSON.parse(res.stdout) as { suiteRunId: string; project: string; suite: string };
  expect(report).toMatchObject({ project: 'pr', suite: 'smoke' });
  const suiteRun = await served.api.db.suiteRun.findUniqueOrThrow({ where: { id: report.suiteRunId } });
  expect(suiteRun.deploymentId).toBe(previewId);
  expect(await served.api.db.run.count({ where: { suiteRunId: report.suiteRunId } })).toBe(3);
  expect(await versions(t.env, 'pr')).toEqual([
    [2, false],
    [1, true],
  ]);

  const invalid = yamlFile(
    'pr-bad.yaml',
    shopYaml('pr').replace('action: goto\n            url: /about', 'action: fly'),
  );
  const bad = await runCliHere(['run', '--file', invalid, '--suite', 'smoke', '--no-wait'], t.env);
  expect(bad.code).toBe(2);
  expect(bad.stderr).toMatch(new RegExp(`^${escape(invalid)}:17:\\d+: action must be one of`, 'm'));
});

it("deploys the Quickstart's examples/shop.yaml as its team would (a dry run here)", async () => {
  const t = await tenant();
  const res = await runCliHere(
    ['deploy', '--file', path.join(__dirname, '../../examples/shop.yaml'), '--dry-run'],
    t.env,
  );
  expect(res).toMatchObject({ code: 0, stderr: '' });
  expect(res.stdout).toMatch(/^Dry run of shop: \d+ added, 0 removed, 0 changed; nothing stored\.\n {2}\+ smoke\//);
});
