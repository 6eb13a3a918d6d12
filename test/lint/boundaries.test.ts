import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';

/**
 * The import boundaries `pnpm lint` checks (.dependency-cruiser.cjs, docs/ARCHITECTURE.md): the
 * lint script's own dependency-cruiser command finds nothing in the real tree, and the same
 * configuration reports each kind of forbidden import planted in a small tree of fixture files.
 */

const ROOT = path.resolve(__dirname, '../..');
const CONFIG = path.join(ROOT, '.dependency-cruiser.cjs');
const DEPCRUISE = path.join(ROOT, 'node_modules', 'dependency-cruiser', 'bin', 'dependency-cruise.mjs');

type Violation = { rule: { name: string }; from: string; to: string; cycle?: Array<{ name: string }> };
type Module = { source: string; dependencies: Array<{ module: string; resolved: string }> };
type CruiseResult = { modules: Module[]; summary: { violations: Violation[]; totalCruised: number } };

/** Runs dependency-cruiser with JSON output; it exits non-zero when it finds errors, which is no failure here. */
async function cruise(cwd: string, args: string[]): Promise<CruiseResult> {
  const stdout = await new Promise<string>((resolve, reject) => {
    execFile(
      process.execPath,
      [DEPCRUISE, ...args, '--output-type', 'json'],
      { cwd, maxBuffer: 64 * 1024 * 1024 },
      (error, out, err) => {
        if (out.trim().startsWith('{')) resolve(out);
        else reject(new Error(`dependency-cruiser printed no report: ${error?.message ?? ''}\n${err}`));
      },
    );
  });
  return JSON.parse(stdout) as CruiseResult;
}

/** The dependency-cruiser command of `pnpm lint`, as arguments. */
async function lintCruiseArgs(): Promise<string[]> {
  const pkg = JSON.parse(await readFile(path.join(ROOT, 'package.json'), 'utf8')) as { scripts: { lint: string } };
  const command = pkg.scripts.lint.split('&&').map((part) => part.trim().split(/\s+/));
  const depcruise = command.find((words) => words[0] === 'depcruise');
  if (!depcruise) throw new Error(`the lint script runs no depcruise: ${pkg.scripts.lint}`);
  return depcruise.slice(1);
}

/** One line per violation: the rule, then the edge (or the cycle) it found. */
function lines(violations: Violation[]): string[] {
  return violations
    .map((v) =>
      v.cycle
        ? `${v.rule.name}: ${[v.from, ...v.cycle.map((c) => c.name)].join(' -> ')}`
        : `${v.rule.name}: ${v.from} -> ${v.to}`,
    )
    .sort();
}

test('the real tree has no forbidden import, and workspace packages resolve to their sources', async () => {
  const result = await cruise(ROOT, await lintCruiseArgs());

  expect(lines(result.summary.violations)).toEqual([]);
  // Every app and package was read, not a tree that resolution or an exclusion emptied.
  for (const dir of ['apps/api', 'apps/worker', 'packages/contracts', 'packages/core', 'packages/admin']) {
    expect(result.modules.some((m) => m.source.startsWith(`${dir}/src/`))).toBe(true);
  }
  // Each import of a workspace package is an edge to that package's sources (the `@testrun/source`
  // condition), not to its dist/, which the configuration leaves out.
  const workspaceEdges = result.modules.flatMap((m) => m.dependencies.filter((d) => d.module.startsWith('@testrun/')));
  expect(workspaceEdges.length).toBeGreaterThan(50);
  for (const edge of workspaceEdges) {
    const name = edge.module.split('/')[1] ?? '';
    expect(edge.resolved).toMatch(new RegExp(`^(packages|apps)/${name}/src/.+\\.ts$`));
  }
});

