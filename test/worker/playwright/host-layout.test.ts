import { chmod, cp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { playwrightTestKey, runPlaywrightTests } from '../../../apps/worker/src/executors/playwright';
import { CodeCache } from '../../../apps/worker/src/executors/playwright/caches/code-cache';
import { makeControlDir } from '../../../apps/worker/src/executors/playwright/runner/interrupt';
import { servicePlaywright } from '../../../apps/worker/src/executors/playwright/runner/versions';
import { withScratch } from '../../../apps/worker/src/executors/playwright/runner/sandbox-scratch';
import { makeScratchDir } from '../../../apps/worker/src/support/scratch-dir';
import { checkSandboxSupport, shareFolder } from '../../../apps/worker/src/sandbox';
import { serveProxy, type Proxy } from './pw-harness';

/*
 * A Playwright batch as the worker runs it (its scratch directory, a scratch tmpfs, the egress
 * proxy's socket, the code cache and the control directory where the worker makes them): a spec
 * that reads the sandbox's mount table, cgroups and process list finds no host path naming where
 * the worker, its repository or its caches live (test/fixtures/playwright/hostile/layout.spec.js).
 */

jest.setTimeout(240_000);

const MiB = 1024 * 1024;
const REPO_ROOT = path.resolve(__dirname, '../../..');
const FIXTURE = path.join(__dirname, '../../fixtures/playwright/hostile');
const PROGRAMS = path.join(__dirname, '../../fixtures/hostile');
const RELAY_PORT = 3128;
const TITLE = "reads the host's layout";

let scratchRoot: string;
let proxy: Proxy;
let codeCache: CodeCache;

beforeAll(async () => {
  expect(await checkSandboxSupport()).toBeNull();
  // As the worker service makes its scratch directory (service-tasks.ts).
  scratchRoot = await makeScratchDir();
  await chmod(scratchRoot, 0o755);
  await cp(FIXTURE, path.join(scratchRoot, 'bundle'), { recursive: true });
  await cp(PROGRAMS, path.join(scratchRoot, 'bundle', 'programs'), { recursive: true });
  // As the worker's Playwright runtime makes them (service/playwright-tasks.ts, batch-run.ts).
  proxy = await serveProxy(await shareFolder('egress', 0o700), {});
  codeCache = await CodeCache.create(await shareFolder('code-cache', 0o755), servicePlaywright().playwright);
  expect(await codeCache.ready()).toBe(true);
});

afterAll(async () => {
  proxy.server.close();
  await rm(scratchRoot, { recursive: true, force: true });
});

interface Layout {
  mountinfo: string;
  cgroup: string;
  cmdlines: string[];
}

test("a spec reads the sandbox's mount table, cgroups and process list: no path of the worker's host", async () => {
  const control = await makeControlDir(await shareFolder('control', 0o755));
  const ref = { file: 'layout.spec.js', project: '', titlePath: [TITLE] };
  const results = await withScratch(
    scratchRoot,
    'pwb-',
    (scratchDir) =>
      runPlaywrightTests(
        {
          bundleDir: path.join(scratchRoot, 'bundle'),
          configFile: 'playwright.config.js',
          scratchDir,
          evidence: 'off',
          tests: [ref],
          network: { proxySocketPath: proxy.socketPath, port: RELAY_PORT },
          proxy: { server: `http://127.0.0.1:${RELAY_PORT}` },
          codeCache: codeCache.use(),
          controlDir: control.dir,
        },
        () => {},
      ),
    64 * MiB,
  ).finally(() => control.remove());
  const result = results.find((r) => r.key === playwrightTestKey(ref));
  expect(result).toMatchObject({ status: 'passed', code: null });
  const note = result?.attempts.at(-1)?.annotations.find((a) => a.type === 'seen');
  const layout = JSON.parse(note?.description ?? 'null') as Layout;
  expect(layout.mountinfo).toContain(' /node_modules/playwright-core ');
  expect(layout.cmdlines.some((line) => line.includes('chromium'))).toBe(true);
  const seen = JSON.stringify(layout);
  for (const hostPath of [REPO_ROOT, scratchRoot, '/root', '.pnpm', 'ms-playwright', 'testrun-worker-'])
    expect(seen).not.toContain(hostPath);
  // The OS temporary directory as a path of its own (the sandbox's /work/tmp is not it).
  expect(seen).not.toMatch(new RegExp(`(?<![\\w./-])${tmpdir()}/`));
  for (const line of layout.cgroup.trim().split('\n')) expect(line).toMatch(/:\/$/);
});
