import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import {
  runSandboxed,
  type SandboxLimits,
  type SandboxResult,
  type SandboxSpec,
} from '../../../apps/worker/src/sandbox';

/*
 * Each test's sandbox: the hostile program is a small Node script in a bundle directory bound
 * read-only, run by the sandboxed /usr/bin/node with a scratch directory of its own.
 */

const SMALL_LIMITS: SandboxLimits = {
  memoryBytes: 128 * 1024 * 1024,
  pids: 64,
  cpuQuota: 0.5,
  wallMs: 15_000,
  outputBytes: 256 * 1024,
  tmpBytes: 4 * 1024 * 1024,
};

export interface Harness {
  /** The host directory holding the bundles and scratch directories of this file. */
  base: string;
  /** Writes `source` as a script and runs it sandboxed; `scratch` names the scratch directory to use. */
  run(
    source: string,
    options?: {
      env?: Record<string, string>;
      limits?: Partial<SandboxLimits>;
      scratch?: string;
      signal?: AbortSignal;
      network?: SandboxSpec['network'];
    },
  ): Promise<SandboxResult & { scratchDir: string }>;
  close(): Promise<void>;
}

export async function sandboxHarness(): Promise<Harness> {
  const base = await mkdtemp(path.join(tmpdir(), 'testrun-sandbox-test-'));
  const bundle = path.join(base, 'bundle');
  await mkdir(bundle);
  let scripts = 0;
  return {
    base,
    async run(source, options = {}) {
      scripts += 1;
      const script = path.join(bundle, `program-${scripts}.js`);
      await writeFile(script, source);
      const scratchDir = path.join(base, options.scratch ?? `scratch-${scripts}`);
      await mkdir(scratchDir, { recursive: true });
      const spec: SandboxSpec = {
        command: process.execPath,
        args: [script],
        readOnlyBinds: [bundle],
        scratchDir,
        env: { PATH: '/usr/bin:/bin', ...options.env },
        limits: { ...SMALL_LIMITS, ...options.limits },
        network: options.network ?? 'none',
        signal: options.signal,
      };
      const result = await runSandboxed(spec);
      expectNothingLeft(result.id, bundle);
      return { ...result, scratchDir };
    },
    close: () => rm(base, { recursive: true, force: true }),
  };
}

/** The sandbox's groups are removed and no process runs a script of the bundle any more. */
function expectNothingLeft(id: string, bundle: string): void {
  for (const controller of ['memory', 'pids', 'cpu']) {
    expect(existsSync(path.join('/sys/fs/cgroup', controller, 'testrun-sandbox', id))).toBe(false);
  }
  const left = readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .filter((pid) => {
      try {
        return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(bundle);
      } catch {
        return false;
      }
    });
  expect(left).toEqual([]);
}

/** The last line of stdout, parsed: the programs report what they saw as one JSON line. */
export function report(result: SandboxResult): unknown {
  const lines = result.stdout.trim().split('\n');
  return JSON.parse(lines[lines.length - 1] ?? 'null');
}
