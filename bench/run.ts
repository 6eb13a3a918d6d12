/**
 * `pnpm bench [scenario]`: runs one benchmark scenario (without one: worker, api, memory and h2h in
 * turn), each of which rewrites its own section of docs/BENCHMARKS.md. `pnpm bench` builds first, so
 * the processes a scenario spawns run current code.
 */
const SCENARIOS: Record<string, () => Promise<{ run: () => Promise<void> }>> = {
  /** Dispatch latency, per-test service overhead, browser launches. */
  worker: () => import('./worker'),
  /** Start time and idle memory of the API and the worker, tsx on sources versus node on dist. */
  startup: () => import('./startup'),
  /** How long one workspace's first run waits behind another's backlog, FIFO versus fair. */
  fairness: () => import('./fairness'),
  /** The service against `playwright test` and the floor on the same tests. */
  h2h: () => import('./h2h'),
  /** A team's Playwright tests: the service against `playwright test --workers=K`, and deploying a 100-spec project. */
  playwright: () => import('./playwright'),
  /** The floor with the service's duties (egress proxy, on-failure trace) added: where the gap goes. */
  floor: () => import('./h2h').then((h2h) => ({ run: h2h.runFloorGap })),
  /** Read throughput against a bare Express app, and enqueue times of large suites and projects. */
  api: () => import('./api'),
  /** The worker's memory per concurrent browser context. */
  memory: () => import('./memory'),
  /** What each evidence policy costs (wall, CPU) and keeps (files, bytes), passing and failing. */
  evidence: () => import('./evidence'),
  /** Page times of the run and suite-run listings in a workspace of a million runs. */
  listings: () => import('./listings'),
  /** How long purging 100,000 expired runs takes, and POST /runs latency meanwhile. */
  retention: () => import('./retention'),
  /** Peak API memory while 40 one-byte and some larger range requests for a 100 MB trace run at once. */
  ranges: () => import('./artifact-ranges'),
  /** The GitHub Action's bundle: start to its first API request, and its size. */
  action: () => import('./action'),
  /** The detailed view of a 1,000-test suite: server render, wire size, time to interactive in Chromium. */
  view: () => import('./view-render'),
  /** What a test's history costs the view: its load for a 1,000-test suite's open tests, and the page. */
  'view-history': () => import('./view-history'),
  /** The visual changes of a suite run of 100 changed screenshots in Chromium: bytes before and after the lazy images, time to interactive. */
  'view-visual': () => import('./view-visual'),
  /** Installed size of the packed CLI and client, and the time of `testrun --version`. */
  install: () => import('./install'),
  /** Chromium in its own network namespace: launch, first page through the proxy, added memory. */
  netns: () => import('./browser-netns'),
  /** Chromium's headless shell against the full Chromium: CPU and wall of launches and of pages. */
  'headless-shell': () => import('./headless-shell'),
  /** From a cancel request to every child terminal, and to the worker having closed the context. */
  cancel: () => import('./cancel'),
  /** How long one workspace's webhook event takes while another's endpoints drip or hang. */
  'webhook-fairness': () => import('./webhook-fairness'),
  /** A victim's suite beside a hostile tenant's sandbox on the same worker, against beside an idle one. */
  isolation: () => import('./isolation'),
  /** What masking a run's secrets costs on the text it stores, against the mask it replaced. */
  mask: () => import('./mask'),
  /** Someone else's Playwright repository: `playwright test` against the service, test by test (docs/PARITY.md). */
  parity: () => import('./parity'),
  /** The service against `playwright test --workers=K` on a real repository's suite, round after round (docs/BENCHMARKS.md). */
  'real-h2h': () => import('./real-h2h'),
  /** What the worker's code cache of Playwright's modules saves each process of a sandbox. */
  'code-cache': () => import('./code-cache'),
  /** What a `toHaveScreenshot` costs the service against `playwright test`, and whether the same pages compare unchanged. */
  visual: () => import('./visual'),
};

/** What plain `pnpm bench` runs: every figure of the speed targets, in one go. */
const ALL = ['worker', 'api', 'memory', 'h2h'];

async function main(): Promise<void> {
  const names = process.argv[2] ? [process.argv[2]] : ALL;
  for (const name of names) {
    const load = SCENARIOS[name];
    if (!load) throw new Error(`unknown scenario "${name}"; one of: ${Object.keys(SCENARIOS).join(', ')}`);
    const began = performance.now();
    await (await load()).run();
    process.stdout.write(`bench ${name}: ${((performance.now() - began) / 1000).toFixed(0)} s\n`);
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(`bench failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(1);
  },
);
