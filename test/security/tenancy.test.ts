// The tenancy matrix: for every route and id-bearing URL, an id of another workspace answers exactly
// like an id that never existed (status, the headers that matter, and the body once the id the caller
// sent and the request id are set aside), under a valid key or view token of the caller's own.
import request from 'supertest';
import { applyProject } from '../../packages/admin/src/operations';
import { LocalArtifactStore } from '@testrun/core/artifact-store';
import { ID_PREFIX, newId } from '@testrun/core/ids';
import { deriveKeys } from '@testrun/core/secrets';
import { runViewUrl, suiteRunViewUrl } from '@testrun/core/view-links';
import { createTenant, insertSuiteRuns, sampleProject } from '../support/harness';
import { bearer, buildTestApi, type TestApi } from '../api/api-harness';

let api: TestApi;
beforeAll(() => {
  api = buildTestApi();
});
afterAll(async () => {
  await api.close();
});

/**
 * Headers whose difference could tell a caller something. Not ETag: on an API problem it is a hash
 * of the body, which echoes the id sent, so it differs exactly when the sent ids do.
 */
const COMPARED_HEADERS = [
  'content-type',
  'content-length',
  'cache-control',
  'content-security-policy',
  'www-authenticate',
  'allow',
  'link',
  'retry-after',
  'x-content-type-options',
  'referrer-policy',
];

/** What a caller sees, with `sent` (the id or slug it sent) replaced so two answers can be compared. */
function seen(res: request.Response, sent: string) {
  // Content-Length follows the length of the id sent; the body comparison covers it.
  const headers = Object.fromEntries(
    COMPARED_HEADERS.map((name) => [name, name === 'content-length' ? undefined : res.headers[name]]),
  );
  // A HEAD answer has no body (supertest leaves `text` unset).
  const text: unknown = res.text;
  const body = typeof text === 'string' ? text.split(sent).join('<sent>') : '';
  return { status: res.status, headers, body };
}

/** A workspace with a project, a suite run (two runs), a loose run and a stored artifact. */
async function workspaceWithData(slug: string) {
  const t = await createTenant(api.db);
  await applyProject(api.db, t.workspace.id, sampleProject(slug, { count: 2, suites: ['smoke', `${slug}-only`] }));
  const suite = await api.db.suite.findFirstOrThrow({ where: { workspaceId: t.workspace.id, slug: 'smoke' } });
  const created = await insertSuiteRuns(api.db, t.workspace.id, suite.id, { baseUrl: 'http://127.0.0.1:9' });
  const suiteRunId = created.suiteRunId;
  if (suiteRunId === null) throw new Error('expected a suite run');
  const runId = created.runIds[0];
  if (runId === undefined) throw new Error('expected a run');
  const test = await api.db.test.findFirstOrThrow({ where: { workspaceId: t.workspace.id } });
  const artifactId = newId(ID_PREFIX.artifact);
  const storageKey = `tenancy/${artifactId}.png`;
  await new LocalArtifactStore(api.config.artifactsDir).put(storageKey, Buffer.from('not really a png'));
  await api.db.artifact.create({
    data: {
      id: artifactId,
      runId,
      workspaceId: t.workspace.id,
      attempt: 1,
      kind: 'screenshot',
      name: 'shot.png',
      storageKey,
      contentType: 'image/png',
      sizeBytes: 16,
    },
  });
  return { ...t, slug, suiteRunId, runId, testId: test.id, artifactId };
}

