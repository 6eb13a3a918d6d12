import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import {
  playwrightTestKey,
  runPlaywrightTests,
  type PlaywrightTestResult,
  type RunPlaywrightOptions,
} from '../../../apps/worker/src/executors/playwright';
import type { PlaywrightStep } from '../../../apps/worker/src/executors/playwright/runner/types';
import { checkSandboxSupport } from '../../../apps/worker/src/sandbox';
import { zipEntries, zipEntryText } from '../../e2e/support';
import { serveProxy, serveSite, type Proxy, type Site } from './pw-harness';

/*
 * Every row of the outcome table (docs/WORKER.md, "Playwright tests: outcomes") produced by a real
 * spec, run by the real Playwright Test runner in the real sandbox with Debian's Chromium, against
 * pages this file serves on loopback through a proxy of its own (the sandbox's only way out).
 */

jest.setTimeout(240_000);

const FIXTURES = path.join(__dirname, '../../fixtures/playwright');
const RELAY_PORT = 3128;
const SECRET_HEADER = 'x-team-token';
/** The target and another origin, as the tests see them (the proxy maps the names to this file's servers). */
const SHOP = 'http://shop.test';
const OTHER = 'http://other.test';
let base: string;
let shop: Site;
let other: Site;
let proxy: Proxy;

beforeAll(async () => {
  expect(await checkSandboxSupport()).toBeNull();
  base = await mkdtemp(path.join(tmpdir(), 'testrun-pw-run-'));
  other = await serveSite();
  shop = await serveSite(() => OTHER);
  proxy = await serveProxy(base, {
    'shop.test': Number(new URL(shop.origin).port),
    'other.test': Number(new URL(other.origin).port),
    'down.test': 9, // nothing listens there
  });
});

afterAll(async () => {
  for (const server of [shop.server, other.server, proxy.server]) server.close();
  await rm(base, { recursive: true, force: true });
});

function ref(title: string, describe: string[] = []) {
  return { file: 'e2e/outcomes.spec.js', project: 'app', titlePath: [...describe, title] };
}

async function run(
  options: Partial<RunPlaywrightOptions> & Pick<RunPlaywrightOptions, 'tests'>,
): Promise<{ results: PlaywrightTestResult[]; streamed: PlaywrightTestResult[] }> {
  const streamed: PlaywrightTestResult[] = [];
  const results = await runPlaywrightTests(
    {
      bundleDir: path.join(FIXTURES, 'outcomes'),
      configFile: 'e2e/playwright.config.js',
      scratchDir: await mkdtemp(path.join(base, 'scratch-')),
      network: { proxySocketPath: proxy.socketPath, port: RELAY_PORT },
      proxy: { server: `http://127.0.0.1:${RELAY_PORT}` },
      baseUrl: SHOP,
      evidence: 'off',
      takeBlocked: () => proxy.takeBlocked(),
      ...options,
    },
    (result) => streamed.push(result),
  );
  return { results, streamed };
}

const ROWS: [string, string[], Partial<PlaywrightTestResult>][] = [
  ['passes', [], { status: 'passed', code: null }],
  ['fails as test.fail() expects', [], { status: 'passed', code: null }],
  ['expect fails', [], { status: 'failed', code: 'expectation_failed' }],
  ['soft expect fails', [], { status: 'failed', code: 'expectation_failed' }],
  ['element never appears', [], { status: 'failed', code: 'element_not_found' }],
  ['passes although test.fail()', [], { status: 'failed', code: 'unexpected_pass' }],
  ['runs out of time', [], { status: 'error', code: 'timeout' }],
  ['target refuses the connection', [], { status: 'error', code: 'target_unreachable' }],
  ['blocked by the policy', [], { status: 'error', code: 'target_blocked' }],
  ['throws in its own code', [], { status: 'error', code: 'test_code_error' }],
  ['hook throws', ['with a hook'], { status: 'error', code: 'test_code_error' }],
  ['fixture throws', [], { status: 'error', code: 'test_code_error' }],
  ['page crashes', [], { status: 'error', code: 'browser_crashed' }],
  ['skipped in code', [], { status: 'skipped', code: null, skipReason: 'skipped_in_code' }],
  ['fixme in code', [], { status: 'skipped', code: null, skipReason: 'skipped_in_code' }],
  ['sends headers to the target only', [], { status: 'passed', code: null }],
];

