import { createHash, randomUUID } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import { get, type IncomingMessage } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { artifactKey, LocalArtifactStore } from '@testrun/core/artifact-store';
import { createPrisma } from '@testrun/core/db';
import { ID_PREFIX, newId } from '@testrun/core/ids';
import { createLogger } from '@testrun/core/logger';
import { runViewUrl, suiteRunViewUrl } from '@testrun/core/view-links';
import { freePort } from '../support/processes';
import { createSuiteRun, STEPS, type SeededSuite } from './seed';
import { startApi } from './server';
import { defined, eventually, startViewEnv, type ViewEnv } from './support';

// The serving of artifact bytes: ranges, caching, streaming, and how failures answer. The bytes are
// files of a known pattern attached to a real run, so every range can be checked to the byte.
const ASSETS_DIR = path.resolve(__dirname, '../../apps/api/assets');
const root = mkdtempSync(path.join(tmpdir(), 'testrun-view-artifacts-'));
const logLines: string[] = [];
let env: ViewEnv;
let suite: SeededSuite;
let runId: string;
let small: { url: string; body: Buffer; id: string };
let large: { url: string; file: string };

function pattern(size: number): Buffer {
  return Buffer.from(Array.from({ length: size }, (_, i) => i % 251));
}

/** Stores bytes as an artifact of the run, as the worker does (file in the store, row in Postgres). */
async function attach(name: string, body: Buffer, storageKey?: string) {
  const id = newId(ID_PREFIX.artifact);
  const key = storageKey ?? artifactKey(suite.workspaceId, runId, id, name);
  if (storageKey === undefined) await env.api.store.put(key, body);
  await env.db.artifact.create({
    data: {
      id,
      runId,
      workspaceId: suite.workspaceId,
      attempt: 1,
      kind: 'trace',
      stepIndex: null,
      name,
      storageKey: key,
      contentType: 'application/zip',
      sizeBytes: body.length,
    },
  });
  return { id, key, url: `${runViewUrl(env.api.origin, env.api.keys.view, runId)}/artifacts/${id}` };
}

beforeAll(async () => {
  const stream = new PassThrough();
  stream.on('data', (chunk: Buffer) => logLines.push(chunk.toString('utf8')));
  env = await startViewEnv({
    store: new LocalArtifactStore(root),
    logger: createLogger({ service: 'api-test', level: 'warn', stream }),
  });
  suite = await createSuiteRun(env.db, env.api.keys, [{ name: 'Home page loads', steps: [STEPS.home()] }], {
    baseUrl: env.site.url,
  });
  runId = defined(suite.runs[0], 'the run').id;
  const body = pattern(4_096);
  const stored = await attach('small.zip', body);
  small = { url: stored.url, body, id: stored.id };
  // Larger than what the sockets between server and client buffer, so the read has to wait for the reader.
  const big = await attach('large.zip', pattern(32 * 1024 * 1024));
  large = { url: big.url, file: path.join(root, big.key) };
});

afterAll(async () => {
  await env.close();
  rmSync(root, { recursive: true, force: true });
});

async function bytes(res: Response): Promise<Buffer> {
  return Buffer.from(await res.arrayBuffer());
}

test('one range is a 206 of exactly those bytes; suffix and open ranges work', async () => {
  const size = small.body.length;
  for (const [header, start, end] of [
    ['bytes=0-9', 0, 9],
    ['bytes=-5', size - 5, size - 1],
    [`bytes=${size - 10}-`, size - 10, size - 1],
    [`bytes=100-${size + 500}`, 100, size - 1],
  ] as const) {
    const res = await fetch(small.url, { headers: { range: header } });
    expect({ header, status: res.status }).toEqual({ header, status: 206 });
    expect(res.headers.get('content-range')).toBe(`bytes ${start}-${end}/${size}`);
    expect(res.headers.get('content-length')).toBe(String(end - start + 1));
    expect((await bytes(res)).equals(small.body.subarray(start, end + 1))).toBe(true);
  }
});

test('an unsatisfiable range is a 416 naming the size; several ranges or a malformed one get the whole file', async () => {
  const size = small.body.length;
  const unsatisfiable = await fetch(small.url, { headers: { range: `bytes=${size}-` } });
  expect(unsatisfiable.status).toBe(416);
  expect(unsatisfiable.headers.get('content-range')).toBe(`bytes */${size}`);

  for (const header of ['bytes=0-1,100-101', 'bytes=abc', 'items=0-1']) {
    const res = await fetch(small.url, { headers: { range: header } });
    expect({ header, status: res.status }).toEqual({ header, status: 200 });
    expect(res.headers.get('content-range')).toBeNull();
    expect((await bytes(res)).equals(small.body)).toBe(true);
  }
  // Overlapping ranges are one range.
  const combined = await fetch(small.url, { headers: { range: 'bytes=0-9,5-19' } });
  expect(combined.status).toBe(206);
  expect(combined.headers.get('content-range')).toBe(`bytes 0-19/${size}`);
});

