/**
 * `pnpm bench ranges`: what many concurrent range requests for one large trace cost the API's
 * memory. The built API (`node apps/api/dist/main.js`) serves a 100 MB trace artifact of a run,
 * stored the way the worker stores it (a file in ARTIFACTS_DIR through the artifact store, a row in
 * Postgres), through the run's view link. Each round fires 40 one-byte ranges and some larger ones at
 * once while the API's VmRSS is sampled every 50 ms. Rewrites the `ranges` section of
 * docs/BENCHMARKS.md; the target is an API under 300 MB RSS.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { applyProject, createWorkspace } from '../packages/admin/src/operations';
import { artifactKey, LocalArtifactStore } from '@testrun/core/artifact-store';
import { createPrisma } from '@testrun/core/db';
import { readCommonConfig } from '@testrun/core/env';
import { ID_PREFIX, newId } from '@testrun/core/ids';
import { dropDatabase, ensureDatabase, migrateDatabase } from '@testrun/core/migrate';
import { insertRuns } from '@testrun/core/runs';
import { deriveKeys } from '@testrun/core/secrets';
import { runViewUrl } from '@testrun/core/view-links';
import { freePort, spawnService } from '../test/support/processes';
import { first, machineLine, spread, writeSection } from './report';

const MiB = 1024 * 1024;
const TRACE_BYTES = 100 * MiB;
const ROUNDS = Number(process.env.BENCH_RANGES_ROUNDS ?? 20);
const ONE_BYTE = 40;
/** The larger ranges of a round: how many of each length are fired with the one-byte ones. */
const LARGER: { count: number; bytes: number }[] = [
  { count: 8, bytes: 64 * 1024 },
  { count: 4, bytes: MiB },
  { count: 2, bytes: 16 * MiB },
  { count: 1, bytes: TRACE_BYTES },
];
const SAMPLE_MS = 50;
const TARGET_MIB = 300;

const out = (line: string) => process.stdout.write(`${line}\n`);

/** The byte at `offset` of the synthetic trace, so every answer can be checked to the byte. */
const byteAt = (offset: number) => offset % 251;

function syntheticTrace(): Buffer {
  const period = Buffer.from(Array.from({ length: 251 }, (_, i) => i));
  const body = Buffer.allocUnsafe(TRACE_BYTES);
  for (let at = 0; at < TRACE_BYTES; at += period.length) period.copy(body, at);
  return body;
}

/** VmRSS of a process in MiB, or 0 when it has gone. */
function rssMiB(pid: number): number {
  try {
    const match = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match?.[1] ? Number(match[1]) / 1024 : 0;
  } catch {
    return 0;
  }
}

/** A run with a 100 MB trace: the file through the artifact store, the rows the view reads. */
async function seed(databaseUrl: string, artifactsDir: string) {
  const db = createPrisma({ databaseUrl, max: 2 });
  try {
    const ws = await createWorkspace(db, { name: 'bench-ranges', plan: 'enterprise' });
    const applied = await applyProject(db, ws.id, {
      slug: 'shop',
      name: 'Shop',
      baseUrl: 'http://127.0.0.1:4010',
      suites: [
        { slug: 'smoke', name: 'Smoke', tests: [{ key: 't1', name: 'Home', steps: [{ action: 'goto', url: '/' }] }] },
      ],
    });
    const suite = first(applied.suites, 'suite');
    const tests = await db.test.findMany({
      where: { suiteId: suite.id },
      select: { id: true, enabled: true },
    });
    const created = await insertRuns(db, {
      workspaceId: ws.id,
      suiteId: null,
      tests: tests.map((t) => ({ ...t, baseUrl: 'http://127.0.0.1:4010' })),
      headersKey: deriveKeys(randomBytes(32).toString('base64url')).headers,
    });
    const runId = first(created.runIds, 'run');
    const id = newId(ID_PREFIX.artifact);
    const key = artifactKey(ws.id, runId, id, 'trace.zip');
    await new LocalArtifactStore(artifactsDir).put(key, syntheticTrace());
    await db.artifact.create({
      data: {
        id,
        runId,
        workspaceId: ws.id,
        attempt: 1,
        kind: 'trace',
        stepIndex: null,
        name: 'trace.zip',
        storageKey: key,
        contentType: 'application/zip',
        sizeBytes: TRACE_BYTES,
      },
    });
    return { runId, artifactId: id };
  } finally {
    await db.$disconnect();
  }
}

