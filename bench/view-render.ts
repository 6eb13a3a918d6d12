/**
 * `pnpm bench view`: how long the detailed view takes for a 1,000-test suite run, and what it weighs.
 * (Over 300 lines: most of it is the synthetic suite, written out so the figures can be read
 * against what was rendered.)
 *
 * 1. Render only: `renderSuitePage` over an in-memory suite (no I/O).
 * 2. Whole request: GET of the suite page through the view router, from a freshly migrated
 *    database seeded with 1,000 runs, their steps and artifact rows; and the bytes it takes on the
 *    wire with brotli, as a browser asks for it.
 * 3. Interactive: Chromium opens the page; the time from navigation start until the page's script
 *    has wired it (`main[data-ready]`, the script's own `performance.now()`).
 *
 * Postgres from DATABASE_URL (default local). Rewrites its section of docs/VIEW.md.
 */
import { randomBytes } from 'node:crypto';
import { request } from 'node:http';
import path from 'node:path';
import { chromium } from 'playwright';
import { applyProject, createWorkspace } from '../packages/admin/src/operations';
import { createPrisma } from '@testrun/core/db';
import { DEFAULT_DATABASE_URL } from '@testrun/core/env';
import { ID_PREFIX, newId } from '@testrun/core/ids';
import { dropDatabase, ensureDatabase, migrateDatabase } from '@testrun/core/migrate';
import type { RunStatus } from '@testrun/contracts';
import type { ViewRun, ViewStep, ViewSuiteRun } from '../apps/api/src/view/model';
import { renderSuitePage } from '../apps/api/src/view/render/pages';
import { CHROMIUM } from './h2h/service';
import { first, machineLine, writeSection } from './report';
import { outcomeAt, serveView, stats } from './view-common';

const TESTS = 1000;
const STEPS_PER_TEST = 8;
/** Outcomes of each test in Postgres, this run's included: a full history strip. */
const HISTORY = 20;
function syntheticSuite(): ViewSuiteRun {
  const t0 = Date.now() - 600_000;
  const runs: ViewRun[] = Array.from({ length: TESTS }, (_, i) => {
    const status = outcomeAt(i);
    const inline = status === 'failed' || status === 'error';
    const steps: ViewStep[] | null = inline
      ? Array.from({ length: STEPS_PER_TEST }, (_, s) => ({
          index: s + 1,
          action: 'click',
          depth: 0,
          location: null,
          label: `click "text=Button ${s}"`,
          target: `text=Button ${s}`,
          outcome: s === STEPS_PER_TEST - 1 ? status : 'passed',
          error: s === STEPS_PER_TEST - 1 ? 'element not found within 5 s' : null,
          startedAt: new Date(t0 + i * 1000 + s * 100),
          durationMs: 90,
          screenshotId: `art_${String(i).padStart(10, '0')}${String(s).padStart(16, '0')}`,
          expected: null,
          received: null,
          pageUrl: s === STEPS_PER_TEST - 1 ? 'http://127.0.0.1:4010/checkout' : null,
          pageTitle: s === STEPS_PER_TEST - 1 ? 'Checkout' : null,
        }))
      : null;
    return {
      id: `run_${String(i).padStart(26, '0')}`,
      token: 'x'.repeat(32),
      position: i,
      testName: `Checkout test number ${i}`,
      status,
      resultSummary:
        status === 'passed'
          ? `Passed: ${STEPS_PER_TEST} steps.`
          : status === 'skipped'
            ? 'Skipped: the test is disabled.'
            : `Failed at step ${STEPS_PER_TEST} (click "text=Button"): element not found within 5 s`,
      outcomeCode: inline ? 'element_not_found' : null,
      outcomeMessage: inline ? 'element not found within 5 s' : null,
      outcomeStep: inline ? STEPS_PER_TEST : null,
      skipReason: status === 'skipped' ? 'test_disabled' : null,
      baseUrl: 'http://127.0.0.1:4010',
      attempt: status === 'skipped' ? 0 : 1,
      retry: 0,
      retries: 0,
      location: null,
      queuedAhead: 0,
      plannedSteps: STEPS_PER_TEST,
      createdAt: new Date(t0),
      startedAt: new Date(t0 + i * 1000),
      finishedAt: new Date(t0 + i * 1000 + 900),
      durationMs: 900,
      suiteRunId: 'srun_x',
      artifactsExpiredAt: null,
      pageEvents: inline ? [] : null,
      steps,
      artifacts: steps
        ? [
            ...steps.flatMap((s) =>
              s.screenshotId === null
                ? []
                : [
                    {
                      id: s.screenshotId,
                      kind: 'screenshot' as const,
                      stepIndex: s.index,
                      name: `step-${s.index}.jpg`,
                      contentType: 'image/jpeg',
                      sizeBytes: 30_000,
                    },
                  ],
            ),
            {
              id: `art_trace${i}`,
              kind: 'trace' as const,
              stepIndex: null,
              name: 'trace.zip',
              contentType: 'application/zip',
              sizeBytes: 400_000,
            },
          ]
        : null,
      earlierAttempts: null,
    };
  });
  const count = (s: RunStatus) => runs.filter((r) => r.status === s).length;
  return {
    id: 'srun_x',
    token: 'x'.repeat(32),
    suiteName: 'Checkout',
    suiteSlug: 'checkout',
    projectName: 'Shop',
    projectSlug: 'shop',
    queuedAhead: 0,
    status: 'failed',
    counts: {
      total: TESTS,
      queued: 0,
      running: 0,
      passed: count('passed'),
      failed: count('failed'),
      error: count('error'),
      skipped: count('skipped'),
      flaky: runs.filter((r) => r.status === 'passed' && r.retry > 0).length,
    },
    createdAt: new Date(t0),
    startedAt: new Date(t0),
    finishedAt: new Date(),
    runs,
  };
}