test('every row of the outcome table, from one run of the selected tests (the spinning one is not selected)', async () => {
  const tests = ROWS.map(([title, describe]) => ref(title, describe));
  const { results, streamed } = await run({
    tests,
    env: { SHOP_USER: 'alice', OTHER_ORIGIN: OTHER },
    headers: { [SECRET_HEADER]: 'team-secret' },
  });
  expect(results).toHaveLength(ROWS.length);
  expect(streamed.map((r) => r.key).sort()).toEqual(results.map((r) => r.key).sort());
  const byTitle = new Map(results.map((r) => [r.key, r]));
  const seen = ROWS.map(([title, describe]) => {
    const result = byTitle.get(playwrightTestKey(ref(title, describe)));
    return [title, { status: result?.status, code: result?.code, skipReason: result?.skipReason }];
  });
  expect(Object.fromEntries(seen)).toEqual(
    Object.fromEntries(ROWS.map(([title, , want]) => [title, { skipReason: undefined, ...want }])),
  );
  const summary = (title: string, describe: string[] = []) =>
    byTitle.get(playwrightTestKey(ref(title, describe)))?.summary ?? '';
  // The failing step by its row in the step table (the whole tree depth first, hooks and fixtures first).
  const rows = (steps: readonly PlaywrightStep[]): PlaywrightStep[] => steps.flatMap((s) => [s, ...rows(s.steps)]);
  const failedRow = rows(byTitle.get(playwrightTestKey(ref('expect fails')))?.steps ?? []).findIndex(
    (s) => s.category === 'expect' && s.error !== undefined,
  );
  expect(failedRow).toBeGreaterThan(1);
  expect(summary('expect fails')).toMatch(
    new RegExp(`^Failed at step ${failedRow + 1} \\(.*\\): .*toHaveText.* \\(e2e/outcomes\\.spec\\.js:\\d+\\)$`),
  );
  expect(summary('skipped in code')).toBe('the shop is closed on Sundays');
  expect(summary('blocked by the policy')).toContain('blocked.test is not allowed');
  expect(summary('target refuses the connection')).toContain('net::ERR_');
  // Headers: the target's origin saw them from the page and from `request`, the other origin never.
  const withHeader = (site: Site) =>
    site.seen.filter((s) => s.headers[SECRET_HEADER] === 'team-secret').map((s) => s.path);
  expect(withHeader(shop)).toEqual(expect.arrayContaining(['/headers', '/echo', '/redirect-out']));
  expect(other.seen.map((s) => s.path)).toEqual(expect.arrayContaining(['/echo', '/pixel.png', '/landing']));
  expect(withHeader(other)).toEqual([]);
});

/** The kinds of event in a result's trace (`frame-snapshot` for DOM snapshots, `screencast-frame`…), from every trace file of its zip. */
function traceEventTypes(result: PlaywrightTestResult | undefined): Set<string> {
  const file = result?.attachments.find((a) => a.name === 'trace')?.path ?? '';
  const traces = zipEntries(file).filter((entry) => entry.endsWith('.trace'));
  const lines = traces.flatMap((entry) => zipEntryText(file, entry).split('\n').filter(Boolean));
  return new Set(lines.map((line) => (JSON.parse(line) as { type: string }).type));
}

test('one selected test: its setup project runs first, and evidence "on" leaves a trace and a screenshot on the host', async () => {
  const { results } = await run({ tests: [ref('passes')], env: { SHOP_USER: 'alice' }, evidence: 'on' });
  expect(results.map((r) => [r.key, r.status])).toEqual([[playwrightTestKey(ref('passes')), 'passed']]);
  const names = results[0]?.attachments.map((a) => a.name) ?? [];
  expect(names).toEqual(expect.arrayContaining(['trace', 'screenshot']));
  for (const attachment of results[0]?.attachments ?? []) expect(existsSync(attachment.path ?? '')).toBe(true);
  expect(results[0]?.steps.map((s) => s.category)).toContain('pw:api');
  // A trace that is `on` records the screencast too.
  const types = traceEventTypes(results[0]);
  expect(types.has('frame-snapshot') && types.has('screencast-frame')).toBe(true);
});

test('the on-failure trace: kept for the failure only, with DOM snapshots and without the screencast', async () => {
  const tests = [ref('expect fails'), ref('passes')];
  const { results } = await run({ tests, env: { SHOP_USER: 'alice' }, evidence: 'retain-on-failure' });
  const [failed, passed] = tests.map((t) => results.find((r) => r.key === playwrightTestKey(t)));
  expect([failed?.status, passed?.status]).toEqual(['failed', 'passed']);
  expect(passed?.attachments.map((a) => a.name)).not.toContain('trace');
  const types = traceEventTypes(failed);
  expect(types.has('frame-snapshot')).toBe(true);
  expect(types.has('screencast-frame')).toBe(false);
});
