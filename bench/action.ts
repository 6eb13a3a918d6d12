/**
 * `pnpm bench action`: how soon the GitHub Action's bundle makes its first API request after the
 * runner starts it (`node packages/action/dist/index.js`, as a `node24` action runs), and how big
 * the bundle is. A loopback server stands in for the API: it notes when the first request arrives
 * and refuses it (401), so the step ends there. Rewrites the `action` section of docs/BENCHMARKS.md.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { gzipSync } from 'node:zlib';
import { REPO_ROOT } from '../test/support/processes';
import { machineLine, spread, writeSection } from './report';

const RUNS = Number(process.env.BENCH_ACTION_RUNS ?? 10);
const BUNDLE = path.join(REPO_ROOT, 'packages/action/dist/index.js');

/** Milliseconds from spawning the bundle to its first request reaching `server`. */
async function firstRequestMs(apiUrl: string, arrivals: number[]): Promise<number> {
  const work = mkdtempSync(path.join(tmpdir(), 'testrun-bench-action-'));
  const files = Object.fromEntries(
    ['GITHUB_OUTPUT', 'GITHUB_STEP_SUMMARY', 'GITHUB_STATE'].map((name) => {
      const file = path.join(work, name);
      writeFileSync(file, '');
      return [name, file];
    }),
  );
  const before = arrivals.length;
  const started = performance.now();
  const child = spawn(process.execPath, [BUNDLE], {
    cwd: work,
    stdio: 'ignore',
    env: {
      PATH: process.env.PATH,
      GITHUB_ACTIONS: 'true',
      ...files,
      'INPUT_API-URL': apiUrl,
      'INPUT_API-KEY': 'trk_bench-key-0000000000',
      INPUT_PROJECT: 'shop',
      INPUT_SUITE: 'smoke',
      INPUT_TIMEOUT: '15m',
      'INPUT_POLL-INTERVAL': '3s',
      'INPUT_FAIL-ON': 'not-passed',
    },
  });
  await new Promise((resolve) => child.once('close', resolve));
  const arrival = arrivals[before];
  if (arrival === undefined) throw new Error('the action made no request');
  return arrival - started;
}

export async function run(): Promise<void> {
  const arrivals: number[] = [];
  const server = createServer((req, res) => {
    arrivals.push(performance.now());
    req.resume();
    res.writeHead(401, { 'content-type': 'application/problem+json' });
    res.end(
      JSON.stringify({
        type: 'about:blank',
        title: 'Unauthorized',
        status: 401,
        code: 'unauthorized',
        detail: 'bench',
      }),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no TCP address');
  const samples: number[] = [];
  try {
    for (let i = 0; i < RUNS; i++) samples.push(await firstRequestMs(`http://127.0.0.1:${address.port}`, arrivals));
  } finally {
    server.close();
  }
  const s = spread(samples);
  const bytes = statSync(BUNDLE).size;
  const gzipped = gzipSync(readFileSync(BUNDLE)).length;
  const kb = (n: number) => `${(n / 1024).toFixed(0)} KB`;
  process.stdout.write(
    `action: first request ${s.median.toFixed(0)} ms (${s.min.toFixed(0)}–${s.max.toFixed(0)}), bundle ${kb(bytes)}\n`,
  );
  writeSection(
    'action',
    `## GitHub Action: start to first API request

\`pnpm bench action\` (\`bench/action.ts\`; \`BENCH_ACTION_RUNS\`, default 10).

- ${machineLine()}.
- Measured ${new Date().toISOString().slice(0, 10)} while other processes shared the machine: figures are indicative.
- ${RUNS} runs of \`node packages/action/dist/index.js\` with the inputs as \`INPUT_*\` variables and the
  runner's files, as GitHub starts a \`node24\` action: nothing is installed or built first. The time runs
  from spawning the process to its first request (the enqueue) reaching a loopback server that stands in
  for the API. Figures are median (min–max).

| Figure | Value |
|---|---|
| Start to first API request (target ≤ 2 s) | ${s.median.toFixed(0)} ms (${s.min.toFixed(0)}–${s.max.toFixed(0)}) |
| Bundle \`packages/action/dist/index.js\` | ${kb(bytes)} (${kb(gzipped)} gzipped), the whole action: no \`node_modules\` |
`,
  );
}
