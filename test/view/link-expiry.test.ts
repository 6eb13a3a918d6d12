import {
  revokeRunViewLinks,
  revokeViewLinks,
  runViewUrl,
  suiteRunViewUrl,
  viewLinkTerms,
  type ViewLinkTerms,
} from '@testrun/core/view-links';
import { createSuiteRun, mixedPlans, type SeededSuite } from './seed';
import { startApi } from './server';
import { defined, startViewEnv, type ViewEnv } from './support';

/**
 * View links expire and can be revoked, per suite run and per run outside a suite run; an expired
 * or revoked link is the same 404 as a wrong one.
 */
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

const DAY = 86_400_000;
const past: ViewLinkTerms = { issuedAt: new Date(Date.now() - 30 * DAY - 60_000), version: 0 };

test('links work until VIEW_LINK_TTL_DAYS after the start they carry, then answer exactly like a wrong token', async () => {
  const row = await env.db.suiteRun.findUniqueOrThrow({ where: { id: suite.suiteRunId } });
  const terms = viewLinkTerms({ createdAt: row.createdAt, version: 0 });
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
  const before = viewLinkTerms({ createdAt: row.createdAt, version: row.viewTokenVersion });
  const links = [
    suiteRunViewUrl(origin, keys.view, suite.suiteRunId),
    runViewUrl(origin, keys.view, runId),
    suiteRunViewUrl(origin, keys.view, suite.suiteRunId, before),
    runViewUrl(origin, keys.view, runId, before),
  ];
  expect(await Promise.all(links.map(async (url) => (await get(url)).status))).toEqual([200, 200, 200, 200]);

  expect(await revokeViewLinks(env.db, suite.suiteRunId)).toBe(true);
  expect(await Promise.all(links.map(async (url) => (await get(url)).status))).toEqual([404, 404, 404, 404]);

  const after = viewLinkTerms({ createdAt: row.createdAt, version: before.version + 1 });
  expect((await get(suiteRunViewUrl(origin, keys.view, suite.suiteRunId, after))).status).toBe(200);
  expect((await get(runViewUrl(origin, keys.view, runId, after))).status).toBe(200);
  expect(await revokeViewLinks(env.db, 'srun_00000000000000000000000000')).toBe(false);
});

/** A run outside a suite run, made through the API with the suite's key: its id and the API's link to its page. */
async function standaloneRun(): Promise<{ id: string; link: () => Promise<string> }> {
  const testId = (await env.db.run.findUniqueOrThrow({ where: { id: defined(suite.runs[0], 'a run').id } })).testId;
  const headers = { authorization: `Bearer ${suite.apiKey}`, 'content-type': 'application/json' };
  const created = await fetch(`${env.api.origin}/api/v1/runs`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ testId }),
  });
  expect(created.status).toBe(201);
  const { runId: id } = (await created.json()) as { runId: string };
  const link = async () => {
    const res = await fetch(`${env.api.origin}/api/v1/runs/${id}`, { headers });
    return defined(/^<([^>]+)>/.exec(res.headers.get('link') ?? '')?.[1], "the run's Link header");
  };
  return { id, link };
}

test('revoking a run outside a suite run ends its links; the link the API gives afterwards works', async () => {
  const run = await standaloneRun();
  const old = await run.link();
  expect((await get(old)).status).toBe(200);

  expect(await revokeRunViewLinks(env.db, run.id)).toEqual({ revoked: true });
  expect(await get(old)).toEqual(await get(`${env.api.origin}/view/runs/${run.id}/${'x'.repeat(32)}`));
  const fresh = await run.link();
  expect(fresh).not.toBe(old);
  expect((await get(fresh)).status).toBe(200);

  // A run in a suite run shares its suite run's links: it is revoked through the suite run.
  const inSuite = defined(suite.runs[1], 'a run').id;
  expect(await revokeRunViewLinks(env.db, inSuite)).toEqual({
    revoked: false,
    reason: 'in_suite_run',
    suiteRunId: suite.suiteRunId,
  });
  expect(await revokeRunViewLinks(env.db, 'run_00000000000000000000000000')).toEqual({
    revoked: false,
    reason: 'missing',
  });
});

test('a lower VIEW_LINK_TTL_DAYS refuses the links handed out under the higher one once they are older', async () => {
  const run = await standaloneRun();
  await env.db.run.update({ where: { id: run.id }, data: { createdAt: new Date(Date.now() - 10 * DAY) } });
  const link = await run.link(); // handed out by the API with VIEW_LINK_TTL_DAYS=30
  expect((await get(link)).status).toBe(200);

  // The same deployment, restarted with a TTL of 5 days: the 10-day-old link is refused.
  const shorter = await startApi(env.db, { env: { VIEW_LINK_TTL_DAYS: '5' } });
  try {
    const path = new URL(link).pathname;
    expect((await get(`${shorter.origin}${path}`)).status).toBe(404);
    // A link issued less than 5 days ago still works there.
    const recent = runViewUrl(shorter.origin, shorter.keys.view, run.id, {
      issuedAt: new Date(Date.now() - 4 * DAY),
      version: 0,
    });
    expect((await get(recent)).status).toBe(200);
  } finally {
    await shorter.close();
  }
});
