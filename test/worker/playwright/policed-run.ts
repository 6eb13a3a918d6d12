import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createTargetPolicy, parseTargetRules } from '@testrun/core/target-policy';
import {
  playwrightTestKey,
  runPlaywrightTests,
  type PlaywrightTestResult,
} from '../../../apps/worker/src/executors/playwright';
import { refusals } from '../../../apps/worker/src/executors/playwright/ready-attempt';
import { EgressProxy, type RunListener } from '../../../apps/worker/src/network/egress-proxy';
import { checkSandboxSupport } from '../../../apps/worker/src/sandbox';
import { countingListener } from '../sandbox/sandbox-harness';
import { freePort } from '../../support/processes';
import { serveSite, type Site } from './pw-harness';

/*
 * A fixture's specs run once for a test file, as a worker runs them: by the real runner in the real
 * sandbox, whose only way out is the worker's real egress proxy, with a policy that opens 127.0.0.1
 * (the shop, by the name shop.test) and refuses 127.0.0.2 (a loopback address).
 */

const RELAY_PORT = 3128;

/** What {@link usePolicedRun} serves and what its run found, once the file's `beforeAll` has run. */
export interface PolicedRun<Title extends string> {
  shop: Site;
  /** A listener on 127.0.0.2, which the policy refuses: it counts the connections that reach it. */
  refused: Awaited<ReturnType<typeof countingListener>>;
  resultOf: (title: Title) => PlaywrightTestResult | undefined;
}

/** The fixture test/fixtures/playwright/<fixture>, the tests `titles` of its `spec` (project `app`) and what `env` adds to their environment. */
export interface PolicedFixture<Title extends string> {
  fixture: string;
  spec: string;
  titles: readonly Title[];
  /** Variables of the fixture's own, made in the run's temporary directory `dir`. */
  env?: (dir: string) => Promise<Record<string, string>>;
}

/**
 * Runs the fixture's tests before the file's tests (its `beforeAll`) and stops all it started after
 * them. Their environment holds BLOCKED_URL (127.0.0.2, refused) and CLOSED_URL (an allowed port
 * where nothing listens) besides the fixture's own; evidence is off.
 */
export function usePolicedRun<Title extends string>(options: PolicedFixture<Title>): PolicedRun<Title> {
  const ref = (title: string) => ({ file: options.spec, project: 'app', titlePath: [title] });
  let base: string;
  let proxy: EgressProxy;
  let listener: RunListener;
  let results = new Map<string, PlaywrightTestResult>();
  const run = { resultOf: (title: Title) => results.get(playwrightTestKey(ref(title))) } as PolicedRun<Title>;
  beforeAll(async () => {
    expect(await checkSandboxSupport()).toBeNull();
    base = await mkdtemp(path.join(tmpdir(), `testrun-pw-${options.fixture}-`));
    run.shop = await serveSite();
    const own = (await options.env?.(base)) ?? {};
    run.refused = await countingListener('127.0.0.2');
    proxy = new EgressProxy({
      policy: createTargetPolicy({ allow: parseTargetRules('127.0.0.1/32') }),
      lookup: (host) => Promise.resolve(host === 'shop.test' ? [{ address: '127.0.0.1', family: 4 }] : []),
    });
    await proxy.start();
    const socketPath = path.join(base, 'egress.sock');
    listener = await proxy.openRunListener(options.fixture, { socketPath });
    const all = await runPlaywrightTests(
      {
        bundleDir: path.join(__dirname, '../../fixtures/playwright', options.fixture),
        configFile: 'e2e/playwright.config.js',
        scratchDir: await mkdtemp(path.join(base, 'scratch-')),
        network: { proxySocketPath: socketPath, port: RELAY_PORT },
        proxy: { server: `http://127.0.0.1:${RELAY_PORT}`, bypass: '<-loopback>' },
        baseUrl: `http://shop.test:${new URL(run.shop.origin).port}`,
        env: {
          ...own,
          BLOCKED_URL: `http://127.0.0.2:${run.refused.port}/secret`,
          CLOSED_URL: `http://127.0.0.1:${await freePort()}/`,
        },
        evidence: 'off',
        takeBlocked: refusals(listener),
        tests: options.titles.map(ref),
      },
      () => undefined,
    );
    results = new Map(all.map((result) => [result.key, result]));
  });
  afterAll(async () => {
    listener.close();
    await proxy.close();
    run.shop.server.close();
    run.refused.server.close();
    await rm(base, { recursive: true, force: true });
  });
  return run;
}