async function seedDatabase(databaseUrl: string) {
  // The API's own pool size (createPrisma's default), so the page's reads run side by side as there.
  const db = createPrisma({ databaseUrl });
  const ws = await createWorkspace(db, { name: 'bench', plan: 'enterprise' });
  const applied = await applyProject(db, ws.id, {
    slug: 'shop',
    name: 'Shop',
    baseUrl: 'http://127.0.0.1:4010',
    suites: [
      {
        slug: 'checkout',
        name: 'Checkout',
        tests: Array.from({ length: TESTS }, (_, i) => ({
          key: `t${i}`,
          name: `Checkout test number ${i}`,
          enabled: outcomeAt(i) !== 'skipped',
          steps: Array.from({ length: STEPS_PER_TEST }, () => ({ action: 'click' as const, selector: 'text=Button' })),
        })),
      },
    ],
  });
  const suite = first(applied.suites, 'suite');
  const tests = await db.test.findMany({ where: { suiteId: suite.id }, orderBy: { position: 'asc' } });
  const suiteRunId = newId(ID_PREFIX.suiteRun);
  const count = (s: RunStatus) => tests.filter((_, i) => outcomeAt(i) === s).length;
  await db.suiteRun.create({
    data: {
      id: suiteRunId,
      workspaceId: ws.id,
      suiteId: suite.id,
      projectId: applied.projectId,
      status: 'failed',
      totalCount: TESTS,
      queuedCount: 0,
      runningCount: 0,
      passedCount: count('passed'),
      failedCount: count('failed'),
      errorCount: count('error'),
      skippedCount: count('skipped'),
      startedAt: new Date(Date.now() - 600_000),
      finishedAt: new Date(),
    },
  });
  const now = Date.now();
  // The suite's earlier nights, as project-mode runs of its tests (no suite run of their own): every
  // open test's history strip has its full HISTORY marks, as on a suite that has run for weeks.
  for (let k = HISTORY - 1; k >= 1; k--) {
    const at = now - k * 86_400_000;
    await db.run.createMany({
      data: tests.map((t, i) => {
        const failed = (i + k) % 7 === 0;
        return {
          id: newId(ID_PREFIX.run),
          workspaceId: ws.id,
          projectId: t.projectId,
          suiteId: t.suiteId,
          testId: t.id,
          position: i,
          status: failed ? ('failed' as const) : ('passed' as const),
          attempt: 1,
          retry: failed || k % 5 !== 0 ? 0 : 1,
          retries: 1,
          baseUrl: 'http://127.0.0.1:4010',
          testName: t.name,
          steps: t.steps as object,
          timeoutMs: t.timeoutMs,
          resultSummary: failed ? 'Failed at step 8 (click "text=Button"): element not found within 5 s' : 'Passed.',
          outcomeCode: failed ? ('element_not_found' as const) : null,
          outcomeStep: failed ? 8 : null,
          createdAt: new Date(at),
          startedAt: new Date(at),
          finishedAt: new Date(at + 900),
          durationMs: 900,
        };
      }),
    });
  }
  const runs = tests.map((t, i) => ({ id: newId(ID_PREFIX.run), t, i, status: outcomeAt(i) }));
  await db.run.createMany({
    data: runs.map(({ id, t, i, status }) => ({
      id,
      workspaceId: ws.id,
      projectId: t.projectId,
      suiteId: t.suiteId,
      testId: t.id,
      suiteRunId,
      position: i,
      status,
      attempt: status === 'skipped' ? 0 : 1,
      baseUrl: 'http://127.0.0.1:4010',
      testName: t.name,
      steps: t.steps as object,
      timeoutMs: t.timeoutMs,
      resultSummary:
        status === 'passed'
          ? 'Passed: 8 steps.'
          : status === 'skipped'
            ? 'Skipped: the test is disabled.'
            : 'Failed at step 8 (click "text=Button"): element not found within 5 s',
      outcomeCode: status === 'failed' ? 'element_not_found' : status === 'error' ? 'timeout' : null,
      outcomeStep: status === 'failed' || status === 'error' ? 8 : null,
      skipReason: status === 'skipped' ? 'test_disabled' : null,
      startedAt: new Date(now - 500_000),
      finishedAt: new Date(now),
      durationMs: 900,
    })),
  });
  const steps = [];
  const artifacts = [];
  for (const r of runs) {
    if (r.status === 'skipped') continue;
    for (let s = 1; s <= STEPS_PER_TEST; s++) {
      const artId = newId(ID_PREFIX.artifact);
      artifacts.push({
        id: artId,
        runId: r.id,
        workspaceId: ws.id,
        attempt: 1,
        kind: 'screenshot' as const,
        stepIndex: s,
        name: `step-${s}.jpg`,
        storageKey: `${ws.id}/${r.id}/${artId}-step.jpg`,
        contentType: 'image/jpeg',
        sizeBytes: 30_000,
      });
      steps.push({
        id: newId(ID_PREFIX.step),
        runId: r.id,
        attempt: 1,
        index: s,
        action: 'click' as const,
        label: 'click "text=Button"',
        target: 'text=Button',
        outcome: s === STEPS_PER_TEST && r.status !== 'passed' ? r.status : ('passed' as const),
        error: null,
        startedAt: new Date(now - 500_000 + s * 100),
        durationMs: 90,
        screenshotId: artId,
      });
    }
    const traceId = newId(ID_PREFIX.artifact);
    artifacts.push({
      id: traceId,
      runId: r.id,
      workspaceId: ws.id,
      attempt: 1,
      kind: 'trace' as const,
      stepIndex: null,
      name: 'trace.zip',
      storageKey: `${ws.id}/${r.id}/${traceId}-trace.zip`,
      contentType: 'application/zip',
      sizeBytes: 400_000,
    });
  }
  await db.stepResult.createMany({ data: steps });
  await db.artifact.createMany({ data: artifacts });
  // Statistics, as autovacuum keeps them on a live database: without them the planner takes the
  // freshly loaded tables for nearly empty and picks the wrong indexes.
  await db.$executeRawUnsafe('ANALYZE');
  return { db, suiteRunId, stepRows: steps.length, artifactRows: artifacts.length };
}