describe('a tree with forbidden imports', () => {
  let dir: string;

  /** Writes the fixture files (path -> source) under `dir`. */
  async function plant(files: Record<string, string>): Promise<void> {
    for (const [file, text] of Object.entries(files)) {
      await mkdir(path.dirname(path.join(dir, file)), { recursive: true });
      await writeFile(path.join(dir, file), text);
    }
  }

  /** Makes `@testrun/<name>` resolvable from `from` the way pnpm links a workspace dependency. */
  async function link(from: string, name: string): Promise<void> {
    const target = path.join(dir, from, 'node_modules', '@testrun');
    await mkdir(target, { recursive: true });
    await symlink(path.join(dir, 'packages', name), path.join(target, name), 'dir');
  }

  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'testrun-boundaries-'));
    const manifest = (name: string) =>
      JSON.stringify({ name: `@testrun/${name}`, exports: { '.': { '@testrun/source': './src/index.ts' } } });
    await plant({
      'packages/contracts/package.json': manifest('contracts'),
      'packages/core/package.json': manifest('core'),
      // contracts imports another package of ours.
      'packages/contracts/src/index.ts': "export { a } from '@testrun/core';\n",
      // A cycle closed by a type-only import.
      'packages/core/src/index.ts': "export { a } from './a';\n",
      'packages/core/src/a.ts': "import { b } from './b';\nexport const a = b + 1;\nexport type A = { a: number };\n",
      'packages/core/src/b.ts':
        "import type { A } from './a';\nexport const b = 1;\nexport const shape: A | null = null;\n",
      // A package imports an app and a root test helper.
      'packages/core/src/uses-app.ts': "import { api } from '../../../apps/api/src/index';\nexport const x = api;\n",
      'packages/core/src/uses-test.ts':
        "import { helper } from '../../../test/support/helper';\nexport const y = helper;\n",
      // An app imports another app; allowed: an app imports packages, unresolvable: a package that is not there.
      'apps/api/src/index.ts':
        "import { a } from '@testrun/core';\nimport { worker } from '../../worker/src/index';\nexport const api = a + worker;\n",
      'apps/api/src/missing.ts': "import { gone } from '@testrun/gone';\nexport const m = gone;\n",
      'apps/worker/src/index.ts': "import { b } from '@testrun/core';\nexport const worker = b;\n",
      // An app imports the operator's admin package (allowed: admin imports itself).
      'apps/worker/src/uses-admin.ts':
        "import { op } from '../../../packages/admin/src/operations';\nexport const w = op;\n",
      'packages/admin/src/operations.ts': "import { helper } from './helper';\nexport const op = helper;\n",
      'packages/admin/src/helper.ts': 'export const helper = 1;\n',
      // A colocated test imports a root test helper.
      'apps/worker/src/index.test.ts':
        "import { helper } from '../../../test/support/helper';\nexport const t = helper;\n",
      // A worker executor imports the worker's service.
      'apps/worker/src/executors/x.ts': "import { service } from '../service/y';\nexport const x = service;\n",
      'apps/worker/src/service/y.ts': 'export const service = 1;\n',
      // The run lifecycle reaches up to an executor and the registry; the browser reaches across to the
      // sandbox on its floor (allowed: run/ imports browser/ below it, and a test of run/ anything).
      'apps/worker/src/run/attempt.ts': [
        "import { steps } from '../executors/steps/types';",
        "import { registry } from '../executors/index';",
        "import { clock } from '../browser/clock';",
        'export const attempt = steps + registry + clock;',
        '',
      ].join('\n'),
      'apps/worker/src/run/attempt.test.ts':
        "import { registry } from '../executors/index';\nexport const t = registry;\n",
      'apps/worker/src/browser/clock.ts':
        "import { sandbox } from '../sandbox/index';\nexport const clock = sandbox;\n",
      'apps/worker/src/sandbox/index.ts': 'export const sandbox = 1;\n',
      // One executor imports another's folder and the registry (allowed: its own folder).
      'apps/worker/src/executors/steps/types.ts': [
        "import { pw } from '../playwright/ready-attempt';",
        "import { registry } from '../index';",
        "import { own } from './own';",
        'export const steps = pw + registry + own;',
        '',
      ].join('\n'),
      'apps/worker/src/executors/steps/own.ts': 'export const own = 1;\n',
      'apps/worker/src/executors/index.ts': 'export const registry = 1;\n',
      // The worker's ground floor imports a floor above it (allowed: support/ itself).
      'apps/worker/src/support/z.ts':
        "import { service } from '../service/y';\nimport { w } from './w';\nexport const z = service + w;\n",
      'apps/worker/src/support/w.ts': 'export const w = 1;\n',
      'test/support/helper.ts': 'export const helper = 1;\n',
      // Code run in the sandbox imports a worker module and a package (allowed: Node, Playwright, inside/).
      'apps/worker/src/executors/playwright/inside/reporter.ts': [
        "import { readFileSync } from 'node:fs';",
        "import type { Reporter } from 'playwright/types/testReporter';",
        "import { test } from 'playwright/test';",
        "import { line } from './protocol';",
        "import { cap } from '../runner/tail';",
        "import { a } from '@testrun/core';",
        'export const r = [readFileSync, test, line, cap, a] as unknown as Reporter;',
        '',
      ].join('\n'),
      'apps/worker/src/executors/playwright/inside/protocol.ts': 'export const line = 1;\n',
      // The runner adapter imports the executor room above it (allowed: the caches and inside/ below it,
      // and a test beside it), and a cache imports the runner adapter.
      'apps/worker/src/executors/playwright/runner/tail.ts': [
        "import { ready } from '../ready-attempt';",
        "import { kept } from '../caches/transform-cache';",
        "import { line } from '../inside/protocol';",
        'export const cap = ready + kept + line;',
        '',
      ].join('\n'),
      'apps/worker/src/executors/playwright/runner/tail.test.ts':
        "import { ready } from '../ready-attempt';\nexport const t = ready;\n",
      'apps/worker/src/executors/playwright/runner/types.ts': 'export const types = 1;\n',
      'apps/worker/src/executors/playwright/caches/transform-cache.ts':
        "import { types } from '../runner/types';\nexport const kept = types;\n",
      'apps/worker/src/executors/playwright/ready-attempt.ts': 'export const ready = 1;\n',
      // A colocated test that opens a socket is an integration test.
      'apps/api/src/server.test.ts': "import { createServer } from 'node:http';\nexport const s = createServer;\n",
      // Allowed: a root test imports apps and helpers.
      'test/e2e/x.test.ts':
        "import { api } from '../../apps/api/src/index';\nimport { helper } from '../support/helper';\nexport const z = api + helper;\n",
    });
    await link('packages/contracts', 'core');
    await link('apps/api', 'core');
    await link('apps/worker', 'core');
  });

  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  test("each is reported under its rule by the project's configuration", async () => {
    const result = await cruise(dir, ['--config', CONFIG, 'apps', 'packages', 'test']);

    expect(lines(result.summary.violations)).toEqual(
      [
        'admin-only-for-operators: apps/worker/src/uses-admin.ts -> packages/admin/src/operations.ts',
        'apps-not-each-other: apps/api/src/index.ts -> apps/worker/src/index.ts',
        'colocated-tests-are-unit-tests: apps/api/src/server.test.ts -> http',
        'colocated-tests-not-root-test: apps/worker/src/index.test.ts -> test/support/helper.ts',
        'contracts-imports-no-workspace-package: packages/contracts/src/index.ts -> packages/core/src/index.ts',
        'no-cycles: packages/core/src/a.ts -> packages/core/src/b.ts -> packages/core/src/a.ts',
        'packages-not-apps-or-test: packages/core/src/uses-app.ts -> apps/api/src/index.ts',
        'packages-not-apps-or-test: packages/core/src/uses-test.ts -> test/support/helper.ts',
        'workspace-imports-resolve: apps/api/src/missing.ts -> @testrun/gone',
        'worker-floor-executors: apps/worker/src/executors/x.ts -> apps/worker/src/service/y.ts',
        'worker-floor-support: apps/worker/src/support/z.ts -> apps/worker/src/service/y.ts',
        'worker-floor-run: apps/worker/src/run/attempt.ts -> apps/worker/src/executors/steps/types.ts',
        'worker-floor-run: apps/worker/src/run/attempt.ts -> apps/worker/src/executors/index.ts',
        'worker-floor-browser: apps/worker/src/browser/clock.ts -> apps/worker/src/sandbox/index.ts',
        'worker-executors-own-folder: apps/worker/src/executors/steps/types.ts -> apps/worker/src/executors/playwright/ready-attempt.ts',
        'worker-executors-own-folder: apps/worker/src/executors/steps/types.ts -> apps/worker/src/executors/index.ts',
        'worker-inside-sandbox-only: apps/worker/src/executors/playwright/inside/reporter.ts -> apps/worker/src/executors/playwright/runner/tail.ts',
        'worker-playwright-executor-on-top: apps/worker/src/executors/playwright/runner/tail.ts -> apps/worker/src/executors/playwright/ready-attempt.ts',
        'worker-playwright-caches-below-runner: apps/worker/src/executors/playwright/caches/transform-cache.ts -> apps/worker/src/executors/playwright/runner/types.ts',
        'worker-inside-sandbox-only: apps/worker/src/executors/playwright/inside/reporter.ts -> packages/core/src/index.ts',
      ].sort(),
    );
  });
});
