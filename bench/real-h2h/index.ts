/**
 * `pnpm bench real-h2h --repo DIR --config PATH --base-url URL --file testrun.yaml [--suite SLUG]
 * [--env NAME=VALUE]… [--worker-env NAME=VALUE]… --workers K [--rounds N] [--label NAME]
 * [--results FILE]` (or `--report FILE`: print the report of kept rounds again): the service against `playwright test --workers=K` on a real repository's suite,
 * round after round, on the same build of the app and the same Chromium.
 *
 * The options the parity harness takes mean what they mean there (bench/parity/index.ts,
 * docs/PARITY.md); the project file goes at the repository's root for the deploy only. Each round
 * runs both sides, their order alternating (odd rounds `playwright test` first, even rounds the
 * service first):
 *
 * - `playwright test --workers=K` in DIR, its config as it is (its evidence, its retries), the
 *   machine's Chromium: wall from spawn to exit, CPU of its process tree (bench/parity/playwright-side.ts);
 * - the service: one suite run on a warm private stack with K worker slots, sandboxed, the network
 *   policy on, the default evidence: wall from the POST to the suite run's end, CPU of the API,
 *   worker and sandboxes plus the bench database's Postgres backends (service.ts).
 *
 * It prints each round, then the ratios (service / playwright test) with their spread and each test's
 * median duration on both sides (report.ts), and keeps every round in FILE (JSON) as it goes. It
 * writes no docs: docs/BENCHMARKS.md "Head to head on real suites" quotes what it printed.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { machineLine } from '../report';
import { gitStatus, parseArgs, placeProjectFile, readProject, stackSuite } from '../parity';
import { runPlaywrightSide } from '../parity/playwright-side';
import { formatReport, type Results, type Side } from './report';
import { startWarmService, testKey, type Round } from './service';

const OWN_OPTIONS = ['workers', 'rounds', 'label', 'results', 'evidence'] as const;

/** This harness's own options, and the rest for the parity harness's parser. */
function splitArgs(argv: readonly string[]): { own: Record<string, string>; rest: string[] } {
  const own: Record<string, string> = {};
  const rest: string[] = [];
  for (let i = 0; i < argv.length; i += 2) {
    const [name, value] = [argv[i] ?? '', argv[i + 1] ?? ''];
    if ((OWN_OPTIONS as readonly string[]).includes(name.slice(2))) own[name.slice(2)] = value;
    else rest.push(name, value);
  }
  return { own, rest };
}

const wholeNumber = (value: string | undefined, fallback: number, name: string): number => {
  const n = Number(value ?? fallback);
  if (!Number.isInteger(n) || n < 1) throw new Error(`--${name} takes a whole number from 1`);
  return n;
};

/** `--evidence trace=off,screenshots=off`: the service side's request `evidence` (default: none, the service's defaults). */
function evidenceOf(value: string | undefined): Record<string, string> | undefined {
  if (value === undefined) return undefined;
  const pairs = value.split(',').map((pair) => pair.split('='));
  for (const [key, mode] of pairs)
    if (!['trace', 'video', 'screenshots'].includes(key ?? '') || !['on', 'off', 'on-failure'].includes(mode ?? ''))
      throw new Error(`--evidence takes trace|video|screenshots=on|off|on-failure, comma-separated (got "${value}")`);
  return Object.fromEntries(pairs) as Record<string, string>;
}

const out = (line: string) => process.stdout.write(`${line}\n`);
const secs = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

export async function run(): Promise<void> {
  const argv = process.argv.slice(3);
  // `--report FILE`: the report of rounds kept earlier, measured again never.
  if (argv[0] === '--report' && argv[1]) {
    out(formatReport(JSON.parse(readFileSync(argv[1], 'utf8')) as Results));
    return;
  }
  const { own, rest } = splitArgs(argv);
  const workers = wholeNumber(own.workers, 2, 'workers');
  const rounds = wholeNumber(own.rounds, 3, 'rounds');
  const options = { ...parseArgs(rest), slots: workers };
  const label = own.label ?? path.basename(options.repo);
  const resultsFile = path.resolve(own.results ?? path.join(tmpdir(), `testrun-real-h2h-${label}-k${workers}.json`));
  const placed = placeProjectFile(options.repo, options.file);
  const project = readProject(options, placed.at);
  const before = gitStatus(options.repo);
  const work = mkdtempSync(path.join(tmpdir(), 'testrun-real-h2h-'));
  const results: Results = {
    label,
    workers,
    ...(own.evidence ? { evidence: own.evidence } : {}),
    machine: machineLine(),
    began: new Date().toISOString(),
    rounds: [],
  };
  const keep = () => writeFileSync(resultsFile, JSON.stringify(results, null, 2));

  out(`${label}: starting the private stack (${workers} worker slots), deploying, warming …`);
  const service = await startWarmService({
    ...stackSuite(options, project, placed),
    repo: options.repo,
    evidence: evidenceOf(own.evidence),
  });
  try {
    const playwright = async (): Promise<Round> => {
      const pw = await runPlaywrightSide({
        cwd: options.repo,
        config: options.config,
        selector: project.selector,
        env: options.env,
        work,
        workers,
      });
      if (pw.tests.length === 0) throw new Error(`playwright test reported no test (exit ${pw.exitCode}):\n${pw.tail}`);
      const tests = pw.tests.map((t) => ({
        key: testKey(options.repo, t.file, t.project, t.titlePath),
        status: t.outcome,
        durationMs: t.durationMs,
      }));
      const passed = tests.filter((t) => t.status === 'expected' || t.status === 'flaky').length;
      const since = (times: (number | undefined)[]) => {
        const known = times.filter((t): t is number => t !== undefined);
        return known.length && pw.spawnedAt !== undefined ? Math.min(...known) - pw.spawnedAt : undefined;
      };
      const firstTestMs = since(pw.tests.map((t) => t.startedAt));
      const firstResultMs = since(pw.tests.map((t) => t.endedAt));
      return { wallMs: pw.wallMs, cpuMs: pw.cpuMs, passed, tests, firstTestMs, firstResultMs };
    };
    const sides: Record<Side, () => Promise<Round>> = { playwright, service: service.round };
    for (let round = 1; round <= rounds; round++) {
      const order: Side[] = round % 2 === 1 ? ['playwright', 'service'] : ['service', 'playwright'];
      for (const side of order) {
        const load = loadavg()[0] ?? 0;
        const measured = await sides[side]();
        results.rounds.push({ round, side, load, at: new Date().toISOString(), ...measured });
        keep();
        const of = `${measured.passed} of ${measured.tests.length} passed`;
        out(
          `round ${round} ${side}: ${secs(measured.wallMs)} wall, ${secs(measured.cpuMs)} CPU, ${of}, load ${load.toFixed(1)}`,
        );
      }
    }
  } finally {
    await service.close();
    rmSync(work, { recursive: true, force: true });
  }
  out(`rounds kept in ${resultsFile}\n`);
  out(formatReport(results));
  const after = gitStatus(options.repo);
  if (before !== null && after !== before)
    throw new Error(`${options.repo} changed: git status was\n${before}and is now\n${after ?? ''}`);
}
