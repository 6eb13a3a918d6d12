// One invocation of the Playwright Test runner (`playwright test`) on selected tests of a bundle,
// in a sandbox of their own; discover.ts is the other (`playwright test --list`).
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { isVideoAvailable } from '../../../run/video';
import { ResultCollector } from './collect';
import { playwrightTestKey } from './discover';
import { OPTIONS_FILE, wrapperOptionsText } from '../inside/protocol';
import { browserUnavailable } from './outcome';
import { layoutOf, playwrightEnv, prepareScratch, runPlaywrightCli, type Layout } from './sandboxed-cli';
import { placeBaselines } from './place-baselines';
import { LineTail } from './tail';
import { keepTransformCache, seedTransformCache } from '../caches/transform-cache';
import type { PlaywrightTestRef, PlaywrightTestResult, RunPlaywrightOptions } from './types';
import { SERVICE_VERSION_ONLY, takesTestList } from './versions';
import { WRAPPER_FILE, wrapperOptions, wrapperSource } from './wrapper-config';

/** A test whose project's browser is not Chromium: skipped without running. */
function unavailable(test: PlaywrightTestRef): PlaywrightTestResult {
  return {
    key: playwrightTestKey(test),
    ...browserUnavailable(test.browser ?? 'another browser'),
    durationMs: 0,
    steps: [],
    errors: [],
    attachments: [],
    stdout: '',
    stderr: '',
    attempts: [],
    blocked: [],
  };
}

/** The proxy's `host:port`, for the team's Node code (a proxy with credentials is the browser's alone). */
function egressOf(proxy: RunPlaywrightOptions['proxy']): string | undefined {
  if (!proxy || proxy.username !== undefined) return undefined;
  const url = new URL(proxy.server);
  return url.protocol === 'http:' && url.port !== '' ? `${url.hostname}:${url.port}` : undefined;
}

/** Writes the wrapper config, its options and the headers (for the fixture) into the scratch copy. */
async function writeRunFiles(
  options: RunPlaywrightOptions,
  tests: PlaywrightTestRef[],
  layout: Layout,
  selectBy: 'list' | 'title',
): Promise<string> {
  const state = path.join(options.scratchDir, '.testrun');
  const wrapper = path.posix.join(path.posix.dirname(options.configFile), WRAPPER_FILE);
  await writeFile(path.join(options.scratchDir, 'bundle', wrapper), wrapperSource(options.configFile, layout));
  const wrapped = wrapperOptions(options, tests, isVideoAvailable(), layout, selectBy);
  await writeFile(path.join(state, OPTIONS_FILE), wrapperOptionsText(wrapped));
  await writeFile(path.join(state, 'test-list.txt'), '');
  const headers = options.headers ?? {};
  if (options.baseUrl !== undefined && Object.keys(headers).length > 0) {
    const target = { origin: new URL(options.baseUrl).origin, headers };
    await writeFile(path.join(state, 'target-headers.json'), JSON.stringify(target), { mode: 0o600 });
  }
  return wrapper;
}

/**
 * Runs the selected tests of a bundle (normally one) in one sandbox with the Playwright Test runner
 * the bundle runs on (versions.ts), `workers` Playwright workers (default one), Chromium, and the team's config under
 * ours (wrapper-config.ts, inside/wrapper-config.ts).
 * Setup projects the tests depend on run first, as Playwright runs them. `onBegin` hears each
 * selected test start (its first attempt). Each selected test's result
 * reaches `onResult` as soon as its last attempt ends; the promise resolves with all of them once the
 * sandbox is gone. Aborting `signal` kills the sandbox: the results so far stay, the others are not
 * reported. Throws only when the machine cannot sandbox.
 */
export async function runPlaywrightTests(
  options: RunPlaywrightOptions,
  onResult: (result: PlaywrightTestResult) => void,
): Promise<PlaywrightTestResult[]> {
  const skipped = options.tests.filter((test) => test.browser !== undefined && test.browser !== 'chromium');
  const tests = options.tests.filter((test) => !skipped.includes(test));
  const early = skipped.map(unavailable);
  for (const result of early) onResult(result);
  if (tests.length === 0) return early;
  const { packages } = await (options.versions ?? SERVICE_VERSION_ONLY).forBundle(options.bundleDir);
  await prepareScratch(options.bundleDir, options.scratchDir, options.isolation, packages);
  await placeBaselines(path.join(options.scratchDir, 'bundle'), options.baselines ?? []);
  await seedTransformCache(options.transformCache, options.scratchDir);
  const layout = layoutOf(options.isolation ?? 'sandbox', options.scratchDir);
  const byList = takesTestList(packages);
  const wrapper = await writeRunFiles(options, tests, layout, byList ? 'list' : 'title');
  const collector = new ResultCollector(
    tests,
    options.scratchDir,
    onResult,
    options.takeBlocked ?? (() => []),
    options.onBegin,
    layout,
    options.onSetup,
    options.missingBaselines,
  );
  let listed = false;
  const tail = new LineTail(options.scratchDir, '.testrun/results.jsonl', (line) => {
    collector.line(line);
    if (listed || !collector.runnerBegan) return;
    listed = true;
    options.onStage?.('listed');
  });
  tail.start();
  options.onStage?.('sandbox');
  let ending: { limit: string | null; aborted: boolean; stderr: string };
  try {
    ending = await runPlaywrightCli(
      'run',
      { ...options, egressProxy: egressOf(options.proxy), packages },
      [
        'test',
        '--config',
        `${layout.bundle}/${wrapper}`,
        ...(byList ? ['--test-list', `${layout.state}/test-list.txt`] : []),
      ],
      playwrightEnv(options.env, layout),
      options.network ?? 'none',
    );
  } finally {
    await tail.stop();
  }
  await keepTransformCache(options.scratchDir, options.transformCache);
  return [...early, ...collector.finishRest(ending)];
}
