import { execFileSync } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setSecretVariable } from '../../packages/admin/src/operations';
import { runViewUrl } from '@testrun/core/view-links';
import type { SeededSuite } from './seed';
import { defined, startViewSuite, type ViewEnv, type ViewSuite, type Viewer } from './support';

// What a run's trace holds: each step of the test as a named group (the failing one too), none of
// the worker's own calls, and no secret in clear: not a secret variable's value, not a password
// typed as a literal value. The page echoes what was typed, so a value that is not masked shows.
let world: ViewSuite;
let env: ViewEnv;
let viewer: Viewer;
let suite: SeededSuite;
let login: Server;

const TYPED_PASSWORD = 'literal-pass-Xy19q';
const PIN_SECRET = 'pin-secret-7Kq2w';

const LOGIN_PAGE = `<!doctype html><html><head><meta charset="utf-8"><title>Sign in</title></head><body>
<h1>Sign in</h1>
<input id="user"><input id="password" type="password"><input id="pin">
<button id="login">Sign in</button>
<script>
  document.getElementById('login').addEventListener('click', () => {
    const v = (id) => document.getElementById(id).value;
    document.querySelector('h1').textContent = 'Signed in as ' + v('user') + ' with ' + v('password') + ' and ' + v('pin');
  });
</script></body></html>`;

beforeAll(async () => {
  login = createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end(LOGIN_PAGE));
  await new Promise<void>((resolve) => login.listen(0, '127.0.0.1', resolve));
  world = await startViewSuite(
    [
      {
        name: 'Sign in',
        steps: [
          { action: 'goto', url: '/' },
          { action: 'fill', selector: '#user', value: 'ada' },
          { action: 'fill', selector: '#password', value: TYPED_PASSWORD },
          { action: 'fill', selector: '#pin', value: '{{secrets.PIN}}' },
          { action: 'click', selector: '#login' },
          { action: 'expectText', selector: 'h1', text: 'Welcome back', timeoutMs: 1_000 },
          { action: 'click', selector: '#logout' },
        ],
      },
    ],
    {
      baseUrl: `http://127.0.0.1:${(login.address() as AddressInfo).port}`,
      prepare: (e, s) => setSecretVariable(e.db, e.api.keys.headers, { workspaceId: s.workspaceId }, 'PIN', PIN_SECRET),
    },
  );
  ({ env, viewer, suite } = world);
}, 120_000);

afterAll(async () => {
  await world.close();
  await new Promise((resolve) => login.close(resolve));
});

const runId = () => defined(suite.runs[0], 'the run').id;

/** Every entry of the run's stored trace, unzipped. */
async function traceEntries(): Promise<Map<string, Buffer>> {
  const artifact = await env.db.artifact.findFirstOrThrow({ where: { runId: runId(), kind: 'trace' } });
  const file = path.join(await mkdtemp(path.join(tmpdir(), 'trace-test-')), 'trace.zip');
  await writeFile(file, defined(await env.api.store.get(artifact.storageKey), 'the stored trace'));
  try {
    const names = execFileSync('unzip', ['-Z1', file], { encoding: 'utf8' }).split('\n').filter(Boolean);
    return new Map(
      names.map((name) => [name, execFileSync('unzip', ['-p', file, name], { maxBuffer: 256 * 1024 * 1024 })]),
    );
  } finally {
    await rm(path.dirname(file), { recursive: true, force: true });
  }
}

type TraceEvent = { type: string; callId?: string; parentId?: string; class?: string; method?: string; title?: string };

/** The `before` events of the trace's action log: one per call Playwright recorded, groups included. */
function actions(entries: Map<string, Buffer>): TraceEvent[] {
  const log = defined(entries.get('trace.trace'), 'the action log').toString('utf8');
  return log
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as TraceEvent)
    .filter((e) => e.type === 'before');
}

/** The labels of the steps that ran, as the view numbers them: `3. fill "#password"`. */
async function executedSteps(): Promise<string[]> {
  const rows = await env.db.stepResult.findMany({ where: { runId: runId() }, orderBy: { index: 'asc' } });
  expect(rows.map((r) => r.outcome)).toEqual(['passed', 'passed', 'passed', 'passed', 'passed', 'failed', 'skipped']);
  return rows.filter((r) => r.outcome !== 'skipped').map((r) => `${r.index}. ${r.label}`);
}

test("every step that ran is a named group of the trace's action list, the failing one included", async () => {
  const groups = actions(await traceEntries()).filter((e) => e.method === 'tracingGroup');
  const steps = await executedSteps();
  expect(steps[5]).toBe('6. expectText "h1"');
  expect(groups.map((g) => g.title)).toEqual(steps);
});

test("the worker's own calls are not in the trace: every action belongs to a step", async () => {
  const all = actions(await traceEntries());
  const groupIds = new Set(all.filter((e) => e.method === 'tracingGroup').map((e) => e.callId));
  const loose = all.filter((e) => e.method !== 'tracingGroup' && !groupIds.has(e.parentId));
  expect(loose.map((e) => `${e.class}.${e.method}`)).toEqual([]);
  const bookkeeping = all.filter((e) => ['screenshot', 'title', 'newCDPSession', 'newPage'].includes(e.method ?? ''));
  expect(bookkeeping.map((e) => `${e.class}.${e.method}`)).toEqual([]);
  // The steps did act: the fills are there, under their groups.
  expect(all.filter((e) => e.method === 'fill')).toHaveLength(3);
});

test('no secret value is in the trace, the step rows or the view, not even a typed password', async () => {
  const secrets = [TYPED_PASSWORD, PIN_SECRET];
  const spelled = secrets.flatMap((s) => [s, encodeURIComponent(s), Buffer.from(s).toString('base64')]);
  const entries = await traceEntries();
  const leaks = [...entries].flatMap(([name, body]) =>
    spelled.filter((s) => body.includes(s)).map((s) => `${name}: ${s}`),
  );
  expect(leaks).toEqual([]);
  // The DOM snapshots were taken, with the password field's value masked.
  const log = defined(entries.get('trace.trace'), 'the action log').toString('utf8');
  expect(log).toContain('"__playwright_value_":"****","id":"password"');

  const rows = JSON.stringify(await env.db.stepResult.findMany({ where: { runId: runId() } }));
  // The run keeps its test's definition as it was written (a literal value included): what it wrote is checked.
  const { steps: _definition, ...written } = await env.db.run.findUniqueOrThrow({ where: { id: runId() } });
  const run = JSON.stringify(written);
  const page = await (await fetch(runViewUrl(env.api.origin, env.api.keys.view, runId()))).text();
  for (const [where, text] of Object.entries({ rows, run, page }))
    expect({ where, found: secrets.filter((s) => text.includes(s)) }).toEqual({ where, found: [] });
  // The echo of the page reached the failing step's row, masked.
  expect(rows).toContain('Signed in as ada with **** and ****');
});

test("Playwright's trace viewer lists each step that ran by its name", async () => {
  await viewer.page.goto(runViewUrl(env.api.origin, env.api.keys.view, runId()));
  const href = defined(await viewer.page.locator('.trace-links a.button').getAttribute('href'), 'the viewer link');
  const tab = await viewer.context.newPage();
  await tab.goto(new URL(href, env.api.origin).toString());
  for (const label of await executedSteps())
    await tab.getByText(label, { exact: true }).first().waitFor({ timeout: 20_000 });
  await tab.close();
});
