/**
 * `pnpm bench netns`: what running Chromium in a network namespace of its own costs (see
 * apps/worker/src/network/browser-netns.ts): the launch, the first page through the egress proxy
 * (TCP to the proxy before, the namespace's relay to its Unix socket now), and the memory of the
 * processes the namespace adds (bubblewrap and the relay). Rewrites the `netns` section of
 * docs/BENCHMARKS.md.
 *
 * Each round launches both variants once, in an order that alternates from round to round, so drift
 * on a shared machine spreads over both instead of favouring one.
 */
import { once } from 'node:events';
import { readdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { PassThrough } from 'node:stream';
import { performance } from 'node:perf_hooks';
import { createLogger } from '@testrun/core/logger';
import { parseTargetRules } from '@testrun/core/target-policy';
import { BrowserPool } from '../apps/worker/src/browser/browser-pool';
import { startEgress, type BrowserNetworkIsolation } from '../apps/worker/src/network/worker-egress';
import { machineLine, spread, writeSection } from './report';
import { testTargetAllow } from '../test/support/processes';

const ROUNDS = Number(process.env.BENCH_NETNS_ROUNDS ?? 10);

interface Sample {
  launchMs: number;
  firstPageMs: number;
  /** PSS of the bwrap and relay processes between this process and Chromium, in MiB. */
  addedPssMiB: number;
}

const out = (line: string) => process.stdout.write(`${line}\n`);

/**
 * Summed PSS (MiB) of the processes in this process's tree whose command is one of `names`: their
 * own memory plus their share of pages they map with others (node's binary is shared with the worker).
 */
function pssOf(names: readonly string[]): number {
  const parentOf = new Map<number, number>();
  const pss = new Map<number, number>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      parentOf.set(Number(entry), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
      if (!names.includes(name)) continue;
      const kb = /^Pss:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${entry}/smaps_rollup`, 'utf8'))?.[1];
      if (kb) pss.set(Number(entry), Number(kb) / 1024);
    } catch {
      // exited while listing
    }
  }
  const inTree = (pid: number): boolean => {
    for (let at = parentOf.get(pid); at !== undefined && at > 1; at = parentOf.get(at))
      if (at === process.pid) return true;
    return false;
  };
  return [...pss].filter(([pid]) => inTree(pid)).reduce((sum, [, mib]) => sum + mib, 0);
}

async function measure(isolation: BrowserNetworkIsolation, pageUrl: string): Promise<Sample> {
  const logger = createLogger({ service: 'bench', stream: new PassThrough() });
  const policy = {
    allow: parseTargetRules(testTargetAllow(), 'TARGET_ALLOW'),
    deny: [],
    protectedEndpoints: [],
    protectedPorts: [],
    protectedHosts: [],
    machineAddresses: [],
  };
  const egress = await startEgress(policy, logger, undefined, isolation);
  const pool = new BrowserPool({ extraArgs: egress.launchArgs, wrapExecutable: egress.wrapExecutable });
  try {
    const launched = performance.now();
    await pool.getBrowser();
    const launchMs = performance.now() - launched;
    const addedPssMiB = isolation === 'on' ? pssOf(['bwrap', 'node']) : 0;
    const run = egress.proxy.openRun('bench.1');
    const opened = performance.now();
    const context = await pool.newContext({ proxy: run.proxy });
    await (await context.newPage()).goto(pageUrl);
    const firstPageMs = performance.now() - opened;
    await context.close();
    run.close();
    return { launchMs, firstPageMs, addedPssMiB };
  } finally {
    await pool.close();
    await egress.close();
  }
}

const fmt = (values: number[], digits = 0) => {
  const { median, min, max } = spread(values);
  return `${median.toFixed(digits)} (${min.toFixed(digits)}–${max.toFixed(digits)})`;
};

export async function run(): Promise<void> {
  const site = createServer((_req, res) =>
    res.writeHead(200, { 'content-type': 'text/html' }).end('<title>ok</title>'),
  );
  site.listen(0, '127.0.0.1');
  await once(site, 'listening');
  const pageUrl = `http://127.0.0.1:${(site.address() as AddressInfo).port}/`;
  const samples: Record<BrowserNetworkIsolation, Sample[]> = { off: [], on: [] };
  try {
    await measure('on', pageUrl); // warm the disk cache for both
    for (let round = 0; round < ROUNDS; round += 1) {
      const order: BrowserNetworkIsolation[] = round % 2 === 0 ? ['off', 'on'] : ['on', 'off'];
      for (const isolation of order) samples[isolation].push(await measure(isolation, pageUrl));
      out(`round ${round + 1}/${ROUNDS} done`);
    }
  } finally {
    site.close();
  }
  const median = (isolation: BrowserNetworkIsolation, key: keyof Sample) =>
    spread(samples[isolation].map((s) => s[key])).median;
  const rows = (['off', 'on'] as const).map((isolation) => {
    const s = samples[isolation];
    const label =
      isolation === 'off' ? 'before: Chromium in the worker network' : 'now: its own namespace (bwrap + relay)';
    return `| ${label} | ${fmt(s.map((x) => x.launchMs))} | ${fmt(s.map((x) => x.firstPageMs))} | ${
      isolation === 'on'
        ? fmt(
            s.map((x) => x.addedPssMiB),
            1,
          )
        : '0'
    } |`;
  });
  writeSection(
    'netns',
    `## Chromium in its own network namespace: launch and first page

Machine: ${machineLine()}. ${ROUNDS} rounds, before and now alternating. Median (min–max), ms;
memory: PSS of bubblewrap and the relay (node's own pages are shared with the worker).

| Variant | Launch | First context + page through the proxy | Added memory (MiB) |
|---|---|---|---|
${rows.join('\n')}

Launch now/before: ×${(median('on', 'launchMs') / median('off', 'launchMs')).toFixed(2)}; first page
now/before: ×${(median('on', 'firstPageMs') / median('off', 'firstPageMs')).toFixed(2)}. The browser is launched
once per worker process and shared by every run, so the launch cost is paid at start.

Reproduce: \`pnpm bench netns\` (\`BENCH_NETNS_ROUNDS\`, default 10).`,
  );
}