/** GETs one range and reads the whole answer, checking its status, length and (for short ones) bytes. */
async function getRange(url: string, start: number, length: number): Promise<number> {
  const end = Math.min(TRACE_BYTES, start + length) - 1;
  const t = performance.now();
  const res = await fetch(url, { headers: { range: `bytes=${start}-${end}` } });
  if (res.status !== 206 || !res.body) throw new Error(`range ${start}-${end}: status ${res.status}`);
  let received = 0;
  for await (const chunk of res.body) {
    const bytes = chunk as Uint8Array;
    if (received === 0 && bytes[0] !== byteAt(start)) throw new Error(`range ${start}-${end}: wrong first byte`);
    received += bytes.length;
  }
  if (received !== end - start + 1) throw new Error(`range ${start}-${end}: ${received} bytes`);
  return performance.now() - t;
}

const offsetFor = (length: number) => Math.floor(Math.random() * Math.max(1, TRACE_BYTES - length));

export async function run(): Promise<void> {
  const common = readCommonConfig();
  const base = new URL(common.databaseUrl);
  base.pathname = `/testrun_bench_ranges_${randomBytes(4).toString('hex')}`;
  const databaseUrl = base.toString();
  const artifactsDir = mkdtempSync(path.join(tmpdir(), 'testrun-bench-ranges-'));
  const prefix = `testrun-bench-ranges-${randomBytes(3).toString('hex')}`;
  const secret = randomBytes(32).toString('base64url');
  await ensureDatabase(databaseUrl);
  let api: ReturnType<typeof spawnService> | null = null;
  try {
    await migrateDatabase(databaseUrl);
    const { runId, artifactId } = await seed(databaseUrl, artifactsDir);
    const port = await freePort();
    const origin = `http://127.0.0.1:${port}`;
    api = spawnService('api', {
      PORT: String(port),
      DATABASE_URL: databaseUrl,
      REDIS_PREFIX: prefix,
      ARTIFACTS_DIR: artifactsDir,
      TESTRUN_SECRET: secret,
      PUBLIC_BASE_URL: origin,
      LOG_LEVEL: 'warn',
    });
    const pid = api.child.pid;
    if (pid === undefined) throw new Error('the API did not start');
    for (
      let waited = 0;
      !(await fetch(`${origin}/healthz`).then(
        (r) => r.ok,
        () => false,
      ));
      waited += 50
    ) {
      if (api.child.exitCode !== null || waited > 60_000)
        throw new Error(`the API did not become ready:\n${api.output()}`);
      await sleep(50);
    }
    await sleep(2_000);
    const idle = rssMiB(pid);
    const url = `${runViewUrl(origin, deriveKeys(secret).view, runId)}/artifacts/${artifactId}`;
    // One request of each kind first, so the baseline holds the code the rounds run, not its loading.
    await getRange(url, 0, 1);
    await sleep(2_000);
    const baseline = rssMiB(pid);

    let peak = baseline;
    let roundPeak = baseline;
    const sampler = setInterval(() => {
      const rss = rssMiB(pid);
      peak = Math.max(peak, rss);
      roundPeak = Math.max(roundPeak, rss);
    }, SAMPLE_MS);
    const oneByteMs: number[] = [];
    const roundPeaks: number[] = [];
    const roundMs: number[] = [];
    const perRound = ONE_BYTE + LARGER.reduce((n, l) => n + l.count, 0);
    const bytesPerRound = ONE_BYTE + LARGER.reduce((n, l) => n + l.count * l.bytes, 0);
    try {
      for (let round = 1; round <= ROUNDS; round++) {
        roundPeak = rssMiB(pid);
        const t = performance.now();
        const larger = LARGER.flatMap((l) =>
          Array.from({ length: l.count }, () =>
            getRange(url, l.bytes >= TRACE_BYTES ? 0 : offsetFor(l.bytes), l.bytes),
          ),
        );
        const small = Array.from({ length: ONE_BYTE }, () => getRange(url, offsetFor(1), 1));
        oneByteMs.push(...(await Promise.all(small)));
        await Promise.all(larger);
        roundMs.push(performance.now() - t);
        roundPeaks.push(roundPeak);
        out(
          `round ${round}: ${perRound} requests in ${Math.round(performance.now() - t)} ms, API peak RSS ${Math.round(roundPeak)} MiB`,
        );
      }
    } finally {
      clearInterval(sampler);
    }
    await sleep(1_000);
    const after = rssMiB(pid);
    const latency = spread(oneByteMs);
    const verdict = peak < TARGET_MIB ? `under the ${TARGET_MIB} MB target` : `over the ${TARGET_MIB} MB target`;
    out(
      `idle ${idle.toFixed(0)} MiB, baseline ${baseline.toFixed(0)} MiB, peak ${peak.toFixed(0)} MiB (${verdict}), after ${after.toFixed(0)} MiB`,
    );

    writeSection(
      'ranges',
      `## Range requests for a large trace: API memory

\`pnpm bench ranges\` (\`bench/artifact-ranges.ts\`; \`BENCH_RANGES_ROUNDS\`, default 20).

- ${machineLine()}.
- Postgres on 127.0.0.1; measured ${new Date().toISOString().slice(0, 10)} while other processes shared the machine:
  figures are indicative.
- The built API (\`node apps/api/dist/main.js\`, one process) serves a 100 MB \`trace.zip\` of one run,
  written through \`LocalArtifactStore\` into its ARTIFACTS_DIR with the artifact row beside it, through
  the run's view link (\`/view/runs/<id>/<token>/artifacts/<artifactId>\`).
- Each round fires ${perRound} requests at once: ${ONE_BYTE} one-byte ranges at random offsets and
  ${LARGER.map((l) => `${l.count} × ${l.bytes >= MiB ? `${l.bytes / MiB} MB` : `${l.bytes / 1024} KB`}`).join(', ')}
  (${(bytesPerRound / MiB).toFixed(0)} MB a round); every answer is read to its end and checked (206,
  length, first byte). ${ROUNDS} rounds.
- RSS is \`VmRSS\` of the API process from \`/proc/<pid>/status\`, sampled every ${SAMPLE_MS} ms; the
  baseline is read 2 s after a first one-byte request.

| Measure | Value |
|---|---|
| API RSS, idle 2 s after ready (no request yet) | ${idle.toFixed(0)} MiB |
| API RSS, baseline (2 s after one one-byte range) | ${baseline.toFixed(0)} MiB |
| API RSS, peak over all rounds | ${peak.toFixed(0)} MiB (${verdict}) |
| API RSS, peak per round | ${roundPeaks.map((p) => p.toFixed(0)).join(', ')} MiB |
| API RSS, 1 s after the last round | ${after.toFixed(0)} MiB |
| One round, all answers read | ${spread(roundMs).median.toFixed(0)} ms median (${spread(roundMs).min.toFixed(0)}–${spread(roundMs).max.toFixed(0)}) |
| One-byte range, under load | ${latency.median.toFixed(0)} ms median (${latency.min.toFixed(0)}–${latency.max.toFixed(0)}) |
`,
    );
    out('wrote the ranges section of docs/BENCHMARKS.md');
    if (peak >= TARGET_MIB)
      throw new Error(`the API peaked at ${peak.toFixed(0)} MiB, over the ${TARGET_MIB} MB target`);
  } finally {
    if (api) {
      api.child.kill('SIGTERM');
      const forced = setTimeout(() => api?.child.kill('SIGKILL'), 30_000);
      await api.exited;
      clearTimeout(forced);
    }
    const redis = new Redis(common.redisUrl);
    const keys = await redis.keys(`${prefix}*`);
    if (keys.length) await redis.del(...keys);
    redis.disconnect();
    await dropDatabase(databaseUrl).catch(() => undefined);
    rmSync(artifactsDir, { recursive: true, force: true });
  }
}
