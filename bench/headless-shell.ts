/**
 * `pnpm bench headless-shell`: what Chromium's headless shell (Debian's chromium-headless-shell, the
 * build Playwright runs headless Chromium on) costs against the full Chromium in its new headless
 * mode, which the worker ran before: CPU and wall of launches, and of pages in one browser (a context,
 * a page, five clicks and a screenshot each). Rewrites the `headless-shell` section of
 * docs/BENCHMARKS.md.
 *
 * Each variant runs in a child process in a control group of its own (h2h/cpu.ts, runTimed), so the
 * CPU of Chromium's helper processes, which outlive their parent's accounting, is counted whole. Rounds
 * alternate the order of the two variants, so drift on a shared machine spreads over both.
 */
import { existsSync } from 'node:fs';
import { runTimed } from './h2h/cpu';
import { HEADLESS_SHELL } from './h2h/service';
import { machineLine, spread, writeSection } from './report';

const ROUNDS = Number(process.env.BENCH_SHELL_ROUNDS ?? 4);
const FULL = '/usr/lib/chromium/chromium';
const SHELL = HEADLESS_SHELL;
const LAUNCHES = 6;
const PAGES = 12;

/** What the child runs: `launch` (LAUNCHES browsers, one page each) or `pages` (PAGES contexts in one browser). */
const CHILD = `
const { chromium } = require(${JSON.stringify(require.resolve('playwright'))});
const [exe, mode, launches, pages] = process.argv.slice(1);
const args = ${JSON.stringify(['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--no-first-run'])};
(async () => {
  if (mode === 'launch') {
    for (let i = 0; i < Number(launches); i++) {
      const b = await chromium.launch({ executablePath: exe, args });
      await (await b.newPage()).setContent('<p>x</p>');
      await b.close();
    }
    return;
  }
  const b = await chromium.launch({ executablePath: exe, args });
  for (let i = 0; i < Number(pages); i++) {
    const c = await b.newContext();
    const p = await c.newPage();
    await p.setContent('<h1>page</h1><p>' + 'text '.repeat(2000) + '</p><button onclick="this.textContent=Math.random()">go</button>');
    for (let j = 0; j < 5; j++) await p.click('button');
    await p.screenshot();
    await c.close();
  }
  await b.close();
})();
`;

type Sample = Pick<Awaited<ReturnType<typeof runTimed>>, 'cpuMs' | 'wallMs'>;

/** Runs the child for one variant to its end: its whole tree's CPU (a control group of its own) and its wall. */
async function measure(executable: string, mode: 'launch' | 'pages'): Promise<Sample> {
  const args = ['-e', CHILD, executable, mode, String(LAUNCHES), String(PAGES)];
  const run = await runTimed(`shell-${mode}`, process.execPath, args, process.cwd());
  if (run.code !== 0)
    throw new Error(`the ${mode} child for ${executable} exited with ${String(run.code)}:\n${run.output}`);
  return { cpuMs: run.cpuMs, wallMs: run.wallMs };
}

const fmt = (s: { median: number; min: number; max: number }, digits = 2) =>
  `${s.median.toFixed(digits)} (${s.min.toFixed(digits)}–${s.max.toFixed(digits)})`;

export async function run(): Promise<void> {
  for (const need of [FULL, SHELL])
    if (!existsSync(need)) throw new Error(`${need} is missing (bash scripts/setup.sh installs the headless shell)`);
  const rows: string[] = [];
  for (const mode of ['launch', 'pages'] as const) {
    const full: Sample[] = [];
    const shell: Sample[] = [];
    for (let round = 0; round < ROUNDS; round += 1) {
      const order = round % 2 === 0 ? [FULL, SHELL] : [SHELL, FULL];
      for (const exe of order) (exe === FULL ? full : shell).push(await measure(exe, mode));
      process.stdout.write(
        `headless-shell ${mode} round ${round + 1}: full ${JSON.stringify(full.at(-1))} shell ${JSON.stringify(shell.at(-1))}\n`,
      );
    }
    const what = mode === 'launch' ? `${LAUNCHES} launches, a page each` : `${PAGES} contexts in one browser`;
    const cpu = shell.map((s, i) => s.cpuMs / (full[i]?.cpuMs ?? Number.NaN));
    const wall = shell.map((s, i) => s.wallMs / (full[i]?.wallMs ?? Number.NaN));
    rows.push(
      `| ${what} | ${fmt(spread(full.map((s) => s.cpuMs / 1000)))} s | ${fmt(spread(shell.map((s) => s.cpuMs / 1000)))} s | ${fmt(spread(cpu))} | ${fmt(spread(wall))} |`,
    );
  }
  writeSection(
    'headless-shell',
    [
      '### Headless shell',
      '',
      `\`pnpm bench headless-shell\` (bench/headless-shell.ts): ${ROUNDS} alternating rounds; CPU of the whole process tree`,
      '(a control group per variant), median (min–max). The shell is what a headless launch runs',
      '(docs/WORKER.md, `CHROMIUM_HEADLESS_SHELL_PATH`; docs/PLAYWRIGHT.md, "What of your config applies").',
      '',
      "The other scenarios run `playwright test`'s side on the same browser as the service: the headless shell",
      'when the machine has it (bench/h2h/service.ts, `HEADLESS_CHROMIUM`). Their figures measured before 2026-12-07',
      'evening ran both sides on the full Chromium.',
      '',
      '| work | CPU, full Chromium | CPU, headless shell | CPU ratio shell/full | wall ratio shell/full |',
      '|---|---|---|---|---|',
      ...rows,
      '',
      `Machine: ${machineLine()}.`,
    ].join('\n'),
  );
}