/** The bytes of a GET as they cross the wire when the client takes brotli. */
function wireBytes(url: string): Promise<{ bytes: number; encoding: string | undefined }> {
  return new Promise((resolve, reject) => {
    request(url, { headers: { 'accept-encoding': 'br, gzip' } }, (res) => {
      let bytes = 0;
      res.on('data', (c: Buffer) => (bytes += c.length));
      res.on('end', () => resolve({ bytes, encoding: res.headers['content-encoding'] }));
      res.on('error', reject);
    })
      .on('error', reject)
      .end();
  });
}

/** Chromium opens the page `rounds` times (a fresh context each, so nothing is cached): ms until interactive. */
async function interactiveTimes(url: string, rounds: number): Promise<number[]> {
  const browser = await chromium.launch({ executablePath: CHROMIUM });
  try {
    const samples: number[] = [];
    for (let i = 0; i < rounds; i++) {
      const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
      const page = await context.newPage();
      await page.goto(url);
      const ready = await page.locator('main[data-ready]').getAttribute('data-ready');
      if (i > 0) samples.push(Number(ready));
      await context.close();
    }
    return samples;
  } finally {
    await browser.close();
  }
}

export async function run(): Promise<void> {
  const suite = syntheticSuite();
  for (let i = 0; i < 5; i++) renderSuitePage({ base: '/view' }, suite); // warm-up
  const renderSamples: number[] = [];
  let bytes = 0;
  for (let i = 0; i < 40; i++) {
    const t = process.hrtime.bigint();
    bytes = renderSuitePage({ base: '/view' }, suite).length;
    renderSamples.push(Number(process.hrtime.bigint() - t) / 1e6);
  }
  const render = stats(renderSamples);

  const base = new URL(process.env.DATABASE_URL || DEFAULT_DATABASE_URL);
  base.pathname = `/testrun_bench_${randomBytes(4).toString('hex')}`;
  const databaseUrl = base.toString();
  await ensureDatabase(databaseUrl);
  try {
    await migrateDatabase(databaseUrl);
    const seeded = await seedDatabase(databaseUrl);
    const view = await serveView(seeded.db);
    const url = view.suitePage(seeded.suiteRunId);
    const httpSamples: number[] = [];
    let pageBytes = 0;
    view.serverMs.length = 0;
    for (let i = 0; i < 25; i++) {
      const t = process.hrtime.bigint();
      const res = await fetch(url, { headers: { 'accept-encoding': 'identity' } });
      const body = await res.text();
      if (res.status !== 200) throw new Error(`status ${res.status}`);
      if (i >= 5) httpSamples.push(Number(process.hrtime.bigint() - t) / 1e6);
      pageBytes = Buffer.byteLength(body);
    }
    const serverSamples = view.serverMs.slice(5);
    const brSamples: number[] = [];
    let wire = { bytes: 0, encoding: undefined as string | undefined };
    for (let i = 0; i < 25; i++) {
      const t = process.hrtime.bigint();
      wire = await wireBytes(url);
      if (i >= 5) brSamples.push(Number(process.hrtime.bigint() - t) / 1e6);
    }
    const interactive = stats(await interactiveTimes(url, 11));
    const statusSamples: number[] = [];
    for (let i = 0; i < 25; i++) {
      const t = process.hrtime.bigint();
      await (await fetch(`${url}/status.json`)).text();
      if (i >= 5) statusSamples.push(Number(process.hrtime.bigint() - t) / 1e6);
    }
    await view.close();
    await seeded.db.$disconnect();
    const http = stats(httpSamples);
    const status = stats(statusSamples);
    const counts = suite.counts;
    const kb = (n: number) => `${(n / 1024).toFixed(0)} KB`;
    const row = (name: string, s: ReturnType<typeof stats>, size = '') =>
      `| ${name} | ${s.median.toFixed(1)} ms | ${s.p95.toFixed(1)} ms | ${s.min.toFixed(1)} ms | ${size} |`;
    const markdown = [
      `\`pnpm bench view\`, ${machineLine()}: ${TESTS} tests (${counts.passed} passed, ${counts.failed} failed, ${counts.error} error, ${counts.skipped} skipped), ${STEPS_PER_TEST} steps each; ` +
        `${seeded.stepRows} step rows and ${seeded.artifactRows} artifact rows in Postgres, and ${HISTORY - 1} earlier runs of each test (the open tests show ${HISTORY}-mark histories).`,
      '',
      '| measure | median | p95 | min | size |',
      '|---|---|---|---|---|',
      row('`renderSuitePage` (in memory)', render, kb(bytes)),
      row('GET suite page (Postgres + render + HTTP), uncompressed', http, kb(pageBytes)),
      row('… of which the server (request in to last byte handed to the socket)', stats(serverSamples)),
      row(
        'GET suite page, as a browser asks for it',
        stats(brSamples),
        `${kb(wire.bytes)} (${wire.encoding ?? 'no encoding'})`,
      ),
      row('Interactive in Chromium (navigation start to the script wired)', interactive),
      row('GET `status.json` (live poll)', status),
    ].join('\n');
    writeSection('view', markdown, path.resolve(__dirname, '../docs/VIEW.md'));
    process.stdout.write(`${markdown}\n`);
  } finally {
    await dropDatabase(databaseUrl).catch(() => undefined);
  }
}
