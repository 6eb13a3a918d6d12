/**
 * `pnpm bench view-visual`: the view's visual changes for a suite run of 100 changed screenshots,
 * as a reader's Chromium gets them: bytes on the wire before the images load lazily and after
 * scrolling to the end, and the time until the page is interactive, for the suite run's page and
 * one run's page, at 1440 and 390 px (docs/BENCHMARKS.md, "Visual changes in the view").
 *
 * Postgres from DATABASE_URL (default local), a fresh database dropped at the end; the view router
 * in this process on loopback (bench/view-common.ts); Chromium at CHROMIUM_PATH (default
 * /usr/bin/chromium). Rewrites its section of docs/BENCHMARKS.md.
 */
import { randomBytes } from 'node:crypto';
import { rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { chromium } from 'playwright';
import { LocalArtifactStore } from '@testrun/core/artifact-store';
import { createPrisma } from '@testrun/core/db';
import { DEFAULT_DATABASE_URL } from '@testrun/core/env';
import { dropDatabase, ensureDatabase, migrateDatabase } from '@testrun/core/migrate';
import { runViewUrl } from '@testrun/core/view-links';
import { CHROMIUM } from '../h2h/service';
import { machineLine, writeSection } from '../report';
import { BENCH_KEYS, serveView } from '../view-common';
import { snapshotImages } from './images';
import { measurePage } from './measure';
import { sectionMarkdown, type PageResult } from './report';
import { seedVisualSuite } from './seed';

const RUNS = 100;
/** Counted loads of each page at each width. */
const ROUNDS = 5;
/** Different sets of images the runs attach, in turn. */
const VARIANTS = 10;
const WIDTHS = [1440, 390];
/** The directory the view's store reads in bench/view-common.ts's serveView. */
const ARTIFACTS_DIR = '/tmp/testrun-bench-artifacts';

/** Seeds the suite run, serves the view and measures both pages at both widths. */
async function measureAll(databaseUrl: string, browser: Awaited<ReturnType<typeof chromium.launch>>) {
  const db = createPrisma({ databaseUrl });
  const images = await snapshotImages(browser, VARIANTS);
  const seeded = await seedVisualSuite(db, new LocalArtifactStore(ARTIFACTS_DIR), images, RUNS);
  const view = await serveView(db);
  try {
    const suiteUrl = view.suitePage(seeded.suiteRunId);
    const runId = seeded.runIds[0];
    if (!runId) throw new Error('the suite run has no run');
    const runUrl = runViewUrl(new URL(suiteUrl).origin, BENCH_KEYS.view, runId);
    const results: PageResult[] = [];
    for (const [page, url] of [
      ['suite run', suiteUrl],
      ['run', runUrl],
    ] as const)
      for (const width of WIDTHS) {
        results.push({ page, width, samples: await measurePage(browser, url, width, ROUNDS) });
        process.stdout.write(`view-visual: ${page} page at ${width} px measured\n`);
      }
    const pngBytes = {
      expected: images.map((s) => s.expected.length),
      actual: images.map((s) => s.actual.length),
      diff: images.map((s) => s.diff.length),
    };
    return { results, pngBytes, specFiles: seeded.specFiles };
  } finally {
    await view.close();
    await db.$disconnect();
    await rm(path.join(ARTIFACTS_DIR, seeded.workspaceId), { recursive: true, force: true });
  }
}

export async function run(): Promise<void> {
  const loadStart = os.loadavg()[0] ?? 0;
  const base = new URL(process.env.DATABASE_URL || DEFAULT_DATABASE_URL);
  base.pathname = `/testrun_bench_${randomBytes(4).toString('hex')}`;
  const databaseUrl = base.toString();
  await ensureDatabase(databaseUrl);
  const browser = await chromium.launch({ executablePath: CHROMIUM });
  try {
    await migrateDatabase(databaseUrl);
    const { results, pngBytes, specFiles } = await measureAll(databaseUrl, browser);
    const markdown = sectionMarkdown(
      {
        machine: machineLine(),
        date: new Date().toISOString().slice(0, 10),
        loadStart,
        loadEnd: os.loadavg()[0] ?? 0,
        runs: RUNS,
        specFiles,
        rounds: ROUNDS,
        variants: VARIANTS,
        pngBytes,
      },
      results,
    );
    writeSection('view-visual', markdown);
    process.stdout.write(`${markdown}\n`);
  } finally {
    await browser.close();
    await dropDatabase(databaseUrl).catch(() => undefined);
  }
}