it('another workspace’s ids behave exactly like missing ones, on every route', async () => {
  const a = await workspaceWithData('alpha');
  const b = await workspaceWithData('beta');
  const keyA = bearer(a.key);
  const viewKey = deriveKeys(api.config.secret).view;
  const viewPath = (url: string) => new URL(url).pathname;
  const aRunView = viewPath(runViewUrl(api.config.publicBaseUrl, viewKey, a.runId));
  const aSuiteView = viewPath(suiteRunViewUrl(api.config.publicBaseUrl, viewKey, a.suiteRunId));
  const missing = {
    run: newId(ID_PREFIX.run),
    suiteRun: newId(ID_PREFIX.suiteRun),
    test: newId(ID_PREFIX.test),
    artifact: newId(ID_PREFIX.artifact),
  };
  // A token of one's own: A's token, which is valid for A's id, put on B's id and on a missing id.
  const withOwnToken = (viewUrlOfA: string, idOfA: string, id: string, tail = '') =>
    viewUrlOfA.replace(idOfA, id) + tail;

  type Pair = {
    what: string;
    other: () => request.Test;
    absent: () => request.Test;
    sentOther: string;
    sentAbsent: string;
  };
  const get = (path: string) => () => request(api.app).get(path).set(keyA);
  const post = (body: object) => () => request(api.app).post('/api/v1/runs').set(keyA).send(body);
  const pairs: Pair[] = [
    {
      what: 'GET run',
      other: get(`/api/v1/runs/${b.runId}`),
      absent: get(`/api/v1/runs/${missing.run}`),
      sentOther: b.runId,
      sentAbsent: missing.run,
    },
    {
      what: 'GET suite run',
      other: get(`/api/v1/suite-runs/${b.suiteRunId}`),
      absent: get(`/api/v1/suite-runs/${missing.suiteRun}`),
      sentOther: b.suiteRunId,
      sentAbsent: missing.suiteRun,
    },
    {
      what: 'POST a test',
      other: post({ testId: b.testId }),
      absent: post({ testId: missing.test }),
      sentOther: b.testId,
      sentAbsent: missing.test,
    },
    {
      what: 'POST a project',
      other: post({ projectSlug: b.slug }),
      absent: post({ projectSlug: 'gamma' }),
      sentOther: b.slug,
      sentAbsent: 'gamma',
    },
    {
      what: 'POST a suite',
      other: post({ projectSlug: b.slug, suiteSlug: 'smoke' }),
      absent: post({ projectSlug: 'gamma', suiteSlug: 'smoke' }),
      sentOther: b.slug,
      sentAbsent: 'gamma',
    },
    {
      what: "POST another's suite in one's own project",
      other: post({ projectSlug: a.slug, suiteSlug: `${b.slug}-only` }),
      absent: post({ projectSlug: a.slug, suiteSlug: 'gamma-only' }),
      sentOther: `${b.slug}-only`,
      sentAbsent: 'gamma-only',
    },
  ];
  for (const [subject, page, idOfA, idOfB, idMissing] of [
    ['run', aRunView, a.runId, b.runId, missing.run],
    ['suite run', aSuiteView, a.suiteRunId, b.suiteRunId, missing.suiteRun],
  ] as const) {
    for (const tail of [
      '',
      '/status.json',
      ...(subject === 'run' ? ['/fragment', `/artifacts/${a.artifactId}`] : []),
    ]) {
      pairs.push({
        what: `view ${subject} ${tail || 'page'}`,
        other: () => request(api.app).get(withOwnToken(page, idOfA, idOfB, tail)),
        absent: () => request(api.app).get(withOwnToken(page, idOfA, idMissing, tail)),
        sentOther: idOfB,
        sentAbsent: idMissing,
      });
    }
  }
  // One's own run and token, another's artifact id: the trace viewer and downloads go through this URL.
  pairs.push({
    what: 'view artifact of another run',
    other: () => request(api.app).get(`${aRunView}/artifacts/${b.artifactId}`),
    absent: () => request(api.app).get(`${aRunView}/artifacts/${missing.artifact}`),
    sentOther: b.artifactId,
    sentAbsent: missing.artifact,
  });
  pairs.push({
    what: 'view artifact of another run, as a range',
    other: () => request(api.app).get(`${aRunView}/artifacts/${b.artifactId}`).set('Range', 'bytes=0-1'),
    absent: () => request(api.app).get(`${aRunView}/artifacts/${missing.artifact}`).set('Range', 'bytes=0-1'),
    sentOther: b.artifactId,
    sentAbsent: missing.artifact,
  });

  pairs.push({
    what: 'HEAD run',
    other: () => request(api.app).head(`/api/v1/runs/${b.runId}`).set(keyA),
    absent: () => request(api.app).head(`/api/v1/runs/${missing.run}`).set(keyA),
    sentOther: b.runId,
    sentAbsent: missing.run,
  });
  pairs.push({
    what: 'HEAD view run page',
    other: () => request(api.app).head(withOwnToken(aRunView, a.runId, b.runId)),
    absent: () => request(api.app).head(withOwnToken(aRunView, a.runId, missing.run)),
    sentOther: b.runId,
    sentAbsent: missing.run,
  });

  // The matrix can fail: one's own artifact is served through the same URL shape.
  expect((await request(api.app).get(`${aRunView}/artifacts/${a.artifactId}`)).status).toBe(200);
  expect((await request(api.app).get(`/api/v1/runs/${a.runId}`).set(keyA)).status).toBe(200);

  const mismatches: string[] = [];
  for (const pair of pairs) {
    const other = seen(await pair.other(), pair.sentOther);
    const absent = seen(await pair.absent(), pair.sentAbsent);
    expect(other.status).toBeGreaterThanOrEqual(400);
    if (JSON.stringify(other) !== JSON.stringify(absent))
      mismatches.push(`${pair.what}: ${JSON.stringify(other)} vs ${JSON.stringify(absent)}`);
  }
  expect(mismatches).toEqual([]);
  // Nothing was created by the refused POSTs.
  expect(await api.db.run.count({ where: { workspaceId: a.workspace.id } })).toBe(2);
  process.stdout.write(`tenancy pairs checked: ${pairs.length}\n`);
  expect(pairs.length).toBe(16);
});
