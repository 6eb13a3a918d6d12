/**
 * `pnpm bench isolation`: what a hostile tenant's sandbox costs a victim's suite on the same worker.
 * The victim is the head-to-head's shop suite (bench/playwright/project.ts); beside it, on a worker
 * with WORKER_CONCURRENCY=K, runs a one-test suite of another project that either attacks (spins
 * every core, forks to its process limit, holds memory, fills its disk, races the worker's reads with
 * a folder swapped for a symlink under 300 attachments) or sleeps for as long (the control: the same
 * slot taken, no load). Rounds alternate which goes first; the ratio is the victim's wall time beside
 * the attacker over beside the idle neighbour. Rewrites the `isolation` section of docs/BENCHMARKS.md.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { CHROMIUM_ARGS } from '@testrun/worker';
import { startFixtureSite } from '../test/fixtures/site';
import { machineLine, spread, writeSection } from './report';
import { writeAttackerProject, ATTACK_HOLD_MS } from './isolation-project';
import { writeShopSuite } from './playwright/project';
import { startPlaywrightService, type PlaywrightService } from './playwright/service';

const N = Number(process.env.BENCH_ISO_TESTS ?? 20);
const ROUNDS = Number(process.env.BENCH_ISO_ROUNDS ?? 3);
const K = Number(process.env.BENCH_ISO_K ?? 4);

const out = (line: string) => process.stdout.write(`${line}\n`);

type Neighbour = 'attack' | 'idle';

/** The victim's suite with `neighbour` started first (its sandbox up): the victim's wall time and the neighbour's verdict. */
async function trial(service: PlaywrightService, neighbour: Neighbour): Promise<{ wallMs: number; status: string }> {
  const started = await service.startSuite('bench-attacker', neighbour);
  await sleep(3_000);
  const victim = await service.runSuite('bench-pw', 'all', N);
  return { wallMs: victim.wallMs, status: await started.ended };
}

async function measure(work: string, baseUrl: string) {
  writeShopSuite(path.join(work, 'victim'), { n: N, baseUrl, chromiumArgs: CHROMIUM_ARGS });
  writeAttackerProject(path.join(work, 'attacker'), baseUrl);
  const started = await startPlaywrightService(path.join(work, 'victim', 'testrun.yaml'));
  if ('pending' in started) throw new Error(`the service cannot run the victim's project: ${started.pending}`);
  const { service } = started;
  const walls: Record<Neighbour, number[]> = { attack: [], idle: [] };
  const statuses: Record<Neighbour, string[]> = { attack: [], idle: [] };
  const load = [loadavg()[0] ?? 0, 0];
  try {
    await service.deploy(path.join(work, 'attacker', 'testrun.yaml'));
    await service.useWorker(K, { projectSlug: 'bench-pw', suiteSlug: 'all' });
    for (let round = 0; round < ROUNDS; round++) {
      const order: Neighbour[] = round % 2 === 0 ? ['idle', 'attack'] : ['attack', 'idle'];
      for (const neighbour of order) {
        const result = await trial(service, neighbour);
        walls[neighbour].push(result.wallMs);
        statuses[neighbour].push(result.status);
        out(
          `round ${round + 1} ${neighbour}: victim ${(result.wallMs / 1000).toFixed(1)} s, neighbour ${result.status}`,
        );
      }
    }
  } finally {
    await service.close();
  }
  load[1] = loadavg()[0] ?? 0;
  return { walls, statuses, load };
}

function report(results: Awaited<ReturnType<typeof measure>>): string {
  const fmt = (values: number[]) => {
    const { median, min, max } = spread(values.map((v) => v / 1000));
    return `${median.toFixed(1)} (${min.toFixed(1)}–${max.toFixed(1)})`;
  };
  const ratios = results.walls.attack.map((wall, i) => wall / (results.walls.idle[i] ?? wall));
  const ratio = spread(ratios);
  return `## Isolation: a victim's suite beside a hostile sandbox

\`pnpm bench isolation\` (\`bench/isolation.ts\`, \`bench/isolation-project.ts\`; \`BENCH_ISO_TESTS\`, \`BENCH_ISO_ROUNDS\`,
\`BENCH_ISO_K\` change the run). These figures: \`BENCH_ISO_TESTS=${N} BENCH_ISO_ROUNDS=${ROUNDS} BENCH_ISO_K=${K} pnpm bench isolation\`.

- ${machineLine()}; measured ${new Date().toISOString().slice(0, 10)}, load average ${results.load[0]?.toFixed(1)} at the
  start and ${results.load[1]?.toFixed(1)} at the end.
- The victim: the head-to-head's ${N}-test shop suite (trace, video, screenshots off), on one worker with
  \`WORKER_CONCURRENCY=${K}\`, POSTed 3 s after its neighbour's one-test suite, its wall time from its POST to its
  verdict. The neighbour holds one slot for ${ATTACK_HOLD_MS / 1000} s in a sandbox of its own: **idle** sleeps;
  **attack** spins three processes, forks until its process limit refuses, holds 600 MiB, fills its scratch
  quota, and swaps a folder for a symlink to the host under 300 attachments the worker stores.
- ${ROUNDS} rounds, alternating which neighbour goes first. Median (min–max).

| Neighbour | Victim's wall (s) | Neighbour's verdicts |
|---|---|---|
| idle | ${fmt(results.walls.idle)} | ${results.statuses.idle.join(', ')} |
| attack | ${fmt(results.walls.attack)} | ${results.statuses.attack.join(', ')} |

Victim beside the attacker / beside the idle neighbour, paired by round: **${ratio.median.toFixed(2)}x**
(${ratio.min.toFixed(2)}–${ratio.max.toFixed(2)}).

What it means: the sandboxes' CPU groups weigh the same (docs/SANDBOX.md, "Limits"), so a sandbox that spins
takes at most its equal share of the cores while the victim's is busy; its process, memory and disk limits
stop it there, the worker's reads refuse every file it swapped (none of the host's is stored), and the
victim's tests pass beside it. What the victim loses is that share of the cores: the price of sharing a
worker with a tenant who uses its share, not a breach of a wall. Give tenants who must not share cores workers of their own.`;
}

/** Entry point of `pnpm bench isolation`. */
export async function run(): Promise<void> {
  const site = await startFixtureSite();
  const work = mkdtempSync(path.join(tmpdir(), 'testrun-bench-iso-'));
  try {
    writeSection('isolation', report(await measure(work, site.url)));
    out('wrote the isolation section of docs/BENCHMARKS.md');
  } finally {
    await site.close();
    rmSync(work, { recursive: true, force: true });
  }
}
