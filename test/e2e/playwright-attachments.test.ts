import path from 'node:path';
import { parseAlternateLink } from '@testrun/client';
import { present } from '../support/present';
import { deployForTenant, oneSuiteProject, usePlaywrightWorker } from './playwright-site';

/**
 * What a Playwright test attaches on purpose is kept (docs/PLAYWRIGHT.md, "Attachments"): the
 * fixture test/fixtures/pw-attach run by the real worker in the real sandbox, its tests attaching by
 * body and by path, any content type, on a pass and on a failure. The files are stored under their
 * names, text masked, served with types the service chooses and shown on the run's page; what the
 * service refuses (a path out of the scratch folder, a symbolic link, over the run's bytes, over its
 * count) is not kept, and the run's summary says why.
 */
jest.setTimeout(240_000);

const FIXTURE = path.resolve(__dirname, '../fixtures/pw-attach');
const SECRET = 'att-Secr3t-5521';

const parts = usePlaywrightWorker({
  WORKER_CONCURRENCY: '1',
  WORKER_RECORDING_MAX_MB: '1',
  WORKER_ATTACHMENTS_MAX: '10',
});

type Attached = { id: string; name: string; content_type: string; size_bytes: number };
type Runs = Record<string, { id: string; status: string; summary: string; view: string; attachments?: Attached[] }>;
let runs: Runs;

