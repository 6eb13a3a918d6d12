/**
 * What a CI user gets: @testrun/client and @testrun/cli packed with `pnpm pack`, each installed alone
 * with npm into an empty directory, and the installed `testrun` binary running a suite against a real
 * API process and worker with a secret header that only the environment holds.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { ProjectFile } from '@testrun/contracts';
import type { Db } from '@testrun/core/db';
import { parsed, wire } from '../api/typed';
import { PROTECTED_CREDENTIALS, startFixtureSite, type FixtureSite } from '../fixtures/site';
import { applySampleProject, createTenant, testDb } from '../support/harness';
import { installAlone, packPackage } from '../support/packed';
import {
  freePort,
  protectedPreviewTest,
  startService,
  waitReady,
  type CliResult,
  type ServiceProcess,
} from './cli-harness';

jest.setTimeout(180_000);

const CREDENTIALS = Buffer.from(`${PROTECTED_CREDENTIALS.username}:${PROTECTED_CREDENTIALS.password}`).toString(
  'base64',
);
const BASIC = `Basic ${CREDENTIALS}`;
/** Never in any output: the header as a whole and the credentials on their own. */
const SECRETS = [BASIC, CREDENTIALS];

const dir = mkdtempSync(path.join(tmpdir(), 'testrun-packed-'));
const cleanups: Array<() => Promise<unknown>> = [];
let db: Db;
let site: FixtureSite;
let api: ServiceProcess;
let worker: ServiceProcess;
let apiUrl: string;
let tenant: Awaited<ReturnType<typeof createTenant>>;
const tarballs: Record<'client' | 'cli', string> = { client: '', cli: '' };
const installed: Record<'client' | 'cli', string> = { client: '', cli: '' };

function project(baseUrl: string): ProjectFile {
  return {
    slug: 'preview',
    name: 'Preview',
    baseUrl,
    suites: [
      {
        slug: 'smoke',
        name: 'Smoke',
        tests: [protectedPreviewTest('Protected preview')],
      },
    ],
  };
}

/** Runs `file` with node in `cwd`, with only the environment a CI job would give it. */
function node(file: string, args: string[], cwd: string, env: Record<string, string>): Promise<CliResult> {
  return new Promise((resolve) => {
    const base = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? tmpdir() };
    execFile(process.execPath, [file, ...args], { cwd, env: { ...base, ...env } }, (error, stdout, stderr) => {
      const code = error === null ? 0 : typeof error.code === 'number' ? error.code : null;
      resolve({ code, stdout, stderr });
    });
  });
}

beforeAll(async () => {
  db = testDb();
  cleanups.push(() => db.$disconnect());
  // Pack both and install each alone while the services start.
  const packing = (async () => {
    for (const name of ['client', 'cli'] as const) {
      tarballs[name] = await packPackage(name, path.join(dir, 'tarballs'));
      installed[name] = await installAlone(tarballs[name]);
    }
  })();
  site = await startFixtureSite();
  cleanups.push(() => site.close());
  tenant = await createTenant(db);
  await applySampleProject(db, tenant.workspace.id, project(site.url));
  const port = await freePort();
  apiUrl = `http://127.0.0.1:${port}`;
  api = startService('api', { PORT: String(port), PUBLIC_BASE_URL: apiUrl });
  worker = startService('worker', { WORKER_CONCURRENCY: '1', WORKER_VIDEO: 'off' });
  cleanups.push(() => Promise.all([api.stop(), worker.stop()]));
  await Promise.all([waitReady(`${apiUrl}/readyz`, api), packing]);
});

afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

describe('the packed packages', () => {
  it('declare no workspace or runtime dependency, so npm installs each alone', () => {
    for (const name of ['client', 'cli'] as const) {
      const manifest = readFileSync(path.join(installed[name], 'node_modules/@testrun', name, 'package.json'), 'utf8');
      expect(manifest).not.toContain('workspace:');
      expect(JSON.parse(manifest)).not.toHaveProperty('dependencies');
      expect(readdirSync(path.join(installed[name], 'node_modules')).filter((d) => !d.startsWith('.'))).toEqual([
        '@testrun',
      ]);
    }
  });

  it('the client loads as CommonJS and as an ES module, with its declarations', async () => {
    const cwd = installed.client;
    const cjs = await node('-e', ["console.log(typeof require('@testrun/client').TestrunClient)"], cwd, {});
    const esm = await node(
      '--input-type=module',
      ['-e', "import { TestrunClient } from '@testrun/client'; console.log(typeof TestrunClient)"],
      cwd,
      {},
    );
    expect([cjs.stdout.trim(), esm.stdout.trim()]).toEqual(['function', 'function']);
    const files = readdirSync(path.join(cwd, 'node_modules/@testrun/client/dist')).sort();
    expect(files).toEqual(['index.cjs', 'index.d.cts', 'index.d.mts', 'index.mjs']);
  });

  it('the installed `testrun` tells its version, and that `testrun admin` lives with the server', async () => {
    const bin = path.join(installed.cli, 'node_modules/.bin/testrun');
    const version = await node(bin, ['--version'], installed.cli, {});
    const manifest = readFileSync(path.join(installed.cli, 'node_modules/@testrun/cli/package.json'), 'utf8');
    expect(version).toMatchObject({ code: 0, stdout: `${(JSON.parse(manifest) as { version: string }).version}\n` });
    const admin = await node(bin, ['admin', 'workspace', 'create', '--name', 'x'], installed.cli, {});
    expect(admin.code).toBe(2);
    expect(admin.stderr).toContain('not part of @testrun/cli');
    expect(admin.stderr).toContain('docs/ADMIN.md');
  });

  it('the installed `testrun run` passes a suite with a header from TESTRUN_HEADERS and never prints it', async () => {
    const bin = path.join(installed.cli, 'node_modules/.bin/testrun');
    const junit = path.join(dir, 'junit.xml');
    const r = await node(
      bin,
      ['run', '--project', 'preview', '--suite', 'smoke', '--poll-interval', '300ms', '--junit', junit, '--json'],
      installed.cli,
      {
        TESTRUN_API_URL: apiUrl,
        TESTRUN_API_KEY: tenant.key,
        TESTRUN_HEADERS: JSON.stringify({ Authorization: BASIC }),
      },
    );
    expect(r.stderr).not.toMatch(/missing|Cannot find module/);
    expect(r.code).toBe(0);
    expect(parsed(wire.runReport, JSON.parse(r.stdout))).toMatchObject({
      kind: 'suite',
      status: 'passed',
      counts: { total: 1, passed: 1 },
    });
    const everything = [r.stdout, r.stderr, readFileSync(junit, 'utf8')].join('\n');
    for (const secret of [...SECRETS, tenant.key]) expect(everything).not.toContain(secret);
    // The header did reach the target, so the pass is the header's doing.
    expect(site.received.some((q) => q.path === '/protected' && q.headers.authorization === BASIC)).toBe(true);
  });
});
