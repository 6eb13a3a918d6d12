/**
 * `pnpm bench memory`: the worker's memory per concurrent browser context; rewrites the `memory`
 * section of docs/BENCHMARKS.md. For K = 1, 2, 4, 8 a worker with K slots runs a suite of K tests
 * that each hold their page open for a few seconds (so K contexts live at once), at the service's
 * default evidence policy, while the proportional set size (PSS) of the worker process and all its
 * children (Chromium's processes, ffmpeg when a video is recorded) is sampled.
 */
import { readdirSync, readFileSync } from 'node:fs';
import type { ProjectFile } from '@testrun/contracts';
import { startFormSite } from './h2h/site';
import { startBenchService } from './h2h/service';
import { machineLine, spread, writeSection } from './report';

const KS = (process.env.BENCH_MEMORY_K ?? '1,2,4,8').split(',').map(Number);
const ROUNDS = Number(process.env.BENCH_MEMORY_ROUNDS ?? 3);
const HOLD_MS = 4_000;
const SAMPLE_MS = 100;

const out = (line: string) => process.stdout.write(`${line}\n`);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** PSS in kB of `root` and every process below it, from /proc/<pid>/smaps_rollup. */
function treePssKb(root: number): number {
  const parents = new Map<number, number>();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      parents.set(Number(name), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
    } catch {
      // Ended while listed.
    }
  }
  const inTree = (pid: number): boolean => {
    for (let p: number | undefined = pid, depth = 0; p !== undefined && p > 1 && depth < 64; depth++) {
      if (p === root) return true;
      p = parents.get(p);
    }
    return false;
  };
  let kb = 0;
  for (const pid of parents.keys()) {
    if (!inTree(pid)) continue;
    try {
      kb += Number(/^Pss:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8'))?.[1] ?? 0);
    } catch {
      // Ended while read.
    }
  }
  return kb;
}

function holdProject(baseUrl: string, count: number): ProjectFile {
  return {
    slug: 'memory',
    name: 'Memory',
    baseUrl,
    suites: [
      {
        slug: 'hold',
        name: 'Hold',
        tests: Array.from({ length: count }, (_, i) => ({
          key: `hold-${i}`,
          name: `Hold ${i}`,
          steps: [
            { action: 'goto' as const, url: `/signup?n=${i}` },
            { action: 'fill' as const, selector: '#name', value: `User ${i}` },
            { action: 'click' as const, selector: '#submit' },
            { action: 'expectText' as const, selector: '#result', text: `Thanks, User ${i}` },
            { action: 'wait' as const, ms: HOLD_MS },
          ],
        })),
      },
    ],
  };
}

export async function run(): Promise<void> {
  const maxK = Math.max(...KS);
  const site = await startFormSite();
  const bench = await startBenchService('memory', holdProject(site.url, maxK));
  const peaks = new Map<number, number[]>();
  const idle = new Map<number, number[]>();
  for (const k of KS) {
    const worker = bench.spawnWorker(k);
    const pid = worker.child.pid ?? 0;
    // Warm: the browser is launched by the first run; memory settles after it.
    await bench.suiteTerminal(await bench.post({ projectSlug: 'memory', suiteSlug: 'hold' }));
    for (let round = 0; round < ROUNDS; round++) {
      await sleep(1_000);
      const before = treePssKb(pid);
      // K tests of the suite at once: the suite has maxK tests, so run K of them as single-test runs.
      const tests = await bench.db.test.findMany({
        where: { suite: { slug: 'hold' } },
        select: { id: true },
        orderBy: { position: 'asc' },
        take: k,
      });
      const ids = await Promise.all(tests.map((t) => bench.post({ testId: t.id })));
      let peak = before;
      const runsDone = async () => {
        const rows = await bench.db.run.findMany({ where: { id: { in: ids } }, select: { status: true } });
        return rows.every((r) => r.status !== 'queued' && r.status !== 'running');
      };
      while (!(await runsDone())) {
        peak = Math.max(peak, treePssKb(pid));
        await sleep(SAMPLE_MS);
      }
      const passed = await bench.db.run.count({ where: { id: { in: ids }, status: 'passed' } });
      if (passed !== k) throw new Error(`K=${k}: ${passed} of ${k} runs passed`);
      peaks.set(k, [...(peaks.get(k) ?? []), peak / 1024]);
      idle.set(k, [...(idle.get(k) ?? []), before / 1024]);
      out(`K=${k} round ${round + 1}: idle ${(before / 1024).toFixed(0)} MB, peak ${(peak / 1024).toFixed(0)} MB`);
    }
    worker.child.kill('SIGTERM');
    await worker.exited;
  }
  await bench.close();
  await site.close();

  const base = spread(peaks.get(1) ?? [NaN]).median;
  const rows = KS.map((k) => {
    const peak = spread(peaks.get(k) ?? []);
    const perContext = k > 1 ? ((peak.median - base) / (k - 1)).toFixed(0) : '–';
    return `| ${k} | ${spread(idle.get(k) ?? []).median.toFixed(0)} | ${peak.median.toFixed(0)} (${peak.min.toFixed(0)}–${peak.max.toFixed(0)}) | ${perContext} |`;
  });
  writeSection(
    'memory',
    `## Worker memory per concurrent context

\`pnpm bench memory\` (\`bench/memory.ts\`; \`BENCH_MEMORY_K\`, \`BENCH_MEMORY_ROUNDS\`).

- ${machineLine()}; measured ${new Date().toISOString().slice(0, 10)} on a machine other processes shared.
- A worker with K slots (the built worker process, its Chromium and any ffmpeg) runs K single-test runs at
  once, each filling and submitting the sign-up form of \`bench/h2h/site.ts\` and then holding its page for
  ${HOLD_MS / 1000} s, at the default evidence policy. PSS (proportional set size: shared pages divided among
  the processes sharing them) of the whole process tree is sampled every ${SAMPLE_MS} ms; ${ROUNDS} rounds per K.
- Per additional context: (peak at K − peak at K=1) / (K − 1). Target: ≤ 60 MB.

| K | Idle before the round (MB) | Peak (MB), median (min–max) | Per additional context (MB) |
|---|---|---|---|
${rows.join('\n')}
`,
  );
  out('wrote the memory section of docs/BENCHMARKS.md');
}