test('If-Range, If-None-Match and HEAD', async () => {
  const etag = `"${small.id}"`;
  const stale = await fetch(small.url, { headers: { range: 'bytes=0-9', 'if-range': '"another"' } });
  expect(stale.status).toBe(200);
  expect((await bytes(stale)).length).toBe(small.body.length);
  const current = await fetch(small.url, { headers: { range: 'bytes=0-9', 'if-range': etag } });
  expect(current.status).toBe(206);
  await current.arrayBuffer();

  const cached = await fetch(small.url, { headers: { 'if-none-match': etag } });
  expect(cached.status).toBe(304);
  expect(cached.headers.get('cache-control')).toBe('private, max-age=31536000, immutable');

  const head = await fetch(small.url, { method: 'HEAD' });
  expect(head.status).toBe(200);
  expect(head.headers.get('content-length')).toBe(String(small.body.length));
  expect(head.headers.get('accept-ranges')).toBe('bytes');
  const headRange = await fetch(small.url, { method: 'HEAD', headers: { range: 'bytes=10-19' } });
  expect(headRange.status).toBe(206);
  expect(headRange.headers.get('content-length')).toBe('10');
});

test('a row whose file is not in the store is a 404, like an unknown artifact', async () => {
  const gone = await attach(
    'gone.zip',
    Buffer.alloc(10),
    artifactKey(suite.workspaceId, runId, 'art_gone', 'gone.zip'),
  );
  const res = await fetch(gone.url);
  expect(res.status).toBe(404);
  expect(await res.text()).toContain('Not found');
});

/** How many descriptors of this process are open on the file. */
function openHandles(file: string): number {
  let count = 0;
  for (const fd of readdirSync('/proc/self/fd')) {
    try {
      if (readlinkSync(`/proc/self/fd/${fd}`) === file) count++;
    } catch {
      // Closed while listing.
    }
  }
  return count;
}

test('a client that goes away mid-stream leaves no file open', async () => {
  const response = await new Promise<IncomingMessage>((resolve, reject) => {
    get(large.url, resolve).on('error', reject);
  });
  expect(response.statusCode).toBe(200);
  // The reader stops reading: the server's stream waits with the file open.
  response.pause();
  await eventually(() => openHandles(large.file) === 1);
  response.destroy();
  await eventually(() => openHandles(large.file) === 0);
});

test('the stylesheet and script are served under their content hash, cached for good', async () => {
  const page = await (await fetch(suiteRunViewUrl(env.api.origin, env.api.keys.view, suite.suiteRunId))).text();
  for (const [file, type] of [
    ['view.css', 'text/css'],
    ['view.js', 'text/javascript'],
  ] as const) {
    const content = readFileSync(path.join(ASSETS_DIR, file));
    const hash = createHash('sha256').update(content).digest('hex').slice(0, 12);
    const [stem, ext] = file.split('.');
    const href = `/view/assets/${stem ?? ''}.${hash}.${ext ?? ''}`;
    expect(page).toContain(`"${href}"`);
    const res = await fetch(`${env.api.origin}${href}`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain(type);
    expect(res.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expect((await bytes(res)).equals(content)).toBe(true);
    const again = await fetch(`${env.api.origin}${href}`, {
      headers: { 'if-none-match': defined(res.headers.get('etag'), 'an ETag') },
    });
    expect(again.status).toBe(304);
    // Another version's name is not served from this one's content.
    const old = await fetch(`${env.api.origin}/view/assets/${stem ?? ''}.000000000000.${ext ?? ''}`);
    expect(old.status).toBe(404);
  }
});

test('a fault of the view is a 500, logged with the request id; only an outage is a 503', async () => {
  // A row whose key the store refuses: a bug, not an outage.
  const broken = await attach('broken.zip', Buffer.alloc(10), 'not a key/../escape');
  const requestId = `req-${randomUUID()}`;
  const fault = await fetch(broken.url, { headers: { 'x-request-id': requestId } });
  expect(fault.status).toBe(500);
  expect(fault.headers.get('retry-after')).toBeNull();
  expect(fault.headers.get('cache-control')).toBe('no-store');
  expect(await fault.text()).toContain('Something went wrong');
  const logged = logLines.filter((line) => line.includes(requestId));
  expect(logged).toHaveLength(1);
  expect(JSON.parse(defined(logged[0], 'the log line'))).toMatchObject({ level: 'error', requestId });

  // The artifact store cannot be read: its root is a file, not a directory.
  const notADirectory = path.join(root, 'not-a-directory');
  writeFileSync(notADirectory, '');
  const storeDown = await startApi(env.db, { store: new LocalArtifactStore(notADirectory) });
  // Postgres cannot be reached: nothing listens on the port.
  const dbDown = createPrisma({ databaseUrl: `postgresql://testrun@127.0.0.1:${await freePort()}/none`, max: 1 });
  const postgresDown = await startApi(dbDown);
  try {
    const cases = [
      small.url.replace(env.api.origin, storeDown.origin),
      suiteRunViewUrl(postgresDown.origin, postgresDown.keys.view, suite.suiteRunId),
    ];
    for (const url of cases) {
      const res = await fetch(url);
      expect({ url, status: res.status }).toEqual({ url, status: 503 });
      expect(res.headers.get('retry-after')).toBe('5');
      expect(res.headers.get('cache-control')).toBe('no-store');
      expect(await res.text()).toContain('Temporarily unavailable');
    }
  } finally {
    await storeDown.close();
    await postgresDown.close();
    await dbDown.$disconnect();
  }
});
