import { startRun } from '@testrun/core/runs';
import { signViewToken } from '@testrun/core/secrets';
import { runViewUrl, suiteRunViewUrl } from '@testrun/core/view-links';
import type { LiveStatus } from '../../apps/api/src/view/model';
import { createSuiteRun, executeSuite, STEPS, type RunPlan, type SeededSuite } from './seed';
import { defined, readJson, startViewEnv, type ViewEnv } from './support';

// Two tenants' suites, executed by the worker's own code: a pass and a failure in one, a pass in
// the other, for the header, token and cross-tenant checks.
let env: ViewEnv;
let suite: SeededSuite;
let other: SeededSuite;
const plans: RunPlan[] = [
  { name: 'Home page loads', steps: [STEPS.home(), STEPS.expectHeading()] },
  { name: 'Sign in works', steps: [STEPS.home(), STEPS.clickSignIn()] },
];

beforeAll(async () => {
  env = await startViewEnv();
  suite = await createSuiteRun(env.db, env.api.keys, plans, { baseUrl: env.site.url });
  other = await createSuiteRun(env.db, env.api.keys, plans.slice(0, 1), { baseUrl: env.site.url });
  await executeSuite(env.worker, suite);
  await executeSuite(env.worker, other);
}, 120_000);

afterAll(async () => {
  await env.close();
});

function runId(seeded: SeededSuite, position: number): string {
  return defined(seeded.runs[position], `run ${position}`).id;
}

test('pages, status.json and artifacts send the security and caching headers', async () => {
  const pageRes = await fetch(suiteRunViewUrl(env.api.origin, env.api.keys.view, suite.suiteRunId));
  expect(pageRes.headers.get('content-type')).toMatch(/^text\/html/);
  expect(pageRes.headers.get('cache-control')).toBe('no-store');
  expect(pageRes.headers.get('x-content-type-options')).toBe('nosniff');
  expect(pageRes.headers.get('referrer-policy')).toBe('no-referrer');
  expect(pageRes.headers.get('x-robots-tag')).toContain('noindex');
  const csp = defined(pageRes.headers.get('content-security-policy'), 'a Content-Security-Policy');
  expect(csp).toContain("default-src 'none'");
  expect(csp).toContain("script-src 'self'");
  expect(csp).not.toContain('unsafe-inline');
  const html = await pageRes.text();
  expect(html).not.toMatch(/<script>(?!<\/script>)/); // no inline script
  expect(html).not.toMatch(/<style/);
  expect(html).not.toContain(' style="');

  const artifact = await env.db.artifact.findFirstOrThrow({ where: { runId: runId(suite, 1), kind: 'screenshot' } });
  const url = `${runViewUrl(env.api.origin, env.api.keys.view, runId(suite, 1))}/artifacts/${artifact.id}`;
  const res = await fetch(url);
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toBe('image/jpeg');
  expect(res.headers.get('cache-control')).toBe('private, max-age=31536000, immutable');
  expect(res.headers.get('x-content-type-options')).toBe('nosniff');
  expect(res.headers.get('content-security-policy')).toContain('sandbox');
  expect(res.headers.get('etag')).toBe(`"${artifact.id}"`);
  expect(Buffer.from(await res.arrayBuffer()).length).toBe(artifact.sizeBytes);

  const status = await fetch(`${suiteRunViewUrl(env.api.origin, env.api.keys.view, suite.suiteRunId)}/status.json`);
  expect(status.headers.get('cache-control')).toBe('no-store');
  const body = await readJson<LiveStatus>(status);
  expect(body).toMatchObject({ status: 'failed', terminal: true, counts: { total: 2, passed: 1, failed: 1 } });
  expect(body.runs.map((r) => r.id)).toEqual([runId(suite, 0), runId(suite, 1)]);
});

test('a wrong, missing or foreign token is a 404 with the body of an id that does not exist', async () => {
  const { origin, keys } = env.api;
  const good = suiteRunViewUrl(origin, keys.view, suite.suiteRunId);
  const nonexistent = await fetch(suiteRunViewUrl(origin, keys.view, 'srun_0000000000aaaaaaaaaaaaaaaa'));
  expect(nonexistent.status).toBe(404);
  const notFoundBody = await nonexistent.text();
  expect(notFoundBody).toContain('Not found');

  const token = signViewToken(keys.view, 'suite-run', suite.suiteRunId);
  const runToken = signViewToken(keys.view, 'run', runId(suite, 1));
  const foreign = await env.db.artifact.findFirstOrThrow({ where: { runId: runId(other, 0), kind: 'screenshot' } });
  const sibling = await env.db.artifact.findFirstOrThrow({ where: { runId: runId(suite, 1), kind: 'screenshot' } });
  const cases = [
    good.replace(token, `${token.slice(0, -1)}${token.endsWith('A') ? 'B' : 'A'}`), // one character off
    good.replace(`/${token}`, ''), // no token
    good.replace(token, runToken), // a run's token on the suite page
    `${origin}/view/suite-runs/${other.suiteRunId}/${token}`, // this suite's token on another tenant's suite
    `${origin}/view/runs/${runId(other, 0)}/${runToken}`, // a run token on another run
    `${origin}/view/runs/${runId(suite, 1)}/${runToken}/artifacts/${foreign.id}`, // another tenant's artifact under this run's token
    `${runViewUrl(origin, keys.view, runId(suite, 0))}/artifacts/${sibling.id}`, // a sibling run's artifact
    `${origin}/view/runs/${runId(suite, 1)}/${token}/status.json`, // the suite's token on a run's JSON
    `${good}/nothing-here`,
  ];
  for (const url of cases) {
    const res = await fetch(url);
    expect({ url, status: res.status }).toEqual({ url, status: 404 });
    expect(await res.text()).toBe(notFoundBody);
    expect(res.headers.get('cache-control')).toBe('no-store');
  }
});

test('header values and URL credentials never appear on a page or in its JSON', async () => {
  const secrets = {
    authorization: 'Basic aGRyLXNlY3JldC11c2VyOnB3',
    'x-vercel-protection-bypass': 'bypass-secret-4d2f9a',
  };
  const seeded = await createSuiteRun(env.db, env.api.keys, [{ name: 'Preview works', steps: [STEPS.home()] }], {
    baseUrl: 'https://deploy:url-secret-77@preview.example.test/',
    headers: secrets,
  });
  const id = runId(seeded, 0);
  // Claimed but never executed (its target is not dialled): the sealed headers stay on the running row.
  await startRun(env.db, id, 2);
  expect((await env.db.run.findUniqueOrThrow({ where: { id } })).headersSealed).not.toBeNull();
  const suiteUrl = suiteRunViewUrl(env.api.origin, env.api.keys.view, seeded.suiteRunId);
  const runUrl = runViewUrl(env.api.origin, env.api.keys.view, id);
  const bodies = await Promise.all(
    [suiteUrl, `${suiteUrl}/status.json`, runUrl, `${runUrl}/status.json`, `${runUrl}/fragment`].map(async (u) =>
      (await fetch(u)).text(),
    ),
  );
  expect(bodies[2]).toContain('https://***@preview.example.test/');
  for (const body of bodies) {
    for (const value of [
      ...Object.values(secrets),
      'aGRyLXNlY3JldC11c2VyOnB3',
      'url-secret-77',
      'x-vercel-protection-bypass',
    ])
      expect(body).not.toContain(value);
  }
});