beforeAll(async () => {
  const selection = { slug: 'all', playwright: { project: 'chromium' } };
  const project = oneSuiteProject('pw-attach', parts.site.url, 'e2e/playwright.config.ts', selection);
  const { tenant, client } = await deployForTenant(parts, path.join(FIXTURE, 'testrun.yaml'), project);
  const secret = await fetch(`${parts.api.url}/api/v1/projects/pw-attach/secrets/ATTACH_SECRET`, {
    method: 'PUT',
    headers: { authorization: `Bearer ${tenant.key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ value: SECRET }),
  });
  expect(secret.ok).toBe(true);
  const suiteRunId = await client.createSuiteRun({ projectSlug: 'pw-attach', suiteSlug: 'all' });
  const suite = await client.waitSuiteRun(suiteRunId);
  runs = {};
  for (const t of suite.tests) {
    const res = await fetch(`${parts.api.url}/api/v1/runs/${t.runId}`, {
      headers: { authorization: `Bearer ${tenant.key}` },
    });
    const run = (await res.json()) as {
      test_name: string;
      status: string;
      result_summary: string;
      attachments?: Attached[];
    };
    const { pathname, search } = new URL(present(parseAlternateLink(res.headers.get('link')), 'the view link'));
    runs[run.test_name] = {
      id: t.runId,
      status: run.status,
      summary: run.result_summary,
      view: `${parts.api.url}${pathname}${search}`,
      attachments: run.attachments,
    };
  }
});

function attachmentsOf(runId: string) {
  return parts.db.artifact.findMany({ where: { runId, kind: 'attachment' }, orderBy: { createdAt: 'asc' } });
}

/** The view's URL of one of a run's artifacts (under its page's signed path). */
function artifactUrl(view: string, id: string): string {
  const url = new URL(view);
  url.pathname = `${url.pathname}/artifacts/${id}`;
  return url.toString();
}

it('keeps what a passing test attached, by body and by path, under its names and types, text masked', async () => {
  const run = present(runs['attaches and passes'], 'the passing run');
  expect(run.status).toBe('passed');
  const kept = await attachmentsOf(run.id);
  expect(kept.map((a) => [a.name, a.contentType]).sort()).toEqual(
    [
      ['screenshot', 'image/png'],
      ['signed-in note', 'text/plain'],
      ['cart.json', 'application/json'],
      ['export.zip', 'application/zip'],
      ['drawing', 'image/svg+xml'],
      ['report', 'text/html'],
    ].sort(),
  );
  // GET run lists them (the CLI's JUnit links each under the run's view); stored in one write, they
  // are in the order of their ids.
  const byId = (a: { id: string }, b: { id: string }) => a.id.localeCompare(b.id);
  expect(run.attachments).toEqual(
    kept.map((a) => ({ id: a.id, name: a.name, content_type: a.contentType, size_bytes: a.sizeBytes })).sort(byId),
  );
  // The team's "screenshot" is its own, not Playwright's evidence (none on a pass: retain-on-failure).
  expect(await parts.db.artifact.count({ where: { runId: run.id, kind: { not: 'attachment' } } })).toBe(0);

  const served = async (name: string) => {
    const a = present(
      kept.find((k) => k.name === name),
      name,
    );
    const res = await fetch(artifactUrl(run.view, a.id));
    expect(res.status).toBe(200);
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    return { type: res.headers.get('content-type'), disposition: res.headers.get('content-disposition'), res };
  };
  const png = await served('screenshot');
  expect([png.type, png.disposition]).toEqual(['image/png', 'inline; filename="screenshot"']);
  expect(
    Buffer.from(await png.res.arrayBuffer())
      .subarray(1, 4)
      .toString(),
  ).toBe('PNG');
  const note = await served('signed-in note');
  expect(note.type).toBe('text/plain; charset=utf-8');
  expect(await note.res.text()).toBe('logged in with **** at the shop');
  expect((await served('cart.json')).type).toBe('text/plain; charset=utf-8');
  // HTML is text, never a document; SVG and a zip are bytes to download.
  const report = await served('report');
  expect(report.type).toBe('text/plain; charset=utf-8');
  expect(await report.res.text()).toBe('<script>alert(1)</script><p>report</p>');
  for (const name of ['drawing', 'export.zip']) {
    const file = await served(name);
    expect(file.type).toBe('application/octet-stream');
    expect(file.disposition).toMatch(/^attachment; filename=/);
  }

  // The run's page: the image drawn, text escaped in a block, the rest as downloads.
  const page = await (await fetch(run.view)).text();
  expect(page).toContain('Attachments');
  const id = (name: string) => present(kept.find((k) => k.name === name)?.id, name);
  expect(page).toMatch(new RegExp(`<img src="[^"]*/artifacts/${id('screenshot')}"`));
  expect(page).not.toMatch(new RegExp(`<img src="[^"]*/artifacts/${id('drawing')}"`));
  expect(page).toContain('logged in with **** at the shop');
  expect(page).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
  expect(page).not.toContain('<script>alert(1)');
  expect(page).toContain('&quot;html&quot;:&quot;&lt;b&gt;bold&lt;/b&gt;&quot;');
  expect(page).toMatch(new RegExp(`href="[^"]*/artifacts/${id('export.zip')}" download="export.zip"`));
  expect(page).not.toContain(SECRET);
});

it("keeps what a failing test attached beside Playwright's own evidence", async () => {
  const run = present(runs['attaches and fails'], 'the failing run');
  expect(run.status).toBe('failed');
  expect((await attachmentsOf(run.id)).map((a) => a.name)).toEqual(['failure note']);
  // Playwright's own failure screenshot (the evidence policy's retain-on-failure) stays evidence.
  const evidence = await parts.db.artifact.findMany({ where: { runId: run.id, kind: 'screenshot' } });
  expect(evidence.map((a) => a.name)).toEqual([expect.stringMatching(/^test-failed-\d+\.png$/)]);
  expect(await (await fetch(run.view)).text()).toContain('what the test saw before it failed');
});

it('refuses a path out of the scratch folder, a symbolic link, and what is over the run’s bytes and count, saying so', async () => {
  const run = present(runs['attaches what is refused'], 'the refusing run');
  expect(run.status).toBe('passed');
  const kept = await attachmentsOf(run.id);
  expect(kept.map((a) => a.name).sort()).toEqual(Array.from({ length: 10 }, (_, i) => `small ${i + 1}`).sort());
  expect(run.summary).toContain('the attachment "outside" was not kept: its file');
  expect(run.summary).toContain('the attachment "link" was not kept: its file is a symbolic link');
  expect(run.summary).toContain('the attachment "huge" was not kept: it is over');
  expect(run.summary).toContain('2 attachment(s) were not kept: a run keeps at most 10');
});
