import { connect } from 'node:net';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { PassThrough } from 'node:stream';
import fc from 'fast-check';
import { compileValidator, Problem } from '@testrun/contracts';
import {
  applyProject,
  changeApiKey,
  createApiKey,
  createWorkspace,
  addMember,
} from '../../packages/admin/src/operations';
import { authChangeAnnouncer } from '@testrun/core/api-keys';
import { LocalArtifactStore } from '@testrun/core/artifact-store';
import { createPrisma, type Db } from '@testrun/core/db';
import { createLogger } from '@testrun/core/logger';
import { createRunQueue } from '@testrun/core/queue';
import { deriveKeys } from '@testrun/core/secrets';
import { runViewUrl, suiteRunViewUrl } from '@testrun/core/view-links';
import { createApiRedis, createApiServer, createApp, readApiConfig } from '../../apps/api/src';
import { fuzzCase, type FuzzCase } from './cases';
import type { FuzzWorld } from './surfaces';
import { trackConnections } from './connections';

/** Options of {@link runFuzz}. */
export type FuzzOptions = { seed: number; cases: number; env: Record<string, string | undefined> };

/** One answer that broke the rule, with what was sent (truncated for the report). */
type FuzzFailure = { index: number; label: string; request: string; reason: string };

/** The figures of a fuzz run. */
export type FuzzReport = {
  seed: number;
  cases: number;
  byStatus: Record<string, number>;
  serverErrors: number;
  notProblems: number;
  /** Batches where a 4xx changed state: runs or jobs appeared that no 2xx accounts for. */
  stateChanges: number;
  /** Batches after which the server still held connections the fuzzer had closed. */
  connectionsLeftOpen: number;
  /** Cases that promised more body than they sent, which the server may rightly leave unanswered. */
  incomplete: number;
  failures: FuzzFailure[];
};

const isProblem = compileValidator(Problem);
const BATCH = 50;

type Answer = { status: number; headers: string; body: string; statuses: number[] };

/** Sends raw bytes, reads everything until the server closes, and parses the first final response. */
async function send(port: number, bytes: Buffer, incomplete = false): Promise<Answer> {
  const data = await new Promise<Buffer>((resolve) => {
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('error', () => undefined);
    socket.on('close', () => resolve(Buffer.concat(chunks)));
    // Not ended at once: Node's server closes a connection whose client half-closes before it
    // answered. A request that promises more bytes than it sends is ended after a quiet spell.
    socket.setTimeout(incomplete ? 500 : 5_000, () => {
      if (!incomplete) {
        socket.destroy();
        return;
      }
      socket.setTimeout(30_000, () => socket.destroy());
      socket.end();
    });
    socket.write(bytes);
  });
  const text = data.toString('latin1');
  const statuses = [...text.matchAll(/(?:^|\r\n)HTTP\/1\.[01] (\d{3}) /g)].map((m) => Number(m[1]));
  // Skip interim 1xx responses (100 Continue).
  let start = 0;
  while (/^HTTP\/1\.[01] 1\d\d /.test(text.slice(start))) {
    const end = text.indexOf('\r\n\r\n', start);
    if (end < 0) break;
    start = end + 4;
  }
  const at = text.indexOf('\r\n\r\n', start);
  const headers = at < 0 ? text.slice(start) : text.slice(start, at);
  const length = Number(/\r\ncontent-length: (\d+)/i.exec(headers)?.[1] ?? Number.NaN);
  const rest = at < 0 ? Buffer.alloc(0) : data.subarray(at + 4);
  const body = (Number.isNaN(length) ? rest : rest.subarray(0, length)).toString('utf8');
  return { status: Number(/^HTTP\/1\.[01] (\d{3})/.exec(headers)?.[1] ?? 0), headers, body, statuses };
}

/** Why an answer breaks the rule (every answer a 2xx, or a 4xx problem document), or null. */
function judge(c: FuzzCase, a: Answer): string | null {
  // The client never finished the request (it promised more body than it sent): nobody to answer.
  if (a.status === 0) return c.incomplete ? null : 'no answer';
  const fives = a.statuses.filter((s) => s >= 500);
  if (fives.length > 0) return `answered ${fives.join(', ')}`;
  if (a.status >= 200 && a.status < 300) return null;
  // A conditional GET of a cacheable document (If-None-Match) may be answered "not modified".
  if (a.status === 304) return null;
  if (a.status < 400 || a.status >= 500) return `answered ${a.status}`;
  const type = /\r\ncontent-type: ([^\r]+)/i.exec(a.headers)?.[1] ?? '';
  if (c.method === 'HEAD') return null;
  // The view answers people: its 404 page is HTML by design (one page for every unknown link).
  if (c.path.startsWith('/view/') && a.status === 404 && type.startsWith('text/html')) return null;
  if (!type.startsWith('application/problem+json')) return `a ${a.status} of type "${type}", not a problem`;
  let parsed: unknown;
  try {
    parsed = JSON.parse(a.body);
  } catch {
    return `a ${a.status} whose body is not JSON`;
  }
  const problem = isProblem(parsed);
  if (!problem.ok) return `a ${a.status} whose body is not a problem document`;
  if (problem.value.status !== a.status) return `a ${a.status} problem that says ${problem.value.status}`;
  return null;
}

