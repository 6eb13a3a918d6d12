import { revokeViewLinks, runViewUrl, suiteRunViewUrl, viewLinkTerms, type ViewLinkTerms } from '@testrun/core';
import { createSuiteRun, mixedPlans, type SeededSuite } from './seed';
import { defined, startViewEnv, type ViewEnv } from './support';

/** View links expire and can be revoked per suite run; an expired or revoked link is the same 404 as a wrong one. */
let env: ViewEnv;
let suite: SeededSuite;

beforeAll(async () => {
  env = await startViewEnv();
  suite = await createSuiteRun(env.db, env.api.keys, mixedPlans({ video: false }), { baseUrl: env.site.url });
}, 60_000);

afterAll(async () => {
  await env.close();
});

async function get(url: string): Promise<{ status: number; body: string }> {
  const res = await fetch(url);
  return { status: res.status, body: await res.text() };
}

const past: ViewLinkTerms = { expiresAt: new Date(Date.now() - 60_000), version: 0 };

test('links that carry their expiry work until it, then answer exactly like a wrong token', async () => {
  const row = await env.db.suiteRun.findUniqueOrThrow({ where: { id: suite.suiteRunId } });
  const terms = viewLinkTerms({ createdAt: row.createdAt, version: 0 }, 30);
  const runId = defined(suite.runs[0], 'a run').id;
  const { origin, keys } = env.api;

  expect((await get(suiteRunViewUrl(origin, keys.view, suite.suiteRunId, terms))).status).toBe(200);
  expect((await get(runViewUrl(origin, keys.view, runId, terms))).status).toBe(200);

  const wrong = await get(`${origin}/view/suite-runs/${suite.suiteRunId}/${'x'.repeat(32)}`);
  expect(wrong.status).toBe(404);
  expect(await get(suiteRunViewUrl(origin, keys.view, suite.suiteRunId, past))).toEqual(wrong);
  expect((await get(runViewUrl(origin, keys.view, runId, past))).status).toBe(404);
});

test('links of the older form keep working; revoking a suite run ends every link to it and its runs', async () => {
  const { origin, keys } = env.api;
  const runId = defined(suite.runs[0], 'a run').id;
  const row = await env.db.suiteRun.findUniqueOrThrow({ where: { id: suite.suiteRunId } });
  const before = viewLinkTerms({ createdAt: row.createdAt, version: row.viewTokenVersion }, 30);
  const links = [
    suiteRunViewUrl(origin, keys.view, suite.suiteRunId),
    runViewUrl(origin, keys.view, runId),
    suiteRunViewUrl(origin, keys.view, suite.suiteRunId, before),
    runViewUrl(origin, keys.view, runId, before),
  ];
  expect(await Promise.all(links.map(async (url) => (await get(url)).status))).toEqual([200, 200, 200, 200]);

  expect(await revokeViewLinks(env.db, suite.suiteRunId)).toBe(true);
  expect(await Promise.all(links.map(async (url) => (await get(url)).status))).toEqual([404, 404, 404, 404]);

  const after = viewLinkTerms({ createdAt: row.createdAt, version: before.version + 1 }, 30);
  expect((await get(suiteRunViewUrl(origin, keys.view, suite.suiteRunId, after))).status).toBe(200);
  expect((await get(runViewUrl(origin, keys.view, runId, after))).status).toBe(200);
  expect(await revokeViewLinks(env.db, 'srun_00000000000000000000000000')).toBe(false);
});
