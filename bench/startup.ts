/**
 * `pnpm bench startup`: how long the API and the worker take from spawn to ready, and how much
 * memory each holds once idle, started the way production used to start them (tsx compiling the
 * TypeScript sources at start) and the way it starts them now (node on the built JavaScript).
 * Rewrites the `startup` section of docs/BENCHMARKS.md.
 *
 * Each round starts every variant of one service once, in an order that rotates from round to round,
 * so drift on a shared machine spreads over all variants instead of favouring one.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { readCommonConfig } from '@testrun/core/env';
import { freePort, REPO_ROOT, serviceEntry, type ServiceName } from '../test/support/processes';
import { machineLine, spread, writeSection } from './report';

const ROUNDS = Number(process.env.BENCH_STARTUP_ROUNDS ?? 5);
/** How long a service sits idle after it is ready before its memory is read. */
const IDLE_MS = 2_000;
/** A start that takes longer than this is a failure, not a figure. */
const READY_TIMEOUT_MS = 60_000;

interface Variant {
  id: string;
  label: string;
  args: (service: ServiceName) => string[];
  env: Record<string, string>;
}

const tsxOnSources = (service: ServiceName) => [
  '--import',
  'tsx',
  '--conditions=@testrun/source',
  path.join(REPO_ROOT, 'apps', service, 'src', 'main.ts'),
];

const VARIANTS: Variant[] = [
  {
    id: 'tsx-cold',
    label: 'before: tsx on src, empty transform cache (a fresh container)',
    args: tsxOnSources,
    env: { TSX_DISABLE_CACHE: '1' },
  },
  { id: 'tsx-warm', label: 'before: tsx on src, warm transform cache', args: tsxOnSources, env: {} },
  { id: 'node-dist', label: 'after: node on dist', args: (service) => [serviceEntry(service)], env: {} },
];

interface Sample {
  readyMs: number;
  /** CPU of the service and its descendants from spawn to ready (those that ended included), in ms. */
  cpuMs: number;
  /** VmRSS of the service's own process, in MiB. */
  rssMiB: number;
  /** Sum of VmRSS over its descendants (tsx's esbuild service, the worker's Chromium), in MiB. */
  childrenRssMiB: number;
  children: number;
}

const out = (line: string) => process.stdout.write(`${line}\n`);

/** VmRSS of a process in MiB, or 0 when it has gone. */
function rssMiB(pid: number): number {
  try {
    const match = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match?.[1] ? Number(match[1]) / 1024 : 0;
  } catch {
    return 0;
  }
}

/** Clock ticks per second of /proc/<pid>/stat's times (USER_HZ: 100 on Linux). */
const TICKS_PER_SECOND = 100;

/**
 * The fields of /proc/<pid>/stat from the third (state) on, or null when the process has gone. The
 * command name (field 2) is in parentheses and may hold spaces: the rest follows the last ')'.
 */
function statFields(pid: number | string): string[] | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return null;
  }
}

/**
 * CPU of a process, its children that ended and were waited for included (utime, stime, cutime and
 * cstime: fields 14-17 of /proc/<pid>/stat), in ms; 0 when it has gone.
 */
function cpuMsOf(pid: number): number {
  const ticks = (statFields(pid) ?? []).slice(11, 15).reduce((sum, field) => sum + Number(field), 0);
  return (ticks * 1000) / TICKS_PER_SECOND;
}

/** Every live descendant of `root`, from the parent links in /proc/<pid>/stat. */
function descendants(root: number): number[] {
  const parentOf = new Map<number, number>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    // The parent pid is field 4; a process that exited while listing has none.
    const ppid = statFields(entry)?.[1];
    if (ppid !== undefined) parentOf.set(Number(entry), Number(ppid));
  }
  const found: number[] = [];
  let frontier = [root];
  while (frontier.length) {
    const next = [...parentOf].filter(([, ppid]) => frontier.includes(ppid)).map(([pid]) => pid);
    found.push(...next);
    frontier = next;
  }
  return found;
}

async function answers(url: string): Promise<boolean> {
  try {
    return (await fetch(url)).ok;
  } catch {
    return false;
  }
}