/** Ids of what 2xx answers created, to tell them apart from anything a 4xx might have created. */
function createdIds(a: Answer): { runIds: string[]; suiteRunIds: string[] } {
  if (a.status !== 201) return { runIds: [], suiteRunIds: [] };
  try {
    const body = JSON.parse(a.body) as { runId?: string; runIds?: string[]; suiteRunId?: string };
    return {
      runIds: [...(body.runId ? [body.runId] : []), ...(body.runIds ?? [])],
      suiteRunIds: body.suiteRunId ? [body.suiteRunId] : [],
    };
  } catch {
    return { runIds: [], suiteRunIds: [] };
  }
}

async function tenant(db: Db, tag: string, plan: { maxActiveRuns: number; monthlyRuns: number }) {
  const workspace = await createWorkspace(db, { name: `fuzz-${tag}`, plan: 'team', ...plan });
  const email = `fuzz-${tag}@example.test`;
  await addMember(db, workspace.id, email);
  const key = await createApiKey(db, { workspaceId: workspace.id, creatorEmail: email, name: `fuzz-${tag}` });
  return { workspace, key };
}

/**
 * Sends `cases` generated requests (seeded, so a run is reproducible) to a real API on a real port,
 * on the Postgres and Redis of `env`, and checks every answer and, per batch, that nothing but the
 * 2xx answers created runs or jobs.
 */
