/**
 * `pnpm bench evidence`: what each evidence policy costs and keeps; rewrites the `evidence` section
 * of docs/BENCHMARKS.md. The built API and a worker (K = 2) run the sign-up suite of the head-to-head
 * (all passing) and a failing twin of it under each policy, alternating the order between rounds;
 * for each: wall time of the suite, CPU per test of the service's processes, and what was stored.
 */
import type { EvidencePolicy, ProjectFile } from '@testrun/contracts';
import { CpuGroup, treeCpuMs } from './h2h/cpu';
import { startBenchService } from './h2h/service';
import { projectFile } from './h2h/suite';
import { startFormSite } from './h2h/site';
import { machineLine, spread, writeSection } from './report';

const N = Number(process.env.BENCH_EVIDENCE_TESTS ?? 20);
const ROUNDS = Number(process.env.BENCH_EVIDENCE_ROUNDS ?? 2);
const K = 2;

const POLICIES: Record<string, EvidencePolicy> = {
  'all off': { trace: 'off', video: 'off', screenshots: 'off' },
  default: { trace: 'on-failure', video: 'off', screenshots: 'on-failure' },
  'trace on': { trace: 'on', video: 'off', screenshots: 'off' },
  'video on': { trace: 'off', video: 'on', screenshots: 'off' },
  'screenshots on': { trace: 'off', video: 'off', screenshots: 'on' },
  'all on': { trace: 'on', video: 'on', screenshots: 'on' },
};
/** Policies also measured on the failing suite: what a person gets to see why. */
const FAILING = ['default', 'all on'];

const out = (line: string) => process.stdout.write(`${line}\n`);

/** The sign-up suite plus a twin whose last check expects text the page never shows (1 s step timeout). */
function benchProject(baseUrl: string): ProjectFile {
  const file = projectFile(N, baseUrl);
  const passing = file.suites[0];
  if (!passing) throw new Error('the head-to-head project has no suite');
  const failing = {
    slug: 'signup-fail',
    name: 'Sign-up form, failing',
    tests: passing.tests.map((t) => ({
      ...t,
      key: `${t.key}-fail`,
      steps: t.steps.map((s) => (s.action === 'expectText' ? { ...s, text: 'Never shown', timeoutMs: 1_000 } : s)),
    })),
  };
  return { ...file, suites: [passing, failing] };
}

interface Trial {
  wallMs: number;
  cpuMs: number;
  bytes: number;
  files: number;
}

export async function run(): Promise<void> {
  const site = await startFormSite();
  const bench = await startBenchService('evidence', benchProject(site.url));
  const group = CpuGroup.create(`testrun-evidence-${process.pid}`);
  const worker = bench.spawnWorker(K);
  const pids = [bench.api.child.pid ?? 0, worker.child.pid ?? 0];
  for (const pid of pids) group?.add(pid);
  const cpu = () => group?.usageMs() ?? treeCpuMs(pids);
  await bench.suiteTerminal(await bench.post({ projectSlug: 'h2h', suiteSlug: 'signup' }));

  const cases = [
    ...Object.keys(POLICIES).map((name) => ({ name, suite: 'signup', expect: 'passed' })),
    ...FAILING.map((name) => ({ name, suite: 'signup-fail', expect: 'failed' })),
  ];
  const results = new Map<string, Trial[]>();
  for (let round = 0; round < ROUNDS; round++) {
    const order = round % 2 === 0 ? cases : [...cases].reverse();
    for (const c of order) {
      const pgBefore = await bench.backendPids();
      const cpuBefore = cpu() + treeCpuMs([], pgBefore);
      const sent = Date.now();
      const id = await bench.post({ projectSlug: 'h2h', suiteSlug: c.suite, evidence: POLICIES[c.name] });
      const row = await bench.suiteTerminal(id);
      const pgAfter = await bench.backendPids();
      const cpuMs = cpu() + treeCpuMs([], [...new Set([...pgBefore, ...pgAfter])]) - cpuBefore;
      if (row.status !== c.expect) throw new Error(`${c.name} on ${c.suite}: the suite run ended ${row.status}`);
      const stored = await bench.db.artifact.aggregate({
        where: { run: { suiteRunId: id } },
        _sum: { sizeBytes: true },
        _count: true,
      });
      const key = `${c.suite}:${c.name}`;
      const trial = {
        wallMs: row.finishedAt.getTime() - sent,
        cpuMs,
        bytes: stored._sum.sizeBytes ?? 0,
        files: stored._count,
      };
      results.set(key, [...(results.get(key) ?? []), trial]);
      out(`${key}: ${(trial.wallMs / 1000).toFixed(2)} s, ${(cpuMs / N).toFixed(0)} CPU-ms/test, ${trial.files} files`);
    }
  }
  worker.child.kill('SIGTERM');
  await worker.exited;
  await bench.close();
  await group?.remove();
  await site.close();

  const rows = cases.map((c) => {
    const trials = results.get(`${c.suite}:${c.name}`) ?? [];
    const wall = spread(trials.map((t) => t.wallMs / 1000));
    const cpuPerTest = spread(trials.map((t) => t.cpuMs / N));
    const kbPerRun = spread(trials.map((t) => t.bytes / 1024 / N));
    const filesPerRun = spread(trials.map((t) => t.files / N));
    const policy = POLICIES[c.name];
    const modes = policy ? `${policy.trace} / ${policy.video} / ${policy.screenshots}` : '';
    return `| ${c.suite === 'signup' ? 'passing' : 'failing'} | ${c.name} (${modes}) | ${wall.median.toFixed(1)} (${wall.min.toFixed(1)}–${wall.max.toFixed(1)}) | ${cpuPerTest.median.toFixed(0)} | ${filesPerRun.median.toFixed(1)} | ${kbPerRun.median.toFixed(0)} |`;
  });
  writeSection(
    'evidence',
    `## Evidence policy: what each choice costs and keeps

\`pnpm bench evidence\` (\`bench/evidence.ts\`; \`BENCH_EVIDENCE_TESTS\`, \`BENCH_EVIDENCE_ROUNDS\`).

- ${machineLine()}; measured ${new Date().toISOString().slice(0, 10)} on a machine other processes shared.
- The built API and one worker (K = ${K}, browser warm) run the ${N}-test sign-up suite of the head-to-head
  (every test passes) and a failing twin (the last check expects text the page never shows, 1 s step
  timeout) under each policy (trace / video / screenshots), ${ROUNDS} rounds in alternating order.
  CPU: the API, the worker, its Chromium and ffmpeg, and the Postgres backends of the bench database.

| Suite | Policy | Suite wall (s), median (min–max) | CPU per test (ms) | Files kept per run | KB kept per run |
|---|---|---|---|---|---|
${rows.join('\n')}
`,
  );
  out('wrote the evidence section of docs/BENCHMARKS.md');
}
