// Playwright bundles over the API: PUT stores a workspace's bundle by its digest (201, then 200),
// HEAD says whether it is there, a body of another digest or not a bundle is 422 `invalid_bundle`,
// one over the cap 413, a key without `preview` 403, and another workspace never sees it. Real
// Postgres, Redis and the local artifact store.
import { createHash, randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import request from 'supertest';
import { pack } from 'tar-stream';
import { bundleExists, bundleKey, openBundle } from '@testrun/core/bundles';
import { LocalArtifactStore } from '@testrun/core/artifact-store';
import { createTenant, sampleProject } from '../support/harness';
import { expectProblem } from '../support/problems';
import { bearer, buildTestApi, type TestApi } from './api-harness';

const CAP = 64 * 1024;
let api: TestApi;
let store: LocalArtifactStore;
beforeAll(() => {
  api = buildTestApi({ bundleMaxBytes: CAP });
  store = new LocalArtifactStore(api.config.artifactsDir);
});
afterAll(async () => {
  await api.close();
});

/** A .tar.gz of the files given, with a manifest unless `manifest` is false. */
async function tarGz(files: Record<string, string | Buffer>, manifest = true): Promise<Buffer> {
  const tar = pack();
  const chunks: Buffer[] = [];
  tar.on('data', (c: unknown) => chunks.push(c as Buffer));
  const done = new Promise<void>((resolve) => tar.on('end', () => resolve()));
  const all = manifest
    ? {
        'testrun-bundle.json': JSON.stringify({
          format: 1,
          config: 'playwright.config.ts',
          playwrightVersion: null,
          files: 1,
        }),
        ...files,
      }
    : files;
  for (const [name, content] of Object.entries(all)) tar.entry({ name, mtime: new Date(0) }, content);
  tar.finalize();
  await done;
  return gzipSync(Buffer.concat(chunks));
}

const digestOf = (bytes: Buffer) => `sha256:${createHash('sha256').update(bytes).digest('hex')}`;
const url = (digest: string, slug = 'shop') => `/api/v1/projects/${slug}/bundles/${digest}`;

function put(key: string, digest: string, bytes: Buffer) {
  return request(api.app).put(url(digest)).set(bearer(key)).set('Content-Type', 'application/octet-stream').send(bytes);
}

describe('PUT and HEAD …/bundles/{digest}', () => {
  it('stores a bundle (201) under bundles/<workspace>/<hex>.tar.gz, then answers 200 and HEAD 200', async () => {
    const t = await createTenant(api.db, { scopes: ['preview'] });
    const bytes = await tarGz({ 'playwright.config.ts': 'export default {};\n' });
    const digest = digestOf(bytes);
    expect((await request(api.app).head(url(digest)).set(bearer(t.key))).status).toBe(404);

    const first = await put(t.key, digest, bytes);
    expect([first.status, first.body]).toEqual([201, { digest, size: bytes.length }]);
    const key = bundleKey(t.workspace.id, digest);
    expect(key).toBe(`bundles/${t.workspace.id}/${digest.slice(7)}.tar.gz`);
    expect(existsSync(path.join(api.config.artifactsDir, key))).toBe(true);
    expect(await store.get(key)).toEqual(bytes);

    const again = await put(t.key, digest, bytes);
    expect([again.status, again.body]).toEqual([200, { digest, size: bytes.length }]);
    const head = await request(api.app).head(url(digest)).set(bearer(t.key));
    expect(head.status).toBe(200);
    expect(await bundleExists(store, t.workspace.id, digest)).toBe(true);
    const opened = await openBundle(store, t.workspace.id, digest);
    expect(opened?.size).toBe(bytes.length);
    opened?.stream.destroy();
  });

  it('refuses bytes of another digest, and bytes that are no bundle, with 422 invalid_bundle', async () => {
    const t = await createTenant(api.db, { scopes: ['preview'] });
    const bytes = await tarGz({ 'a.spec.ts': 'x' });
    const other = await tarGz({ 'b.spec.ts': 'y' });
    const wrong = expectProblem(await put(t.key, digestOf(other), bytes), 'invalid_bundle');
    expect(wrong.detail).toContain(`not ${digestOf(other)}`);
    expect(await bundleExists(store, t.workspace.id, digestOf(other))).toBe(false);
    expect(await bundleExists(store, t.workspace.id, digestOf(bytes))).toBe(false);

    const plain = Buffer.from('not a tar at all');
    expectProblem(await put(t.key, digestOf(plain), plain), 'invalid_bundle');
    const noManifest = await tarGz({ 'a.spec.ts': 'x' }, false);
    const missing = expectProblem(await put(t.key, digestOf(noManifest), noManifest), 'invalid_bundle');
    expect(missing.detail).toContain('testrun-bundle.json');
    const gzipNotTar = gzipSync(Buffer.alloc(2048, 7));
    expectProblem(await put(t.key, digestOf(gzipNotTar), gzipNotTar), 'invalid_bundle');
  });

  it('refuses a bundle over the cap with 413 naming it, whether its length is announced or not', async () => {
    const t = await createTenant(api.db, { scopes: ['preview'] });
    const big = await tarGz({ 'noise.bin': randomBytes(CAP * 2) });
    expect(big.length).toBeGreaterThan(CAP);
    const announced = expectProblem(await put(t.key, digestOf(big), big), 'payload_too_large');
    expect(announced.detail).toContain('BUNDLE_LIMITS.maxBytes');
    const chunked = request(api.app)
      .put(url(digestOf(big)))
      .set(bearer(t.key))
      .set('Content-Type', 'application/octet-stream')
      .set('Transfer-Encoding', 'chunked');
    chunked.write(big.subarray(0, CAP / 2));
    chunked.write(big.subarray(CAP / 2));
    expectProblem(await chunked, 'payload_too_large');
    expect(await bundleExists(store, t.workspace.id, digestOf(big))).toBe(false);
  });

  it('needs the preview scope (403), and a body sent as application/octet-stream (415)', async () => {
    const runOnly = await createTenant(api.db);
    const bytes = await tarGz({ 'a.spec.ts': 'x' });
    const refused = expectProblem(await put(runOnly.key, digestOf(bytes), bytes), 'insufficient_scope');
    expect(refused.required_scope).toBe('preview');
    expect(
      (
        await request(api.app)
          .head(url(digestOf(bytes)))
          .set(bearer(runOnly.key))
      ).status,
    ).toBe(403);
    const t = await createTenant(api.db, { scopes: ['preview'] });
    const json = request(api.app)
      .put(url(digestOf(bytes)))
      .set(bearer(t.key))
      .send({ bytes: 'x' });
    expectProblem(await json, 'unsupported_media_type');
  });

  it("another workspace's bundle reads as missing, and uploading it there stores a copy of its own", async () => {
    const owner = await createTenant(api.db, { scopes: ['preview'] });
    const other = await createTenant(api.db, { scopes: ['preview'] });
    const bytes = await tarGz({ 'secret.spec.ts': 'owner only' });
    const digest = digestOf(bytes);
    expect((await put(owner.key, digest, bytes)).status).toBe(201);
    expect((await request(api.app).head(url(digest)).set(bearer(other.key))).status).toBe(404);
    expect(await bundleExists(store, other.workspace.id, digest)).toBe(false);
    expect((await put(other.key, digest, bytes)).status).toBe(201);
  });

  it('a path whose digest is not sha256:<64 hex> is a 404', async () => {
    const t = await createTenant(api.db, { scopes: ['preview'] });
    expectProblem(await put(t.key, 'sha256:abc', Buffer.from('x')), 'not_found');
    expect((await request(api.app).head(url('md5:00')).set(bearer(t.key))).status).toBe(404);
  });
});

describe('a deployment of a file with playwright:', () => {
  const file = () => ({
    ...sampleProject('pw'),
    playwright: { config: 'e2e/playwright.config.ts' },
    suites: [{ slug: 'all', playwright: {} }],
  });
  const deploy = (key: string, body: Record<string, unknown>) =>
    request(api.app).post('/api/v1/projects/pw/deployments').set(bearer(key)).send(body);

  it('names /bundle when the bundle is missing or not uploaded to this workspace', async () => {
    const t = await createTenant(api.db, { scopes: ['deploy'] });
    const missing = expectProblem(await deploy(t.key, { project: file(), activate: false }), 'invalid_project');
    expect(missing.errors?.map((e) => e.path)).toEqual(['/bundle']);
    const absent = `sha256:${'0'.repeat(64)}`;
    const unknown = expectProblem(
      await deploy(t.key, { project: file(), activate: false, bundle: absent }),
      'invalid_project',
    );
    expect(unknown.errors?.map((e) => e.path)).toEqual(['/bundle']);
    const bytes = await tarGz({ 'e2e/playwright.config.ts': 'export default {};\n' });
    expect((await put(t.key, digestOf(bytes), bytes)).status).toBe(201);
    // Uploaded, the bundle passes its check: the deployment goes on to discovery, which this API
    // (no worker) cannot do.
    const later = await deploy(t.key, { project: file(), activate: false, bundle: digestOf(bytes) });
    expectProblem(later, 'discovery_unavailable');
  });
});