/** Starts one service in one variant, waits until it is ready and idle, measures it and stops it. */
async function measure(service: ServiceName, variant: Variant, env: Record<string, string>): Promise<Sample> {
  const port = await freePort();
  const started = performance.now();
  const child = spawn(process.execPath, variant.args(service), {
    cwd: REPO_ROOT,
    env: { ...process.env, ...env, ...variant.env, PORT: String(port), LOG_LEVEL: 'info' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  let workerReadyAt: number | null = null;
  child.stdout.on('data', (chunk: Buffer) => {
    output += chunk.toString('utf8');
    if (workerReadyAt === null && output.includes('"worker ready"')) workerReadyAt = performance.now();
  });
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const pid = child.pid;
  if (pid === undefined) throw new Error(`${service} (${variant.id}) did not start`);

  try {
    let readyAt: number | null = null;
    while (readyAt === null) {
      if (child.exitCode !== null) throw new Error(`${service} (${variant.id}) exited early:\n${output}`);
      if (performance.now() - started > READY_TIMEOUT_MS)
        throw new Error(`${service} (${variant.id}) not ready after ${READY_TIMEOUT_MS} ms:\n${output}`);
      // The API is ready when it answers /healthz; the worker when it logs that it takes jobs.
      if (service === 'api') readyAt = (await answers(`http://127.0.0.1:${port}/healthz`)) ? performance.now() : null;
      else readyAt = workerReadyAt;
      if (readyAt === null) await sleep(5);
    }
    const cpuMs = [pid, ...descendants(pid)].reduce((sum, p) => sum + cpuMsOf(p), 0);
    await sleep(IDLE_MS);
    const children = descendants(pid);
    return {
      readyMs: readyAt - started,
      cpuMs,
      rssMiB: rssMiB(pid),
      childrenRssMiB: children.reduce((sum, p) => sum + rssMiB(p), 0),
      children: children.length,
    };
  } finally {
    child.kill('SIGTERM');
    const forced = setTimeout(() => child.kill('SIGKILL'), 30_000);
    await exited;
    clearTimeout(forced);
  }
}

const ms = (n: number) => `${Math.round(n)} ms`;
const mib = (n: number) => `${Math.round(n)} MiB`;
/** `median (min–max) unit` of one measure over a variant's samples. */
function cell(taken: Sample[], pick: (sample: Sample) => number, unit: 'ms' | 'MiB'): string {
  const { median, min, max } = spread(taken.map(pick));
  return `${Math.round(median)} ${unit} (${Math.round(min)}–${Math.round(max)})`;
}
function childrenCell(taken: Sample[]): string {
  const count = spread(taken.map((s) => s.children)).median;
  if (count === 0) return 'none';
  return `${cell(taken, (s) => s.childrenRssMiB, 'MiB')}, ${count} process${count === 1 ? '' : 'es'}`;
}
const medianOf = (taken: Sample[], pick: (sample: Sample) => number) => spread(taken.map(pick)).median;

export async function run(): Promise<void> {
  const prefix = `testrun-bench-startup-${randomBytes(3).toString('hex')}`;
  const env = { REDIS_PREFIX: prefix };
  const samples = new Map<string, Sample[]>();
  const services: ServiceName[] = ['api', 'worker'];
  for (const service of services) {
    for (let round = 0; round < ROUNDS; round++) {
      const order = VARIANTS.map((_, i) => VARIANTS[(i + round) % VARIANTS.length]);
      for (const variant of order) {
        if (!variant) continue;
        const sample = await measure(service, variant, env);
        const key = `${service}/${variant.id}`;
        samples.set(key, [...(samples.get(key) ?? []), sample]);
        out(
          `${service.padEnd(6)} ${variant.id.padEnd(9)} ready ${ms(sample.readyMs).padStart(8)}  cpu ${ms(sample.cpuMs).padStart(8)}  rss ${mib(sample.rssMiB)}` +
            (sample.children ? `  + ${sample.children} children ${mib(sample.childrenRssMiB)}` : ''),
        );
      }
    }
  }

  const redis = new Redis(readCommonConfig().redisUrl);
  const keys = await redis.keys(`${prefix}*`);
  if (keys.length) await redis.del(...keys);
  redis.disconnect();

  const rows: string[] = [];
  const summary: string[] = [];
  for (const service of services) {
    const name = service === 'api' ? 'API' : 'Worker';
    for (const variant of VARIANTS) {
      const taken = samples.get(`${service}/${variant.id}`) ?? [];
      if (!taken.length) continue;
      const ready = cell(taken, (s) => s.readyMs, 'ms');
      const cpu = cell(taken, (s) => s.cpuMs, 'ms');
      const own = cell(taken, (s) => s.rssMiB, 'MiB');
      rows.push(`| ${name} | ${variant.label} | ${ready} | ${cpu} | ${own} | ${childrenCell(taken)} |`);
    }
    const after = samples.get(`${service}/node-dist`) ?? [];
    const cold = samples.get(`${service}/tsx-cold`) ?? [];
    const warm = samples.get(`${service}/tsx-warm`) ?? [];
    if (after.length && cold.length && warm.length) {
      const ready = (taken: Sample[]) => medianOf(taken, (s) => s.readyMs);
      const rss = (taken: Sample[]) => medianOf(taken, (s) => s.rssMiB);
      summary.push(
        `- ${name}: ready in ${ms(ready(after))} on dist against ${ms(ready(warm))} (warm) and ${ms(ready(cold))} ` +
          `(cold) under tsx; ${mib(rss(warm) - rss(after))} less resident memory than warm tsx ` +
          `(${mib(rss(after))} against ${mib(rss(warm))}).`,
      );
    }
  }

  writeSection(
    'startup',
    `## Start time and idle memory: tsx on sources before, node on dist now

\`pnpm bench startup\` (\`bench/startup.ts\`; \`BENCH_STARTUP_ROUNDS\`, default 5).

- ${machineLine()}.
- Postgres and Redis on 127.0.0.1; measured ${new Date().toISOString().slice(0, 10)} while other processes shared
  the machine: figures are indicative.
- ${ROUNDS} rounds per service; each round starts every variant once, in an order that rotates from round
  to round. Figures are median (min–max).
- **Before**: what the image ran until now, \`pnpm api\` = \`tsx apps/api/src/main.ts\` with every
  \`@testrun/*\` package resolved to its TypeScript sources, measured as one process
  (\`node --import tsx --conditions=@testrun/source apps/<service>/src/main.ts\`). A fresh container has an
  empty tsx transform cache (the cold row, \`TSX_DISABLE_CACHE=1\`); a restarted process on the same disk
  finds it warm. The image also kept pnpm's and tsx's own parent processes alive (\`pnpm\` → \`tsx\` →
  \`node\`), whose memory is not counted here.
- **After**: \`node apps/<service>/dist/main.js\`, what \`pnpm api\` / \`pnpm worker\` and the image's
  \`CMD ["node", "dist/main.js"]\` run now.
- **Start to ready**: from spawn to the API answering \`GET /healthz\` (polled every 5 ms), or to the
  worker's \`worker ready\` log line (its warm Chromium is launched and it takes jobs).
- **CPU to ready**: user and system time of the service's process and its descendants at that
  moment (\`/proc/<pid>/stat\`, children that ended and were waited for included; 10 ms ticks).
- **Idle RSS**: \`VmRSS\` from \`/proc/<pid>/status\` of the service's own node process, ${IDLE_MS / 1000} s after it was
  ready. Its child processes are **not** included there: the last column sums their \`VmRSS\` (a sum
  over processes counts shared pages more than once). They are the worker's Chromium (a browser
  process and its helpers) and, under tsx with an empty cache, esbuild's transform service.

| Service | How it starts | Start to ready | CPU to ready | Idle RSS (own process) | Child processes (summed RSS) |
|---|---|---|---|---|---|
${rows.join('\n')}

${summary.join('\n')}
`,
  );
  out('wrote the startup section of docs/BENCHMARKS.md');
}
