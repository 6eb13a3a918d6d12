/**
 * `pnpm bench install`: what a CI job pays to get the `testrun` binary. Packs @testrun/cli and
 * @testrun/client with `pnpm pack`, installs each alone with npm into an empty directory, and
 * measures the installed size (target ≤ 15 MB for the CLI) and `testrun --version` from spawn to exit
 * (target ≤ 300 ms, median).
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, statSync } from 'node:fs';
import os, { tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { installAlone, packPackage, PUBLISHED_PACKAGES } from '../test/support/packed';
import { machineLine, spread, writeSection } from './report';

const ROUNDS = Number(process.env.BENCH_INSTALL_ROUNDS ?? 10);
const SIZE_TARGET_MB = 15;
const VERSION_TARGET_MS = 300;

/** Disk usage of `dir` in bytes, as `du -sk` counts it (blocks, not apparent sizes). */
function diskUsage(dir: string): number {
  const [kib = '0'] = execFileSync('du', ['-sk', dir], { encoding: 'utf8' }).trim().split(/\s+/);
  return Number(kib) * 1024;
}

/** How many packages npm put in node_modules (scoped ones counted one by one). */
function packageCount(nodeModules: string): number {
  let count = 0;
  for (const entry of readdirSync(nodeModules)) {
    if (entry.startsWith('.')) continue;
    count += entry.startsWith('@') ? readdirSync(path.join(nodeModules, entry)).length : 1;
  }
  return count;
}

/** Wall time of one `node <bin> --version`, spawn to exit. */
function versionTime(bin: string, cwd: string): number {
  const began = performance.now();
  const result = spawnSync(process.execPath, [bin, '--version'], { cwd, encoding: 'utf8' });
  const elapsed = performance.now() - began;
  if (result.status !== 0) throw new Error(`testrun --version exited ${result.status}: ${result.stderr}`);
  return elapsed;
}

const mb = (bytes: number) => `${(bytes / 1e6).toFixed(2)} MB`;
const kb = (bytes: number) => `${(bytes / 1e3).toFixed(0)} kB`;

export async function run(): Promise<void> {
  const [load = 0] = os.loadavg();
  const dir = mkdtempSync(path.join(tmpdir(), 'testrun-bench-install-'));
  const rows: string[] = [];
  let cliSize = 0;
  let cliDir = '';
  for (const name of PUBLISHED_PACKAGES) {
    const tarball = await packPackage(name, dir);
    const began = performance.now();
    const installed = await installAlone(tarball);
    const installMs = performance.now() - began;
    const nodeModules = path.join(installed, 'node_modules');
    const size = diskUsage(nodeModules);
    if (name === 'cli') [cliSize, cliDir] = [size, installed];
    rows.push(
      `| \`@testrun/${name}\` | ${kb(statSync(tarball).size)} | ${mb(size)} | ${packageCount(nodeModules)} | ${(installMs / 1000).toFixed(1)} s |`,
    );
    process.stdout.write(`${name}: installed ${mb(size)} in ${(installMs / 1000).toFixed(1)} s\n`);
  }

  const bin = path.join(cliDir, 'node_modules', '.bin', 'testrun');
  versionTime(bin, cliDir); // the first run reads the files from disk; the rest is what a job sees after
  const times = Array.from({ length: ROUNDS }, () => versionTime(bin, cliDir));
  const version = spread(times);
  const bare = spread(
    Array.from({ length: ROUNDS }, () => {
      const began = performance.now();
      spawnSync(process.execPath, ['-e', '0']);
      return performance.now() - began;
    }),
  );
  process.stdout.write(`testrun --version: median ${version.median.toFixed(0)} ms\n`);
  const met = (ok: boolean) => (ok ? 'met' : 'missed');

  writeSection(
    'install',
    `## Installing the CLI: size and start

\`pnpm bench install\` (\`bench/install.ts\`; \`BENCH_INSTALL_ROUNDS\`, default 10).

- ${machineLine()}.
- Measured ${new Date().toISOString().slice(0, 10)}; the 1-minute load average was ${load.toFixed(1)} on ${os.cpus().length} cores when it
  started (other processes shared the machine when it is above the core count: start times are then slower).
- Each package is packed with \`pnpm pack\` from the built \`dist/\` and installed alone with
  \`npm install --prefer-offline --no-audit --no-fund ./<tarball>\` into an empty directory. Both are
  bundled (esbuild), so npm installs the one package and nothing else.
- **Installed size**: \`du -sk node_modules\` after the install. **Install**: wall time of that
  \`npm install\` (npm's cache was warm; the tarball is local).
- **\`testrun --version\`**: spawn to exit of \`node node_modules/.bin/testrun --version\`, ${ROUNDS} runs after
  one unmeasured run; median (min–max). A bare \`node -e 0\` on this machine takes
  ${bare.median.toFixed(0)} ms (${bare.min.toFixed(0)}–${bare.max.toFixed(0)}), the floor of any node CLI.

| Package | Tarball | Installed size | Packages installed | Install |
|---|---|---|---|---|
${rows.join('\n')}

| Figure | Target | Measured | |
|---|---|---|---|
| Installed size of \`@testrun/cli\` | ≤ ${SIZE_TARGET_MB} MB | ${mb(cliSize)} | ${met(cliSize <= SIZE_TARGET_MB * 1e6)} |
| \`testrun --version\` | ≤ ${VERSION_TARGET_MS} ms | ${version.median.toFixed(0)} ms (${version.min.toFixed(0)}–${version.max.toFixed(0)}) | ${met(version.median <= VERSION_TARGET_MS)} |
`,
  );
}