export async function runFuzz(options: FuzzOptions): Promise<FuzzReport> {
  const config = readApiConfig({
    ...options.env,
    PORT: '0',
    PUBLIC_BASE_URL: 'http://127.0.0.1',
    RATE_LIMIT_PER_MINUTE: '1000000',
    RATE_LIMIT_UNAUTHENTICATED_PER_MINUTE: '1000000',
    // The seed project's target is on loopback, which the network policy closes by default: its port only.
    TARGET_ALLOW: options.env.TARGET_ALLOW ?? '127.0.0.1:2',
    REDIS_PREFIX: `${options.env.REDIS_PREFIX ?? 'testrun'}-fuzz-${options.seed}-${Date.now().toString(36)}`,
  });
  const logger = createLogger({ service: 'api', level: 'error', stream: new PassThrough() });
  const db = createPrisma({ databaseUrl: config.databaseUrl, max: 4 });
  const redis = createApiRedis(config.redisUrl, logger);
  const queue = createRunQueue(redis, config.redisPrefix);
  queue.on('error', () => undefined);
  const keys = deriveKeys(config.secret);
  const app = createApp({ config, db, redis, queue, logger, store: new LocalArtifactStore(config.artifactsDir), keys });
  const server: Server = createApiServer(app, logger);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const connections = trackConnections(server);
  try {
    const tag = `${options.seed}-${Date.now().toString(36)}`;
    const own = await tenant(db, tag, { maxActiveRuns: 1_000_000, monthlyRuns: 1_000_000 });
    const other = await tenant(db, `${tag}-x`, { maxActiveRuns: 10, monthlyRuns: 10 });
    await changeApiKey(db, other.key.id, 'revoke', authChangeAnnouncer(redis, config.redisPrefix));
    await applyProject(db, own.workspace.id, {
      slug: 'shop',
      name: 'Shop',
      baseUrl: 'http://127.0.0.1:2',
      suites: [
        { slug: 'smoke', name: 'Smoke', tests: [{ key: 't1', name: 'one', steps: [{ action: 'goto', url: '/' }] }] },
      ],
    });
    const test = await db.test.findFirstOrThrow({ where: { workspaceId: own.workspace.id } });
    const seedBody = JSON.stringify({ projectSlug: 'shop', suiteSlug: 'smoke' });
    const seedRun = await send(
      port,
      Buffer.from(
        `POST /api/v1/runs HTTP/1.1\r\nHost: a\r\nAuthorization: Bearer ${own.key.key}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(seedBody)}\r\nConnection: close\r\n\r\n${seedBody}`,
      ),
    );
    const suiteRunId = createdIds(seedRun).suiteRunIds[0];
    if (suiteRunId === undefined) throw new Error(`the seed request failed: ${seedRun.status} ${seedRun.body}`);
    const run = await db.run.findFirstOrThrow({ where: { workspaceId: own.workspace.id } });
    const viewPath = (url: string) => new URL(url).pathname;
    const etagOf = async (path: string) => {
      const answer = await send(
        port,
        Buffer.from(
          `GET ${path} HTTP/1.1\r\nHost: a\r\nAuthorization: Bearer ${own.key.key}\r\nConnection: close\r\n\r\n`,
        ),
      );
      return /\r\netag: ([^\r]+)/i.exec(answer.headers)?.[1] ?? '"none"';
    };
    const world: FuzzWorld = {
      key: own.key.key,
      revokedKey: other.key.key,
      projectSlug: 'shop',
      suiteSlug: 'smoke',
      testId: test.id,
      runId: run.id,
      suiteRunId,
      viewPaths: [
        viewPath(runViewUrl(config.publicBaseUrl, keys.view, run.id)),
        viewPath(suiteRunViewUrl(config.publicBaseUrl, keys.view, suiteRunId)),
      ],
      etags: [await etagOf(`/api/v1/runs/${run.id}`), await etagOf(`/api/v1/suite-runs/${suiteRunId}`)],
    };
    const cases = fc.sample(fuzzCase(world), { seed: options.seed, numRuns: options.cases });
    const report: FuzzReport = {
      seed: options.seed,
      cases: cases.length,
      byStatus: {},
      serverErrors: 0,
      notProblems: 0,
      stateChanges: 0,
      connectionsLeftOpen: 0,
      incomplete: cases.filter((c) => c.incomplete).length,
      failures: [],
    };
    const countRuns = () => db.run.count();
    // A job's id is its run's: a job is explained when its run is one a 2xx created. (A cancel in
    // the same batch may already have skipped that run; its job stays until a worker drops it.)
    const jobIds = async () => {
      const jobs = await queue.getJobs(['waiting', 'prioritized', 'delayed', 'active']);
      return new Set(jobs.flatMap((j) => (j.id === undefined ? [] : [j.id])));
    };
    for (let start = 0; start < cases.length; start += BATCH) {
      const batch = cases.slice(start, start + BATCH);
      const runsBefore = await countRuns();
      const jobsBefore = await jobIds();
      const runIds: string[] = [];
      const suiteRunIds: string[] = [];
      for (const [offset, c] of batch.entries()) {
        const answer = await send(port, c.bytes, c.incomplete);
        report.byStatus[answer.status] = (report.byStatus[answer.status] ?? 0) + 1;
        const reason = judge(c, answer);
        if (reason) {
          if (answer.statuses.some((s) => s >= 500)) report.serverErrors++;
          else report.notProblems++;
          report.failures.push({
            index: start + offset,
            label: c.label,
            request: c.bytes.subarray(0, 300).toString('latin1'),
            reason: `${reason} ${answer.body.slice(0, 200)}`,
          });
        }
        const ids = createdIds(answer);
        runIds.push(...ids.runIds);
        suiteRunIds.push(...ids.suiteRunIds);
      }
      const created = await db.run.findMany({
        where: { OR: [{ id: { in: runIds } }, { suiteRunId: { in: suiteRunIds } }] },
        select: { id: true },
      });
      const explained = created.length;
      const createdIdSet = new Set(created.map((r) => r.id));
      const newJobs = [...(await jobIds())].filter((id) => !jobsBefore.has(id));
      const jobsDelta = newJobs.length;
      const queued = newJobs.filter((id) => createdIdSet.has(id)).length;
      const runsDelta = (await countRuns()) - runsBefore;
      if (runsDelta !== explained || jobsDelta !== queued) {
        report.stateChanges++;
        report.failures.push({
          index: start,
          label: `batch ${start}-${start + batch.length - 1}`,
          request: '',
          reason: `runs +${runsDelta} (2xx explain ${explained}), jobs +${jobsDelta} (2xx explain ${queued})`,
        });
      }
      const open = await connections.newlyLeaked();
      if (open > 0) {
        report.connectionsLeftOpen++;
        report.failures.push({
          index: start,
          label: `batch ${start}-${start + batch.length - 1}`,
          request: '',
          reason: `${open} connection(s) the fuzzer closed still open on the server`,
        });
      }
    }
    return report;
  } finally {
    server.closeAllConnections();
    connections.destroyAll();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await queue.obliterate({ force: true }).catch(() => undefined);
    await queue.close().catch(() => undefined);
    redis.disconnect();
    await db.$disconnect();
  }
}
