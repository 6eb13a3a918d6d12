/** What `pnpm bench view` and `pnpm bench view-history` share: the suite's outcomes, statistics, the view on HTTP. */
import type { AddressInfo } from 'node:net';
import express from 'express';
import { LocalArtifactStore } from '@testrun/core/artifact-store';
import type { Db } from '@testrun/core/db';
import { createLogger } from '@testrun/core/logger';
import { deriveKeys } from '@testrun/core/secrets';
import { suiteRunViewUrl } from '@testrun/core/view-links';
import type { TerminalRunStatus } from '@testrun/contracts';
import { createViewRouter } from '../apps/api/src/routes/view';
import { percentile } from './report';

/** The outcome of the test at position `i`: a few failures, errors and disabled tests among mostly passes. */
export function outcomeAt(i: number): TerminalRunStatus {
  if (i % 50 === 7) return 'failed';
  if (i % 100 === 13) return 'error';
  if (i % 50 === 21) return 'skipped';
  return 'passed';
}

export function stats(samples: number[]) {
  return { median: percentile(samples, 50), p95: percentile(samples, 95), min: Math.min(...samples) };
}

/** The keys the benchmarks sign their view links with. */
export const BENCH_KEYS = deriveKeys('bench-secret-bench-secret-bench-secret-00');

/** The view router over `db` on a free loopback port: the URL of a suite run's page, the server's times, and a close. */
export async function serveView(db: Db) {
  const app = express();
  // How long the server takes over each request, from its arrival to the last byte handed to the
  // socket: the server's own share of a GET, without the client's (which runs in this process too).
  const serverMs: number[] = [];
  app.use((_req, res, next) => {
    const t = process.hrtime.bigint();
    res.on('finish', () => serverMs.push(Number(process.hrtime.bigint() - t) / 1e6));
    next();
  });
  app.use(
    '/view',
    createViewRouter({
      db,
      store: new LocalArtifactStore('/tmp/testrun-bench-artifacts'),
      keys: BENCH_KEYS,
      publicBaseUrl: 'http://127.0.0.1',
      viewLinkTtlDays: 30,
      logger: createLogger({ service: 'bench', level: 'error' }),
    }),
  );
  const server = app.listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    serverMs,
    suitePage: (suiteRunId: string) => suiteRunViewUrl(origin, BENCH_KEYS.view, suiteRunId),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
